import Synchronization

/// The files of the stored domains a replica has read, with each file's digest (`domain_files.digest`, the SHA-256
/// the database computes), so that reading a domain again fetches only the files whose digest moved: a page write
/// costs each replica that page's bytes, not the domain's (``Store/fetchDomains(_:known:)``).
///
/// The bytes are the arrays the load shares with what it serves (a page that is not HTML is served from the very
/// buffer), so keeping them costs the raw copy of each HTML page of a stored domain, within the pages' caps. A
/// domain leaves when a listing no longer finds it or it has no files.
public final class StoredFiles: Sendable {
    /// One file as last fetched.
    struct File: Sendable {
        /// Its SHA-256 as the database computed it.
        var digest: [UInt8]
        var bytes: [UInt8]
    }

    /// None yet.
    public init() {}

    private let domains = Mutex<[String: [String: File]]>([:])
    private let fetched = Atomic<Int>(0)

    /// The bytes of the files of domains fetched from the database since the start (site.json not counted).
    var fetchedBytes: Int { fetched.load(ordering: .relaxed) }

    /// The bytes of `path` of `domain` when they are the ones whose digest is `digest`.
    func bytes(_ domain: String, _ path: String, digest: [UInt8]) -> [UInt8]? {
        domains.withLock { domains in
            guard let file = domains[domain]?[path], file.digest == digest else { return nil }
            return file.bytes
        }
    }

    /// Keeps `files` as what `domain` holds now (none: the domain leaves), of which `fetchedBytes` were fetched.
    func keep(_ domain: String, _ files: [String: File], fetchedBytes: Int) {
        fetched.add(fetchedBytes, ordering: .relaxed)
        domains.withLock { $0[domain] = files.isEmpty ? nil : files }
    }

    /// Forgets every domain but those of `names`.
    func retain(_ names: Set<String>) {
        domains.withLock { domains in domains = domains.filter { names.contains($0.key) } }
    }

    /// Forgets `names`.
    func forget(_ names: some Sequence<String>) {
        domains.withLock { domains in for name in names { domains[name] = nil } }
    }
}
