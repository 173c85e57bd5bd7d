public import AASACore
public import Foundation
import Synchronization

/// What the server is serving and what went wrong lately: the admin listener's `GET /status`.
///
/// An immutable value built at start and after every reload, so operators see why an edit is not live
/// (the domain keeps its last good version) without reading the logs.
public struct ServerStatus: Sendable {
    /// One domain folder.
    public struct DomainState: Sendable {
        /// The host name (the folder's name).
        public var domain: String
        /// Whether a version of the domain is served (the new one, or the last good one when the new one fails).
        public var published: Bool
        /// When the version served was first loaded (a reload serving the same bytes keeps it); `nil` when no
        /// version ever loaded cleanly.
        public var lastGoodLoad: Date?
        /// The errors of the most recent load, compiler-style; empty when it loaded cleanly.
        public var errors: [Diagnostic]
        /// When the domain's folder was found gone; it is served until the removal grace has passed.
        public var removedSince: Date?
        /// Where its certificate comes from and stands; `nil` without an HTTPS listener.
        public var certificate: DomainCertificateStatus?
        /// What its most recent new version did to URLs; `nil` when it has not changed since the start.
        public var lastChange: DomainChange?
        /// The certificate folder whose certificate covers it; `nil` when none does (or without HTTPS).
        public var certificateFolder: String?

        /// Where the domain stands, as `/status` and `/metrics` (`aasa_domains{state}`) say it.
        public enum State: String, Sendable, CaseIterable {
            /// Its newest version is served.
            case published
            /// Its newest version failed; its last good version is served.
            case stale
            /// Nothing is served for it: no version ever loaded cleanly.
            case failed
            /// Its folder disappeared; its last version is served until the removal grace has passed.
            case removing
        }

        /// Where the domain stands.
        public var state: State {
            if removedSince != nil { return .removing }
            guard published else { return .failed }
            return errors.isEmpty ? .published : .stale
        }
    }

    /// One certificate folder.
    public struct CertificateState: Sendable {
        /// The folder name.
        public var folder: String
        /// The names the served certificate covers (empty when none is served).
        public var names: [String]
        /// Whether a certificate from this folder is served (the new one, or the last good one).
        public var serving: Bool
        /// SHA-256 fingerprint of the served leaf, as `openssl x509 -fingerprint -sha256` prints it.
        public var fingerprint: String?
        /// When the served leaf expires.
        public var notAfter: Date?
        /// When the served certificate was loaded.
        public var lastGoodLoad: Date?
        /// The errors of the most recent load; empty when it loaded cleanly.
        public var errors: [Diagnostic]
        /// The warnings of the most recent load, e.g. a private key other users can read.
        public var warnings: [Diagnostic] = []
    }

    /// How the most recent start or reload went.
    public struct LoadOutcome: Sendable {
        /// How a load ended.
        public enum Result: String, Sendable {
            /// Everything loaded cleanly.
            case ok
            /// Some domain or certificate failed; each keeps its last good version.
            case errors
            /// Nothing could be loaded (e.g. the config folder is gone); everything served stays as it was.
            case failed
        }

        /// When it finished.
        public var time: Date
        /// What started it.
        public var trigger: ReloadTrigger
        /// How it ended.
        public var result: Result
        /// Every error it found, compiler-style.
        public var errors: [Diagnostic]
        /// Every warning it found (domains, certificates, the development CA's key), compiler-style.
        public var warnings: [Diagnostic] = []
    }

    /// One start or reload, for the history `/status` keeps (``ReloadHistory/capacity``).
    public struct ReloadRecord: Sendable {
        /// When it finished.
        public var time: Date
        /// What started it.
        public var trigger: ReloadTrigger
        /// How it ended.
        public var result: LoadOutcome.Result
        /// How long it took, from the first file read to the new tables served.
        public var seconds: Double
        /// How many errors it found.
        public var errors: Int
        /// How many warnings it found.
        public var warnings: Int
        /// The domains it published a new version of, sorted.
        public var changed: [String]
    }

    /// When the server started.
    public var started: Date
    /// The most recent start or reload.
    public var lastReload: LoadOutcome
    /// The shard this process is (`serve --shard`), `nil` when it serves every domain.
    public var shard: Shard?
    /// What the domain states are read from: a status is a view of the load it describes, sharing the catalog's
    /// dictionaries rather than keeping a state per domain beside them.
    let catalog: Source

    /// The states, sorted, once made: the first request after a load makes them, the others (each page of
    /// `/status`, `/metrics`, `/readyz`) read them. Shared by every copy of this status.
    private let made = Made()

    private final class Made: Sendable {
        let states = Mutex<(domains: [DomainState], certificates: [CertificateState])?>(nil)
    }

    /// Every domain folder, sorted by name.
    public var domains: [DomainState] { madeStates.domains }
    /// Every certificate folder, sorted by name (empty when HTTPS is off).
    public var certificates: [CertificateState] { madeStates.certificates }
    /// The domain folders nothing is served for, sorted by name: what `/readyz` waits for. Found from the catalog
    /// without making every domain's state.
    public var unpublishedDomains: [DomainState] {
        catalog.loaded.keys.filter { !catalog.published.contains($0) }.sorted().compactMap(domainState)
    }
    /// The number of domain folders.
    public var domainCount: Int { catalog.loaded.count + catalog.removedSince.count }

    private var madeStates: (domains: [DomainState], certificates: [CertificateState]) {
        if let states = made.states.withLock({ $0 }) { return states }
        // Made outside the lock: two first requests at once each make the same states, and one is kept.
        let states = (
            domains: (catalog.loaded.keys + catalog.removedSince.keys).compactMap(domainState).sorted {
                $0.domain < $1.domain
            },
            certificates: catalog.certificates.states.sorted { $0.folder < $1.folder }
        )
        return made.states.withLock { kept in
            if let kept { return kept }
            kept = states
            return states
        }
    }

    /// The state of the domain folder `name`, if there is one.
    public func domainState(_ name: String) -> DomainState? {
        if catalog.loaded.contains(name) {
            return DomainState(
                domain: name, published: catalog.published.contains(name), lastGoodLoad: catalog.domainLoadTimes[name],
                errors: catalog.domainFindings[name]?.errors ?? [],
                certificate: catalog.certificates.domainStatus(name, at: lastReload.time),
                lastChange: catalog.lastChanges[name], certificateFolder: catalog.certificates.coveringFolder(of: name))
        }
        return catalog.removedSince[name].map { since in
            DomainState(
                domain: name, published: true, lastGoodLoad: catalog.domainLoadTimes[name], errors: [],
                removedSince: since)
        }
    }

    /// The parts of a ``Catalog`` the domain states are made of, as of one load.
    struct Source: Sendable {
        var loaded: PersistentDictionary<String, LoadedDomain>
        var published: PersistentDictionary<String, PublishedDomain>
        var domainLoadTimes: PersistentDictionary<String, Date>
        var removedSince: [String: Date]
        var lastChanges: PersistentDictionary<String, DomainChange>
        var certificates: CertificateCatalog
        /// The errors and warnings of each domain folder that has any.
        var domainFindings: PersistentDictionary<String, [Diagnostic]>
    }

    init(started: Date, lastReload: LoadOutcome, catalog: Source) {
        self.started = started
        self.lastReload = lastReload
        self.catalog = catalog
    }

    /// `2025-01-31T12:00:00.123Z`: milliseconds, because reloads can follow each other within a second.
    static func makeFormatter() -> ISO8601DateFormatter {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter
    }
}

/// What made the server (re)load its configuration and certificates.
public enum ReloadTrigger: String, Sendable {
    /// The initial load in ``Server/start()``.
    case start
    /// SIGHUP.
    case signal
    /// The config or certificate folder changed (``ConfigWatcher``).
    case fileChange = "file-change"
    /// A direct call to ``Server/reload(trigger:)``.
    case manual
    /// The removal grace of a domain whose folder disappeared has passed.
    case removalGrace = "removal-grace"
    /// ACME wrote a new certificate (``ACMEManager``).
    case certificateIssued = "certificate-issued"
    /// The store announced changes (``StoreFollower``).
    case storeChange = "store-change"
}
