import AASACore
import AASAOpenSSL
internal import CGnuTLS
import FoundationEssentials
import Testing

@testable import AASAMicroHTTPD

@Suite struct CertificateTableTests {
    @Test func lookupPrefersExactThenWildcardThenDefault() throws {
        let pki = try TestPKI()
        let table = try CertificateTable(
            entries: [
                pki.entry(["default.test"]).entry, pki.entry(["*.shop.test"]).entry,
                pki.entry(["www.shop.test", "Other.Test."]).entry,
            ], defaultEntry: 0)
        #expect(table.count == 3)
        #expect(table.entryIndex(forServerName: "www.shop.test") == 2)  // exact beats wildcard
        #expect(table.entryIndex(forServerName: "api.shop.test") == 1)
        #expect(table.entryIndex(forServerName: "API.SHOP.TEST.") == 1)
        #expect(table.entryIndex(forServerName: "other.test") == 2)
        #expect(table.entryIndex(forServerName: "shop.test") == 0)
        #expect(table.entryIndex(forServerName: "a.b.shop.test") == 0)
        #expect(table.entryIndex(forServerName: nil) == 0)
    }

    @Test func emptyTableAndBadDefaultAreRejected() throws {
        let pki = try TestPKI()
        #expect(throws: HTTPListenerError.self) { try CertificateTable(entries: []) }
        let error = #expect(throws: HTTPListenerError.self) {
            try CertificateTable(entries: [pki.entry(["a.test"]).entry], defaultEntry: 1)
        }
        #expect(error?.code == .invalidCertificateTable)
    }

    /// Chains ending with the same intermediate (certbot's fullchain.pem) share one import of it; each leaf
    /// is its own. Over the wire each name still gets its whole chain (HTTPSListenerTests).
    @Test func chainsOfOneTableShareTheirIntermediates() throws {
        let pki = try TestPKI()
        let caPEM = Array(try String(contentsOfFile: pki.caPath, encoding: .utf8).utf8)
        var entries = [try pki.entry(["a.test"]).entry, try pki.entry(["b.test"]).entry]
        for index in entries.indices { entries[index].certificateChainPEM += caPEM }
        let table = try CertificateTable(entries: entries)
        let (a, b) = (table.credentials[0], table.credentials[1])
        #expect(a.count == 2 && b.count == 2)
        #expect(a.certificates[1].cert.data == b.certificates[1].cert.data)
        #expect(a.certificates[1].pubkey == b.certificates[1].pubkey)
        #expect(a.certificates[0].cert.data != b.certificates[0].cert.data)
    }

    @Test func mismatchedKeyAndGarbageAreRejectedWithTheEntryNamed() throws {
        let pki = try TestPKI()
        let a = try pki.entry(["a.test"]).entry
        let b = try pki.entry(["b.test"]).entry
        let mixed = CertificateTable.Entry(
            names: ["a.test"], certificateChainPEM: a.certificateChainPEM, privateKeyPEM: b.privateKeyPEM)
        let mismatch = #expect(throws: HTTPListenerError.self) { try CertificateTable(entries: [mixed]) }
        #expect(mismatch?.code == .keyMismatch)
        #expect(mismatch?.reason.contains("a.test") == true)

        // RSA keys are compared by modulus and exponent, ECDSA keys by curve and point: a key of either kind
        // is refused with any leaf but its own.
        let rsa = try pki.entry(["r.test"], key: .rsa(bits: 2048)).entry
        let otherRSA = try pki.entry(["s.test"], key: .rsa(bits: 2048)).entry
        for (chain, key) in [(rsa, otherRSA), (rsa, a), (a, rsa)] {
            let pair = CertificateTable.Entry(
                names: chain.names, certificateChainPEM: chain.certificateChainPEM, privateKeyPEM: key.privateKeyPEM)
            let refused = #expect(throws: HTTPListenerError.self) { try CertificateTable(entries: [pair]) }
            #expect(refused?.code == .keyMismatch, "\(chain.names) with the key of \(key.names)")
        }
        #expect(try CertificateTable(entries: [rsa, otherRSA, a, b]).count == 4)

        let garbage = CertificateTable.Entry(
            names: ["g.test"], certificateChainPEM: Array("nope".utf8), privateKeyPEM: a.privateKeyPEM)
        let parse = #expect(throws: HTTPListenerError.self) { try CertificateTable(entries: [garbage]) }
        #expect(parse?.code == .invalidCertificate)
    }

    @Test func anImportedCredentialServesItsNamesInEveryTableBuiltWithIt() throws {
        let pki = try TestPKI()
        let a = try pki.entry(["a.test"]).entry
        let b = try pki.entry(["b.test"]).entry
        // What a server does: import each certificate as its folder is read, then build tables from the imports.
        let staple = CertificateTable.OCSPStaple(response: [0x30, 0x00], expires: 0)
        let credential = try GnuTLSCredential(
            chainPEM: a.certificateChainPEM, keyPEM: a.privateKeyPEM, staple: staple, label: "a")
        let first = try CertificateTable(entries: [CertificateTable.Entry(names: ["a.test"], credential: credential)])
        let second = try CertificateTable(
            entries: [b, CertificateTable.Entry(names: ["a.test", "www.a.test"], credential: credential)])
        #expect(first.credentials[0] === credential && second.credentials[1] === credential)
        #expect(second.entryIndex(forServerName: "www.a.test") == 1)
        #expect(second.credentials[0] !== credential)
        #expect(credential.staple?.pointee.response.size == 2)
        // A key that is not the leaf's is refused at the import, with the code the server turns into a finding.
        let refused = #expect(throws: HTTPListenerError.self) {
            try GnuTLSCredential(chainPEM: a.certificateChainPEM, keyPEM: b.privateKeyPEM, label: "a")
        }
        #expect(refused?.code == .keyMismatch)
    }
}
