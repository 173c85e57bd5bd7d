import AASACore
import AASACurl
public import Foundation
public import Logging

/// The server's background check of Apple's CDN and Google's Digital Asset Links API (`serve
/// --cdn-check-interval`): every served domain is checked once per interval (at a point spread over it, so
/// thousands of domains are not asked at once), and again a few minutes after a reload changed it. One request at
/// a time, at most ``requestsPerSecond``, on a thread of its own: a slow or dead CDN delays the checks, never the
/// serving.
public final class CDNMonitor: @unchecked Sendable {
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
        condition.lock()
        defer { condition.unlock() }
        return observed
    }

    private let settings: Settings
    private let comparison: CDNComparison
    private let logger: Logger
    private let served: @Sendable (String) -> Served?
    private let condition = NSCondition()
    /// Guarded by ``condition``: each served domain's schedule, and what its checks found (kept apart: a domain
    /// costs a few bytes until it is checked).
    private var entries: [String: Entry] = [:]
    private var observed: [String: (apple: CDNObservation?, google: CDNObservation?)] = [:]
    private var running = false

    private struct Entry {
        var due: Date
        /// Since when the domain's served files are the current ones: the start, or the reload that changed them.
        var publishedSince: Date
    }

    /// A monitor that reads what a domain serves through `served` (`nil`: not served now).
    public init(settings: Settings, logger: Logger, served: @escaping @Sendable (String) -> Served?) {
        self.settings = settings
        self.logger = logger
        self.served = served
        var client = HTTPClient(trustAnchors: settings.caFile)
        client.timeout = .seconds(20)
        client.userAgent = "aasa-server (cdn check)"
        var comparison = CDNComparison(client: client)
        comparison.appleBase = settings.appleBase
        comparison.googleBase = settings.googleBase
        self.comparison = comparison
    }

    /// Sets the served domains: new ones are scheduled at a point of the interval fixed per domain, gone ones
    /// dropped; `changed` ones are checked ``Settings/afterChange`` from `now`.
    public func update(domains: [String], changed: [String], now: Date = Date()) {
        let changed = Set(changed)
        condition.lock()
        var next: [String: Entry] = [:]
        for domain in domains {
            next[domain] = schedule(domain, changed: changed.contains(domain), now: now)
        }
        entries = next
        observed = observed.filter { next[$0.key] != nil }
        condition.unlock()
        condition.broadcast()
    }

    /// Takes in a reload without a walk over every domain: each domain of `changed` (new, with a new version, or
    /// gone, as `isServed` says) is checked ``Settings/afterChange`` from `now`, or dropped; every other domain keeps
    /// its schedule.
    public func update(changed: [String], isServed: (String) -> Bool, now: Date = Date()) {
        condition.lock()
        for domain in changed {
            if isServed(domain) {
                entries[domain] = schedule(domain, changed: true, now: now)
            } else {
                entries[domain] = nil
                observed[domain] = nil
            }
        }
        condition.unlock()
        condition.broadcast()
    }

    /// `domain`'s entry from now on: its schedule, a new one at a point of the interval fixed per domain (starts
    /// do not bunch the checks up), brought forward to ``Settings/afterChange`` from `now` when it `changed`. Called
    /// with the condition's lock held.
    private func schedule(_ domain: String, changed: Bool, now: Date) -> Entry {
        var entry =
            entries[domain]
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

    /// Starts the checking thread.
    public func start() {
        condition.lock()
        let start = !running
        running = true
        condition.unlock()
        guard start else { return }
        let thread = Thread { [self] in work() }
        thread.name = "cdn-check"
        thread.start()
    }

    /// Stops the checking thread after the check in progress.
    public func stop() {
        condition.lock()
        running = false
        condition.unlock()
        condition.broadcast()
    }

    private func work() {
        let spacing = 1 / max(settings.requestsPerSecond, 0.01)
        while let domain = nextDue() {
            let started = Date()
            guard var reference = served(domain) else { continue }
            reference.since = condition.locked { entries[domain]?.publishedSince }
            var comparison = self.comparison
            comparison.google = reference.assetLinks != nil
            let result = comparison.compare(domain, served: reference)
            record(result, at: started)
            // Each check is one or two requests: keep to the rate.
            let requests = result.google == nil ? 1.0 : 2.0
            let wait = spacing * requests - Date().timeIntervalSince(started)
            if wait > 0 { Thread.sleep(forTimeInterval: wait) }
        }
    }

    /// Waits for the earliest due domain and schedules its next check; `nil` once stopped.
    private func nextDue() -> String? {
        condition.lock()
        defer { condition.unlock() }
        while running {
            guard let (domain, entry) = entries.min(by: { $0.value.due < $1.value.due }) else {
                condition.wait()
                continue
            }
            if entry.due > Date() {
                _ = condition.wait(until: entry.due)
                continue
            }
            entries[domain]?.due = Date().addingTimeInterval(
                settings.interval.timeInterval * (0.9 + 0.2 * Double.random(in: 0..<1)))
            return domain
        }
        return nil
    }

    private func record(_ result: CDNComparison.Result, at time: Date) {
        condition.lock()
        let previous = observed[result.domain]
        if entries[result.domain] != nil { observed[result.domain] = (result.apple, result.google) }
        condition.unlock()
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
