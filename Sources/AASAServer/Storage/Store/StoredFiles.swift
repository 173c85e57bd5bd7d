import Synchronization

/// The files of the stored domains a replica has read, with each file's digest (`domain_files.digest`, the SHA-256
/// the database computes), so that reading a domain again fetches only the files whose digest moved: a page write
/// costs each replica that page's bytes, not the domain's (``Store/fetchDomains(_:known:)``).
///
/// The bytes are the arrays the load shares with what it serves (a page that is not HTML is served from the very
/// buffer), so keeping them costs the raw copy of each HTML page of a stored domain. Whatever they share, the bytes
/// kept are bounded (``maximumBytes``, the server's `--pages-memory`): a domain whose files do not fit is not kept,
/// and is fetched whole when read again, so a domain that the pages budget refuses costs no memory here either. A
/// domain leaves when a listing no longer finds it or it has no files.
public final class StoredFiles: Sendable {
    /// One file as last fetched.
    struct File: Sendable {
        /// Its SHA-256 as the database computed it.
        var digest: [UInt8]
        var bytes: [UInt8]
    }

    /// The most bytes of files kept, all domains together.
    let maximumBytes: Int

    /// None yet; at most `maximumBytes` of files kept.
    public init(maximumBytes: Int = 1 << 30) {
        self.maximumBytes = maximumBytes
    }

    /// The files of each domain kept, and their bytes in all.
    private struct Kept {
        var domains: [String: [String: File]] = [:]
        var bytes = 0

        /// Drops `domain`.
        mutating func remove(_ domain: String) {
            guard let files = domains.removeValue(forKey: domain) else { return }
            bytes -= Self.size(files)
        }

        static func size(_ files: [String: File]) -> Int { files.values.reduce(0) { $0 + $1.bytes.count } }
    }

    private let kept = Mutex(Kept())
    private let fetched = Atomic<Int>(0)

    /// The bytes of the files of domains fetched from the database since the start (site.json not counted).
    var fetchedBytes: Int { fetched.load(ordering: .relaxed) }

    /// The bytes of `path` of `domain` when they are the ones whose digest is `digest`.
    func bytes(_ domain: String, _ path: String, digest: [UInt8]) -> [UInt8]? {
        kept.withLock { kept in
            guard let file = kept.domains[domain]?[path], file.digest == digest else { return nil }
            return file.bytes
        }
    }

    /// Keeps `files` as what `domain` holds now, of which `fetchedBytes` were fetched; the domain leaves when it has
    /// none, or when they do not fit in ``maximumBytes`` beside the other domains'.
    func keep(_ domain: String, _ files: [String: File], fetchedBytes: Int) {
        fetched.add(fetchedBytes, ordering: .relaxed)
        let size = Kept.size(files)
        kept.withLock { kept in
            kept.remove(domain)
            guard !files.isEmpty, size <= maximumBytes - kept.bytes else { return }
            kept.domains[domain] = files
            kept.bytes += size
        }
    }

    /// The bytes of files kept, all domains together.
    var keptBytes: Int { kept.withLock { $0.bytes } }

    /// Forgets every domain but those of `names`.
    func retain(_ names: Set<String>) {
        kept.withLock { kept in
            for domain in kept.domains.keys where !names.contains(domain) { kept.remove(domain) }
        }
    }

    /// Forgets `names`.
    func forget(_ names: some Sequence<String>) {
        kept.withLock { kept in for name in names { kept.remove(name) } }
    }
}
