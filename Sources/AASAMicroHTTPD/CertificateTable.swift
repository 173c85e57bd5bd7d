internal import AASACore

/// The certificates a TLS listener serves, chosen per connection by the client's SNI.
///
/// Immutable: to change certificates, build a new table and pass it to ``HTTPListener/replaceCertificates(_:)``.
/// Each table stays alive while any connection accepted under it is open (the connection retains it), so a
/// replaced table is freed once its last connection closes.
public final class CertificateTable: Sendable {
    /// One certificate chain, its key, and the names it is served for: as PEM to import when the table is built,
    /// or as a credential imported before.
    public struct Entry: Sendable {
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

        /// An entry whose chain and key are imported when the table is built.
        public init(names: [String], certificateChainPEM: [UInt8], privateKeyPEM: [UInt8], staple: OCSPStaple? = nil) {
            self.names = names
            self.certificateChainPEM = certificateChainPEM
            self.privateKeyPEM = privateKeyPEM
            self.staple = staple
            credential = nil
        }

        /// An entry served by `credential`, imported before: a table rebuilt for one changed certificate among
        /// thousands imports nothing else, and a server need not keep any certificate's bytes to rebuild it.
        public init(names: [String], credential: GnuTLSCredential) {
            self.names = names
            certificateChainPEM = []
            privateKeyPEM = []
            staple = nil
            self.credential = credential
        }
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

    let credentials: [GnuTLSCredential]
    private let exact: [String: Int]
    private let wildcard: [String: Int]
    /// Index of the entry served without SNI or for an unknown name.
    public let defaultEntry: Int

    /// Builds the table, importing the entries given as PEM into GnuTLS (spread over every processor).
    ///
    /// - Parameter defaultEntry: index of the entry used when the client sends no SNI or a name no entry covers
    ///   (handshakes never fail for lack of a match).
    /// - Throws: ``HTTPListenerError`` when the table is empty, the default index is out of range, or a chain or
    ///   key cannot be imported or do not belong together (the error of the first such entry, in order).
    public init(entries: [Entry], defaultEntry: Int = 0) throws {
        guard !entries.isEmpty else {
            throw HTTPListenerError(.invalidCertificateTable, "a TLS listener needs at least one certificate")
        }
        guard entries.indices.contains(defaultEntry) else {
            throw HTTPListenerError(
                .invalidCertificateTable,
                "default certificate entry \(defaultEntry) does not exist (table has \(entries.count) entries)")
        }
        var exact: [String: Int] = [:]
        var wildcard: [String: Int] = [:]
        let intermediates = SharedIntermediates()
        let credentials = try (0..<entries.count).concurrentMap { index -> Result<GnuTLSCredential, any Error> in
            let entry = entries[index]
            if let credential = entry.credential { return .success(credential) }
            return Result {
                try GnuTLSCredential(
                    chainPEM: entry.certificateChainPEM, keyPEM: entry.privateKeyPEM, staple: entry.staple,
                    label: "certificate entry \(index) (\(entry.names.joined(separator: ", ")))",
                    intermediates: intermediates)
            }
        }.map { try $0.get() }
        for (index, entry) in entries.enumerated() {
            for name in entry.names {
                let canonical = Self.canonical(name)
                if canonical.hasPrefix("*.") {
                    wildcard[String(canonical.dropFirst(2))] = wildcard[String(canonical.dropFirst(2))] ?? index
                } else {
                    exact[canonical] = exact[canonical] ?? index
                }
            }
        }
        self.credentials = credentials
        self.exact = exact
        self.wildcard = wildcard
        self.defaultEntry = defaultEntry
    }

    /// Number of entries.
    public var count: Int { credentials.count }

    /// The entry served for `serverName`: exact name, else a `*.` entry for its parent, else the default.
    ///
    /// Names compare case-insensitively with one trailing dot ignored; the first entry listing a name wins.
    public func entryIndex(forServerName serverName: String?) -> Int {
        guard let serverName else { return defaultEntry }
        let name = Self.canonical(serverName)
        if let index = exact[name] { return index }
        if let dot = name.firstIndex(of: "."), dot != name.startIndex,
            let index = wildcard[String(name[name.index(after: dot)...])]
        {
            return index
        }
        return defaultEntry
    }

    /// Lowercased ASCII, one trailing dot removed.
    static func canonical(_ name: String) -> String {
        var bytes = Array(name.utf8)
        if bytes.last == UInt8(ascii: ".") { bytes.removeLast() }
        for index in bytes.indices where bytes[index] >= 65 && bytes[index] <= 90 { bytes[index] += 32 }
        return String(decoding: bytes, as: UTF8.self)
    }
}
