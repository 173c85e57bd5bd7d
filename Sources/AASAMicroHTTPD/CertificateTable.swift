internal import AASACore

/// The certificates a TLS listener serves, chosen per connection by the client's SNI.
///
/// Immutable: to change certificates, make a new table (``updating(removing:adding:defaultID:)`` makes one from
/// this one, sharing every name its changes do not touch) and pass it to ``HTTPListener/replaceCertificates(_:)``,
/// which swaps it in atomically, so a handshake always sees one complete table. Each table stays alive while any
/// connection accepted under it is open (the connection retains it), so a replaced table is freed once its last
/// connection closes.
public final class CertificateTable: Sendable {
    /// One certificate chain, its key, and the names it is served for: as PEM to import when the table is built,
    /// or as a credential imported before.
    public struct Entry: Sendable {
        /// What names the entry in the table (the certificate folder it comes from); `nil`: its position in the
        /// entries the table is made with.
        public var id: String?
        /// Server names (`a.example`, or `*.example` for one label under it) that select this entry.
        public var names: [String]
        /// PEM chain, leaf first (a certbot `fullchain.pem`); empty in an entry made from a credential.
        public var certificateChainPEM: [UInt8]
        /// PEM private key of the leaf (a certbot `privkey.pem`); empty in an entry made from a credential.
        public var privateKeyPEM: [UInt8]
        /// An OCSP response for the leaf to staple, or `nil` (a credential carries its own).
        public var staple: OCSPStaple?
        /// The credential imported before, which the table serves instead of importing the PEM.
        public let credential: GnuTLSCredential?
        /// The certificate checked before, which the table imports when a handshake first asks for one of its names
        /// and keeps in its ``CredentialCache``.
        public let deferred: DeferredCredential?
        /// Whether the entry serves its names only while no other entry covers them (exactly or by a wildcard):
        /// a stand-in, such as the temporary certificate of a domain waiting for its first ACME certificate.
        public var isFallback = false

        /// An entry whose chain and key are imported when the table is built.
        public init(
            id: String? = nil, names: [String], certificateChainPEM: [UInt8], privateKeyPEM: [UInt8],
            staple: OCSPStaple? = nil
        ) {
            self.id = id
            self.names = names
            self.certificateChainPEM = certificateChainPEM
            self.privateKeyPEM = privateKeyPEM
            self.staple = staple
            credential = nil
            deferred = nil
        }

        /// An entry served by `credential`, imported before: a table rebuilt for one changed certificate among
        /// thousands imports nothing else, and a server need not keep any certificate's bytes to rebuild it.
        public init(id: String? = nil, names: [String], credential: GnuTLSCredential, isFallback: Bool = false) {
            self.id = id
            self.isFallback = isFallback
            self.names = names
            certificateChainPEM = []
            privateKeyPEM = []
            staple = nil
            self.credential = credential
            deferred = nil
        }

        /// An entry served by `deferred`, imported when a handshake first asks for one of `names` (through the
        /// table's ``CredentialCache``): a server with a million certificates imports only those asked for.
        public init(id: String, names: [String], deferred: DeferredCredential, isFallback: Bool = false) {
            self.id = id
            self.isFallback = isFallback
            self.names = names
            certificateChainPEM = []
            privateKeyPEM = []
            staple = nil
            credential = nil
            self.deferred = deferred
        }
    }

    /// What serves an entry: a credential imported when the entry was made, or one imported on first use.
    fileprivate enum Served: Sendable {
        case imported(GnuTLSCredential)
        case deferred(DeferredCredential)
    }

    /// A DER OCSP response stapled to handshakes (RFC 6066 `status_request`) until it expires.
    public struct OCSPStaple: Sendable, Hashable {
        /// The DER-encoded OCSPResponse, as `openssl ocsp -respout` writes it.
        public var response: [UInt8]
        /// When to stop stapling it (its `nextUpdate`), in seconds since 1970.
        public var expires: Int

        /// Creates a staple; the caller has checked that it answers for the entry's leaf.
        public init(response: [UInt8], expires: Int) {
            self.response = response
            self.expires = expires
        }
    }

    /// One entry as the table keeps it.
    fileprivate struct Stored: Sendable {
        /// Its canonical names, to take them out when the entry goes.
        var names: [String]
        var credential: Served
        var isFallback: Bool
    }

    /// An entry listing a name, among the others listing it in order (fallbacks last, then by id): the first is
    /// served.
    fileprivate struct Candidate: Sendable {
        var id: String
        var credential: Served
        var isFallback: Bool

        /// Whether this candidate is served before `other`.
        func precedes(_ other: Candidate) -> Bool {
            isFallback != other.isFallback ? !isFallback : id < other.id
        }
    }

    /// The entries listing one name, in the order they are served: nearly every name has one, kept without an array
    /// (an array each would add about 6 MB to a table of 100,000 names).
    fileprivate enum Candidates: Sendable {
        case one(Candidate)
        case many([Candidate])

        /// The candidate served.
        var first: Candidate {
            switch self {
            case .one(let candidate): candidate
            case .many(let candidates): candidates[0]
            }
        }

        /// These with `candidate` in its place among them.
        func inserting(_ candidate: Candidate) -> Candidates {
            var list: [Candidate]
            switch self {
            case .one(let existing): list = [existing]
            case .many(let candidates): list = candidates
            }
            list.insert(candidate, at: list.firstIndex { candidate.precedes($0) } ?? list.endIndex)
            return .many(list)
        }

        /// These without the entry `id`; `nil` when none is left.
        func removing(_ id: String) -> Candidates? {
            switch self {
            case .one(let candidate):
                return candidate.id == id ? nil : self
            case .many(let candidates):
                let left = candidates.filter { $0.id != id }
                return left.count > 1 ? .many(left) : left.first.map(Candidates.one)
            }
        }
    }

    /// The entries by id, and the names that select them.
    fileprivate struct Contents: Sendable {
        var entries = PersistentDictionary<String, Stored>()
        /// Exact names, and the parents of `*.` names, to the entries listing them, in the order they are served.
        var exact = PersistentDictionary<String, Candidates>()
        var wildcard = PersistentDictionary<String, Candidates>()

        /// Takes out the entry `id` and its names, if it is there.
        mutating func remove(_ id: String) {
            guard let old = entries.removeValue(forKey: id) else { return }
            for name in old.names {
                if name.hasPrefix("*.") {
                    let parent = String(name.dropFirst(2))
                    wildcard[parent] = wildcard[parent]?.removing(id)
                } else {
                    exact[name] = exact[name]?.removing(id)
                }
            }
        }

        /// Puts in `kept` as the entry `id`, in its place among the entries listing each of its names; `id` is not
        /// in the table.
        mutating func insert(_ id: String, _ kept: Stored) {
            entries[id] = kept
            let candidate = Candidate(id: id, credential: kept.credential, isFallback: kept.isFallback)
            for name in kept.names {
                if name.hasPrefix("*.") {
                    let parent = String(name.dropFirst(2))
                    wildcard[parent] = wildcard[parent]?.inserting(candidate) ?? .one(candidate)
                } else {
                    exact[name] = exact[name]?.inserting(candidate) ?? .one(candidate)
                }
            }
        }
    }

    /// Makes a table entry by entry, from entries whose credentials were imported or checked before
    /// (``Entry/init(id:names:credential:isFallback:)``, ``Entry/init(id:names:deferred:isFallback:)``): a server
    /// serving thousands of certificates makes its table without an array of every entry.
    public struct Builder {
        fileprivate var contents = Contents()
        fileprivate let cache: CredentialCache

        /// An empty table, with room for about `capacity` entries, keeping the credentials of its deferred entries
        /// in `cache`.
        public init(capacity: Int = 0, cache: CredentialCache = CredentialCache(capacity: 0)) {
            contents.entries.reserveCapacity(capacity)
            contents.exact.reserveCapacity(capacity)
            self.cache = cache
        }

        /// Adds `entry`.
        ///
        /// - Throws: ``HTTPListenerError`` when the entry has no id, or neither a credential nor a deferred one, or
        ///   the table has its id.
        public mutating func add(_ entry: Entry) throws {
            guard let id = entry.id, let credential = entry.served else {
                throw HTTPListenerError(
                    .invalidCertificateTable, "an entry added to a table needs an id and an imported credential")
            }
            try add(id, Stored(names: entry.canonicalNames, credential: credential, isFallback: entry.isFallback))
        }

        /// Adds `kept` as the entry `id`; throws when the table has that id.
        fileprivate mutating func add(_ id: String, _ kept: Stored) throws {
            guard contents.entries[id] == nil else {
                throw HTTPListenerError(.invalidCertificateTable, "two certificate entries are named '\(id)'")
            }
            contents.insert(id, kept)
        }

        /// The table of the entries added, serving `defaultID` without SNI or for an unknown name.
        ///
        /// - Throws: ``HTTPListenerError`` when no entry was added, or none is `defaultID`.
        public func table(defaultID: String) throws -> CertificateTable {
            try CertificateTable(contents, defaultID: defaultID, cache: cache)
        }
    }

    private let contents: Contents
    /// The id of the entry served without SNI or for an unknown name.
    public let defaultID: String
    private let defaultCredential: Served
    /// Where the credentials of deferred entries are kept once a handshake imported them; shared with the tables
    /// made from this one.
    public let cache: CredentialCache

    /// Builds the table, importing the entries given as PEM into GnuTLS (spread over every processor). An entry
    /// without an ``Entry/id`` is named by its position (``positionID(_:)``).
    ///
    /// - Parameter defaultEntry: index of the entry used when the client sends no SNI or a name no entry covers
    ///   (handshakes never fail for lack of a match).
    /// - Throws: ``HTTPListenerError`` when the table is empty, the default index is out of range, two entries
    ///   have one id, or a chain or key cannot be imported or do not belong together (the error of the first such
    ///   entry, in order).
    public convenience init(entries: [Entry], defaultEntry: Int = 0) throws {
        guard !entries.isEmpty else {
            throw HTTPListenerError(.invalidCertificateTable, "a TLS listener needs at least one certificate")
        }
        guard entries.indices.contains(defaultEntry) else {
            throw HTTPListenerError(
                .invalidCertificateTable,
                "default certificate entry \(defaultEntry) does not exist (table has \(entries.count) entries)")
        }
        var named = entries
        for index in named.indices where named[index].id == nil { named[index].id = Self.positionID(index) }
        var builder = Builder(capacity: named.count)
        for (entry, kept) in zip(named, try Self.imported(named)) { try builder.add(entry.id!, kept) }
        try self.init(builder.contents, defaultID: named[defaultEntry].id!, cache: builder.cache)
    }

    /// The table of `contents`, serving `defaultID` without SNI or for an unknown name.
    ///
    /// - Throws: ``HTTPListenerError`` when `contents` is empty or has no entry `defaultID`.
    private init(_ contents: Contents, defaultID: String, cache: CredentialCache) throws {
        guard !contents.entries.isEmpty else {
            throw HTTPListenerError(.invalidCertificateTable, "a TLS listener needs at least one certificate")
        }
        guard let serving = contents.entries[defaultID] else {
            throw HTTPListenerError(
                .invalidCertificateTable, "the default certificate entry '\(defaultID)' is not in the table")
        }
        self.contents = contents
        self.defaultID = defaultID
        self.cache = cache
        defaultCredential = serving.credential
    }

    /// A table with the entries `removing` names taken out and `adding` put in (an id in both is replaced), and
    /// `defaultID` (or this table's default) served without SNI or for an unknown name. Only the names of the
    /// entries changed are touched: the rest is shared with this table.
    ///
    /// - Throws: ``HTTPListenerError`` when an added entry has no id, its chain or key cannot be imported, the
    ///   table would be empty, or the default entry would not be in it.
    public func updating(removing: some Sequence<String>, adding: [Entry], defaultID: String? = nil) throws
        -> CertificateTable
    {
        guard adding.allSatisfy({ $0.id != nil }) else {
            throw HTTPListenerError(.invalidCertificateTable, "an entry added to a table needs an id")
        }
        let stored = try Self.imported(adding)
        var contents = self.contents
        for id in removing { contents.remove(id) }
        for (entry, kept) in zip(adding, stored) {
            contents.remove(entry.id!)
            contents.insert(entry.id!, kept)
        }
        return try CertificateTable(contents, defaultID: defaultID ?? self.defaultID, cache: cache)
    }

    /// Each entry's canonical names and credential: imported from PEM (spread over every processor, sharing
    /// the intermediates the chains have in common) or taken as given, imported or deferred.
    private static func imported(_ entries: [Entry]) throws -> [Stored] {
        let intermediates = SharedIntermediates()
        return try (0..<entries.count).concurrentMap { index -> Result<Stored, any Error> in
            let entry = entries[index]
            let names = entry.canonicalNames
            if let credential = entry.served {
                return .success(Stored(names: names, credential: credential, isFallback: entry.isFallback))
            }
            let label = "certificate entry \(entry.id ?? String(index)) (\(entry.names.joined(separator: ", ")))"
            return Result {
                let credential = try GnuTLSCredential(
                    chainPEM: entry.certificateChainPEM, keyPEM: entry.privateKeyPEM, staple: entry.staple,
                    label: label, intermediates: intermediates)
                return Stored(names: names, credential: .imported(credential), isFallback: entry.isFallback)
            }
        }.map { try $0.get() }
    }

    /// Number of entries.
    public var count: Int { contents.entries.count }

    /// The id of an entry given without one: its position, zero-padded so ids sort as positions do.
    public static func positionID(_ index: Int) -> String {
        let digits = String(index)
        return String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }

    /// The ids of the entries, in no particular order.
    public var ids: [String] { contents.entries.keys }

    /// The credential served for `serverName` (``entryID(forServerName:)``), imported now if its entry is deferred
    /// and the cache does not hold it; `nil` when that import fails (``DeferredCredential/failure`` says why).
    func credential(forServerName serverName: String?) -> GnuTLSCredential? {
        guard let serverName, let candidate = candidate(for: CertificateName.canonical(serverName)) else {
            return credential(defaultCredential, id: defaultID)
        }
        return credential(candidate.credential, id: candidate.id)
    }

    /// The credential of the entry `id`, if the table has one (imported now if it is deferred, as for a handshake).
    public func credential(id: String) -> GnuTLSCredential? {
        contents.entries[id].flatMap { credential($0.credential, id: id) }
    }

    /// The credential `served` stands for: itself, or the deferred one's from the cache.
    private func credential(_ served: Served, id: String) -> GnuTLSCredential? {
        switch served {
        case .imported(let credential): credential
        case .deferred(let deferred): cache.credential(for: deferred, label: "certificate entry '\(id)'")
        }
    }

    /// The id of the entry served for `serverName`: exact name, else a `*.` entry for its parent, else the default.
    ///
    /// Names compare case-insensitively with one trailing dot ignored; among entries listing one name, the first
    /// id in sorted order wins.
    public func entryID(forServerName serverName: String?) -> String {
        serverName.flatMap(entryID(covering:)) ?? defaultID
    }

    /// The id of the entry whose names cover `name` (exact, else a `*.` name for its parent); `nil` when none
    /// does and a handshake for it would get the default entry.
    public func entryID(covering name: String) -> String? {
        candidate(for: CertificateName.canonical(name))?.id
    }

    /// The entry served for the canonical `name`: the first listing it exactly, else the first listing a `*.` name
    /// for its parent; a fallback only when no other entry covers it either way.
    private func candidate(for name: String) -> Candidate? {
        let byName = contents.exact[name]?.first
        if let byName, !byName.isFallback { return byName }
        let byWildcard = CertificateName.wildcardParent(of: name).flatMap { contents.wildcard[String($0)]?.first }
        if let byWildcard, !byWildcard.isFallback { return byWildcard }
        return byName ?? byWildcard
    }
}

extension CertificateTable.Entry {
    /// What serves the entry, when it was given one.
    fileprivate var served: CertificateTable.Served? {
        if let credential { return .imported(credential) }
        return deferred.map { .deferred($0) }
    }

    /// The entry's names in canonical form: its own array when they are already (the usual case), one array per
    /// certificate.
    fileprivate var canonicalNames: [String] {
        names.allSatisfy(CertificateName.isCanonical) ? names : names.map(CertificateName.canonical)
    }
}
