import AASACore
import AASAOpenSSL
import AASATestSupport
import Foundation
import Testing

@testable import AASAMicroHTTPD

/// Certificates held as ``DeferredCredential``s are imported when a handshake first asks for one of their names, kept
/// in the table's ``CredentialCache`` within its bound, and imported again once let go; one GnuTLS refuses fails its
/// own handshakes and says why, and no other.
@Suite(.serialized) struct CredentialCacheTests {
    /// The deferred entry of a certificate the test CA issues for `names`, its leaf and key sealed in `vault` when
    /// given.
    static func deferredEntry(
        _ pki: TestPKI, _ names: [String], key: PrivateKey.GenerationParameters = .ecdsaP256,
        vault: CredentialVault? = nil
    )
        throws -> (entry: CertificateTable.Entry, deferred: DeferredCredential)
    {
        let pem = try pki.entry(names, key: key).entry
        let chain = try PEMBlocks(pem.certificateChainPEM).blocks.filter(\.isCertificate).map(\.bytes)
        let deferred = try DeferredCredential(chain: chain, keyPEM: pem.privateKeyPEM, label: names[0], vault: vault)
        return (CertificateTable.Entry(id: names[0], names: names, deferred: deferred), deferred)
    }

    /// A listener serving `entries` (the first by default) through a cache of `capacity`.
    static func listener(_ entries: [CertificateTable.Entry], capacity: Int) throws -> HTTPListener {
        var builder = CertificateTable.Builder(capacity: entries.count, cache: CredentialCache(capacity: capacity))
        for entry in entries { try builder.add(entry) }
        let table = try builder.table(defaultID: try #require(entries.first?.id))
        return try HTTPListener(
            configuration: testConfiguration(tls: TLSConfiguration(certificates: table)),
            routes: TestRoutes(helloBody: "secure\n"))
    }

    /// Fetches over HTTPS for `host`, curl verifying the certificate against the test CA and the name.
    static func fetch(_ host: String, _ listener: HTTPListener, _ pki: TestPKI) throws -> ToolResult {
        try curl("/echo", port: listener.port, host: host, tls: true, caPath: pki.caPath)
    }

    @Test func certificatesAreImportedOnFirstUseAndKeptWithinTheBound() throws {
        let pki = try TestPKI()
        let names = ["a.test", "b.test", "c.test", "rsa.test"]
        let entries = try names.map {
            try Self.deferredEntry(pki, [$0], key: $0 == "rsa.test" ? .rsa(bits: 2048) : .ecdsaP256).entry
        }
        let listener = try Self.listener(entries, capacity: 2)
        defer { listener.stop(timeout: .zero) }
        let cache = try #require(listener.configuration.tls?.certificates.cache)
        #expect(cache.figures == .init(hits: 0, imports: 0, failures: 0, evictions: 0, count: 0))

        let first = try Self.fetch("a.test", listener, pki)
        #expect(first.status == 0, "\(first.error)")
        #expect(cache.figures == .init(hits: 0, imports: 1, failures: 0, evictions: 0, count: 1))
        let warm = try Self.fetch("a.test", listener, pki)
        #expect(warm.status == 0, "\(warm.error)")
        #expect(cache.figures.hits == 1 && cache.figures.imports == 1)

        // Every name is served its own certificate (curl checks it covers the name), never more than 2 kept.
        for name in names {
            let result = try Self.fetch(name, listener, pki)
            #expect(result.status == 0, "\(name): \(result.error)")
            #expect(echoFields(splitResponse(result.output).body)["sni"] == name)
            #expect(cache.figures.count <= 2)
        }
        let figures = cache.figures
        #expect(figures.imports == 4 && figures.failures == 0, "\(figures)")
        #expect(figures.evictions >= 2, "\(figures)")
        #expect(figures.hits + figures.imports == 6)

        // One let go is imported again and served as before.
        let again = try Self.fetch("a.test", listener, pki)
        #expect(again.status == 0, "\(again.error)")
        #expect(cache.figures.imports == 5)
    }

    @Test func withNoRoomEachHandshakeImportsItsCertificate() throws {
        let pki = try TestPKI()
        let listener = try Self.listener([try Self.deferredEntry(pki, ["a.test"]).entry], capacity: 0)
        defer { listener.stop(timeout: .zero) }
        let cache = try #require(listener.configuration.tls?.certificates.cache)
        for _ in 0..<3 {
            let result = try Self.fetch("a.test", listener, pki)
            #expect(result.status == 0, "\(result.error)")
        }
        #expect(cache.figures == .init(hits: 0, imports: 3, failures: 0, evictions: 0, count: 0))
    }

    @Test func aCertificateGnuTLSRefusesFailsOnlyItsOwnHandshakesAndSaysWhy() throws {
        let pki = try TestPKI()
        let good = try Self.deferredEntry(pki, ["a.test"])
        let checked = try Self.deferredEntry(pki, ["broken.test"]).deferred
        // What was checked, with key bytes GnuTLS cannot read: what an import that fails at a handshake meets.
        let broken = DeferredCredential(
            leaf: try checked.bytes().leaf, intermediates: checked.intermediates,
            key: PrivateKeyBytes(
                keepingPEM: Array("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".utf8)),
            staple: nil)
        let listener = try Self.listener(
            [good.entry, CertificateTable.Entry(id: "broken.test", names: ["broken.test"], deferred: broken)],
            capacity: 10)
        defer { listener.stop(timeout: .zero) }
        let cache = try #require(listener.configuration.tls?.certificates.cache)
        #expect(broken.failure == nil)

        let refused = try Self.fetch("broken.test", listener, pki)
        #expect(refused.status != 0, "the handshake must fail, not fall back to another name's certificate")
        let failure = try #require(broken.failure)
        #expect(failure.contains("could not import the private key of certificate entry 'broken.test'"), "\(failure)")
        #expect(!failure.contains("AAAA"), "no key bytes in a message")
        #expect(cache.figures.failures == 1 && cache.figures.count == 0, "\(cache.figures)")

        // Other names are untouched, and the failing one tries again at its next handshake.
        let served = try Self.fetch("a.test", listener, pki)
        #expect(served.status == 0, "\(served.error)")
        #expect(try Self.fetch("broken.test", listener, pki).status != 0)
        #expect(cache.figures.failures == 2 && cache.figures.imports == 1)
    }

    @Test func aCheckRefusesWhatAnImportWouldAndKeepsTheKeyAsDER() throws {
        let pki = try TestPKI()
        let a = try pki.entry(["a.test"]).entry
        let b = try pki.entry(["b.test"]).entry
        let chain = try PEMBlocks(a.certificateChainPEM).blocks.filter(\.isCertificate).map(\.bytes)
        let mismatch = #expect(throws: HTTPListenerError.self) {
            try DeferredCredential(chain: chain, keyPEM: b.privateKeyPEM, label: "a.test")
        }
        #expect(mismatch?.code == .keyMismatch)
        let garbage = #expect(throws: HTTPListenerError.self) {
            try DeferredCredential(chain: chain, keyPEM: Array("not a key".utf8), label: "a.test")
        }
        #expect(garbage?.code == .invalidPrivateKey)

        // The key is kept as its DER (the PEM's one block), and the leaf as given.
        let kept = try DeferredCredential(chain: chain, keyPEM: a.privateKeyPEM, label: "a.test")
        let block = try #require(try PEMBlocks(a.privateKeyPEM).blocks.first)
        let (leaf, key) = try kept.bytes()
        #expect(!key.isPEM && key.bytes == block.bytes)
        #expect(leaf == chain[0])
        // A key file with more than its key is kept as PEM, for GnuTLS to read as it reads the file.
        let withExtra = a.privateKeyPEM + a.certificateChainPEM
        #expect(PrivateKeyBytes(pem: withExtra).isPEM)
    }
}
