import AASACore
import AASACurl
public import Foundation
public import Logging
import Synchronization

/// The server's background check of Apple's CDN and Google's Digital Asset Links API (`serve
/// --cdn-check-interval`): every served domain is checked once per interval (at a point spread over it, so
/// thousands of domains are not asked at once), and again a few minutes after a reload changed it. One request at
/// a time, at most ``requestsPerSecond``, on a thread of its own: a slow or dead CDN delays the checks, never the
/// serving.
public final class CDNMonitor: Service, Sendable {
    /// How the monitor checks.
    public struct Settings: Sendable {
        /// How often each domain is checked.
        public var interval: Duration = .seconds(6 * 3600)
        /// How long after a reload changed a domain it is checked (the CDN needs time to fetch the new file).
        public var afterChange: Duration = .seconds(300)
        /// Apple's CDN base URL, Google's `statements:list` URL.
        public var appleBase = AppleCDNCheck.defaultBase
        public var googleBase = GoogleDALCheck.defaultBase
        /// PEM file of the only CAs to trust; `nil`: the system's.
        public var caFile: String?
        /// The most requests per second, whatever the number of domains.
        public var requestsPerSecond = 2.0

        /// The defaults: every six hours, Apple's and Google's real endpoints.
        public init() {}
    }

    /// What one domain serves now, to compare with.
    public typealias Served = CDNComparison.Served

    /// The latest observations of each domain.
    public var observations: [String: (apple: CDNObservation?, google: CDNObservation?)] {
        observed.withLock { $0 }
    }

    private let settings: Settings
    private let comparison: CDNComparison
    private let logger: Logger
    private let served: @Sendable (String) -> Served?
    /// The domains served when the check starts (``start()``), if the owner says.
    private let servedAtStart: (@Sendable () -> [String])?
    /// Each served domain's schedule, and the thread that checks each one when it is due.
    private let queue: DueQueue<String, Entry>
    /// What the checks found, kept apart from the schedule: a domain costs a few bytes until it is checked. Taken
    /// inside the queue's lock where both change, never the other way round.
    private let observed = Mutex<[String: (apple: CDNObservation?, google: CDNObservation?)]>([:])

    private struct Entry: Sendable {
        var due: Date
        /// Since when the domain's served files are the current ones: the start, or the reload that changed them.
        var publishedSince: Date
    }

    /// A monitor that reads what a domain serves through `served` (`nil`: not served now), and at ``start()`` the
    /// domains served then through `domains` (without it, the domains of ``update(domains:changed:now:)``).
    public init(
        settings: Settings, logger: Logger, domains: (@Sendable () -> [String])? = nil,
        served: @escaping @Sendable (String) -> Served?
    ) {
        self.settings = settings
        self.logger = logger
        self.served = served
        servedAtStart = domains
        var client = HTTPClient(trustAnchors: settings.caFile)
        client.timeout = .seconds(20)
        client.userAgent = "aasa-server (cdn check)"
        var comparison = CDNComparison(client: client)
        comparison.appleBase = settings.appleBase
        comparison.googleBase = settings.googleBase
        self.comparison = comparison
        let interval = settings.interval.timeInterval
        // Taken: checked again an interval later, give or take a tenth, so checks made together drift apart.
        queue = DueQueue(
            threadNames: ["cdn-check"], logger: logger, due: { $0.due },
            claim: { _, entry, now in
                entry.due = now.addingTimeInterval(interval * (0.9 + 0.2 * Double.random(in: 0..<1)))
            })
    }

    deinit {
        queue.stop()
    }

    /// Sets the served domains: new ones are scheduled at a point of the interval fixed per domain, gone ones
    /// dropped; `changed` ones are checked ``Settings/afterChange`` from `now`.
    public func update(domains: [String], changed: [String], now: Date = Date()) {
        let changed = Set(changed)
        queue.withItems { entries in
            var next: [String: Entry] = [:]
            for domain in domains {
                next[domain] = schedule(entries[domain], domain, changed: changed.contains(domain), now: now)
            }
            entries = next
            observed.withLock { observed in observed = observed.filter { next[$0.key] != nil } }
        }
    }

    /// Takes in a reload without a walk over every domain: each domain of `changed` (new, with a new version, or
    /// gone, as `isServed` says) is checked ``Settings/afterChange`` from `now`, or dropped; every other domain keeps
    /// its schedule.
    public func update(changed: [String], isServed: (String) -> Bool, now: Date = Date()) {
        queue.withItems { entries in
            for domain in changed {
                if isServed(domain) {
                    entries[domain] = schedule(entries[domain], domain, changed: true, now: now)
                } else {
                    entries[domain] = nil
                    _ = observed.withLock { $0.removeValue(forKey: domain) }
                }
            }
        }
    }

    /// `domain`'s entry from now on: its `current` schedule, or a new one at a point of the interval fixed per domain
    /// (starts do not bunch the checks up), brought forward to ``Settings/afterChange`` from `now` when it `changed`.
    private func schedule(_ current: Entry?, _ domain: String, changed: Bool, now: Date) -> Entry {
        var entry =
            current
            ?? Entry(
                due: now.addingTimeInterval(
                    settings.interval.timeInterval * RenewalSchedule.spread(domain, Date(timeIntervalSince1970: 0))),
                publishedSince: now)
        if changed {
            entry.due = min(entry.due, now.addingTimeInterval(settings.afterChange.timeInterval))
            entry.publishedSince = now
        }
        return entry
    }

    /// Schedules the domains served now (the `domains` of the init), and starts the checking thread.
    public func start() {
        if let servedAtStart { update(domains: servedAtStart(), changed: []) }
        queue.start { [weak self] domain in self?.check(domain) }
    }

    /// The kernel's id of the running thread, for tests that check it is gone after ``stop()``.
    var threadIDs: [Int32] { queue.threadIDs }

    /// Stops the checking thread and returns once it has ended, after the check in progress.
    public func stop() {
        queue.stop()
    }

    /// Checks `domain`, then keeps to ``Settings/requestsPerSecond`` before the next check.
    private func check(_ domain: String) {
        let spacing = 1 / max(settings.requestsPerSecond, 0.01)
        let started = Date()
        guard var reference = served(domain) else { return }
        reference.since = queue.reading { $0[domain]?.publishedSince }
        var comparison = self.comparison
        comparison.google = reference.assetLinks != nil
        let result = comparison.compare(domain, served: reference)
        record(result, at: started)
        // Each check is one or two requests: keep to the rate.
        let requests = result.google == nil ? 1.0 : 2.0
        queue.pause(until: started.addingTimeInterval(spacing * requests))
    }

    private func record(_ result: CDNComparison.Result, at time: Date) {
        let previous = queue.reading { entries in
            observed.withLock { observed in
                let previous = observed[result.domain]
                if entries[result.domain] != nil { observed[result.domain] = (result.apple, result.google) }
                return previous
            }
        }
        // A change to stale or failed is logged once, not at every check; a first check only when it is one.
        for (old, new) in [(previous?.apple, Optional(result.apple)), (previous?.google, result.google)] {
            guard let new, new.state != old?.state else { continue }
            switch new.state {
            case .stale, .failed, .unreachable:
                logger.warning("CDN check", metadata: ["domain": "\(result.domain)", "result": "\(new.summary)"])
            case .inSync, .absent:
                if old != nil {
                    logger.info("CDN check", metadata: ["domain": "\(result.domain)", "result": "\(new.summary)"])
                }
            }
        }
    }
}
