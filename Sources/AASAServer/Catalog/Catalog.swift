import AASACore
import Foundation

/// The last good version of every domain and certificate folder, and what the most recent load found.
///
/// A load never replaces a good version with a broken one: a domain or certificate folder that fails
/// keeps what it had, and the failure is recorded for ``ServerStatus``. Persistent dictionaries, so the
/// routes and status handed to the listeners share them with the catalog, and the next load changes only
/// what it read.
struct Catalog: Sendable {
    /// What each domain serves: its newest clean version.
    var published = PersistentDictionary<String, PublishedDomain>()
    /// When each published domain's served version was loaded (first: reloads that serve the same bytes keep it).
    var domainLoadTimes = PersistentDictionary<String, Date>()
    /// The most recent load result of every domain folder.
    var loaded = PersistentDictionary<String, LoadedDomain>()
    /// Domains whose folder disappeared while they were published, and when that was first seen: they keep being
    /// served until ``ServerConfiguration/removalGrace`` has passed.
    var removedSince: [String: Date] = [:]
    /// What the certificate folder serves.
    var certificates = CertificateCatalog()
    /// When the first load started, and what the most recent load did: with the rest of the catalog, its status.
    var started: Date?
    var lastReload: ServerStatus.LoadOutcome?
    /// The last change of each domain that changed since the start: when, and what it did to URLs.
    var lastChanges = PersistentDictionary<String, DomainChange>()
    /// The shard the server is, for the status.
    var shard: Shard?
    /// The errors and warnings of each domain folder that has any, from its most recent load.
    var domainFindings = PersistentDictionary<String, [Diagnostic]>()

    /// Takes in a fresh load of domain folders: clean domains replace their published version, broken ones keep
    /// theirs, and folders that disappeared are unpublished once they have been gone for `removalGrace` (until
    /// then they keep being served); a domain whose new version serves what its published one does (``PublishedDomain``
    /// is `==`) keeps it. With `complete`, `loaded` is every folder, and every domain missing from it
    /// disappeared; otherwise the folders that disappeared are `absent`, and every other domain is as it was.
    /// Returns the domains whose served bytes changed, and each new version to compare with the one it replaced.
    mutating func apply(
        _ loaded: [LoadedDomain], absent: [String] = [], complete: Bool = true, at now: Date,
        removalGrace: Duration = .zero
    ) -> (changed: [String], compare: [ChangeComparer.Job]) {
        if self.loaded.isEmpty, published.isEmpty, removedSince.isEmpty {
            // A start: nothing to compare with, and the maps of every domain are built side by side.
            let (all, fresh) = concurrently({ PersistentDictionary(loaded, keyedBy: \.domain) }) { _ in
                let fresh = loaded.compactMap { $0.published }
                published = PersistentDictionary(fresh, keyedBy: \.domain)
                domainLoadTimes = PersistentDictionary(fresh.lazy.map { ($0.domain, now) })
                return fresh.map(\.domain)
            }
            self.loaded = all
            return (fresh.sorted(), [])
        }
        var changed: [String] = []
        var replaced: [(PublishedDomain, PublishedDomain)] = []
        // A reload that adds many domains at once: room for them up front, not a redistribution at each
        // doubling.
        self.loaded.reserveCapacity(forKeys: loaded.lazy.map(\.domain))
        published.reserveCapacity(forKeys: loaded.lazy.map(\.domain))
        domainLoadTimes.reserveCapacity(forKeys: loaded.lazy.map(\.domain))
        for domain in loaded {
            self.loaded[domain.domain] = domain
            removedSince[domain.domain] = nil
            // A broken version keeps the last good one.
            guard let fresh = domain.published else { continue }
            let old = published[domain.domain]
            if old == fresh { continue }
            published[domain.domain] = fresh
            // `lastGoodLoad` says since when a domain serves what it serves, not when a reload last read it.
            domainLoadTimes[domain.domain] = now
            changed.append(domain.domain)
            if let old { replaced.append((old, fresh)) }
        }
        var gone = Set(absent)
        if complete {
            let present = Set(loaded.map(\.domain))
            gone = Set(self.loaded.keys.filter { !present.contains($0) })
                .union(removedSince.keys.filter { !present.contains($0) })
        }
        for name in gone {
            self.loaded[name] = nil
            guard published[name] != nil else { continue }
            let since = removedSince[name] ?? now
            if now.timeIntervalSince(since) < removalGrace.timeInterval {
                removedSince[name] = since
            } else {
                removedSince[name] = nil
                published[name] = nil
                domainLoadTimes[name] = nil
                lastChanges[name] = nil
                changed.append(name)
            }
        }
        // A job keeps only what the comparison reads: two versions equal then (new pages, a new signature of the same
        // file) are not queued, so a tenant's page writes cost the comparer's one thread nothing.
        let jobs = replaced.map { ChangeComparer.Job(old: $0.0, new: $0.1, time: now) }.filter { $0.old != $0.new }
        return (changed.sorted(), jobs)
    }

    /// Takes in the comparison of the version of `job`: kept as the domain's last change while that version is
    /// the one served (a later version, or the domain's removal, makes it moot), with the status brought up to
    /// date. Returns whether it was kept.
    mutating func record(_ job: ChangeComparer.Job, _ diff: DomainDiff) -> Bool {
        let domain = job.new.domain
        guard published[domain] != nil, domainLoadTimes[domain] == job.time else { return false }
        lastChanges[domain] = DomainChange(time: job.time, diff: diff)
        return true
    }

    /// Brings the status up to date after a load at `now` that found `diagnostics` (`failed`: the config folder
    /// could not be listed), whose domain folders were `domains` (every one when `nil`). The load's outcome counts
    /// every finding still standing, not only those of the folders it read: a reload of one folder reports the
    /// errors of the others as a reload of all would.
    mutating func updateStatus(
        domains: [String]?, started: Date, trigger: ReloadTrigger, at now: Date, diagnostics: [Diagnostic],
        failed: Bool
    ) {
        if domains == nil { domainFindings = PersistentDictionary() }
        for name in domains ?? loaded.keys {
            let standing = loaded.withValue(for: name) { $0.diagnostics.filter { $0.severity != .note } } ?? []
            domainFindings[name] = standing.isEmpty ? nil : standing
        }
        let standing = domainFindings.values.flatMap { $0 } + certificates.findings.values.flatMap { $0 }
        // Findings of no folder (the development CA's key, a refused certificate table) are this load's.
        let described = Set(standing.map(\.description))
        let general = diagnostics.filter { !described.contains($0.description) }
        let errors = failed ? diagnostics.errors : standing.errors + general.errors
        let result: ServerStatus.LoadOutcome.Result = failed ? .failed : errors.isEmpty ? .ok : .errors
        self.started = self.started ?? started
        lastReload = ServerStatus.LoadOutcome(
            time: now, trigger: trigger, result: result, errors: errors, warnings: standing.warnings + general.warnings)
    }

    /// What is served and what the last load found (`/status`, `/readyz`, `/metrics`): the catalog as it is, with the
    /// outcome of the most recent load; `nil` before the first. Made on each read from what the catalog holds (its
    /// maps are shared, not copied), so it cannot fall behind it.
    var status: ServerStatus? {
        guard let started, let lastReload else { return nil }
        var status = ServerStatus(
            started: started, lastReload: lastReload,
            catalog: ServerStatus.Source(
                loaded: loaded, published: published, domainLoadTimes: domainLoadTimes, removedSince: removedSince,
                lastChanges: lastChanges, certificates: certificates, domainFindings: domainFindings))
        status.shard = shard
        return status
    }
}
