import AASAMicroHTTPD
import AASAOpenSSL
import Testing

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

    @Test func mismatchedKeyAndGarbageAreRejectedWithTheEntryNamed() throws {
        let pki = try TestPKI()
        let a = try pki.entry(["a.test"]).entry
        let b = try pki.entry(["b.test"]).entry
        let mixed = CertificateTable.Entry(
            names: ["a.test"], certificateChainPEM: a.certificateChainPEM, privateKeyPEM: b.privateKeyPEM)
        let mismatch = #expect(throws: HTTPListenerError.self) { try CertificateTable(entries: [mixed]) }
        #expect(mismatch?.code == .invalidCertificate)
        #expect(mismatch?.reason.contains("a.test") == true)

        let garbage = CertificateTable.Entry(
            names: ["g.test"], certificateChainPEM: Array("nope".utf8), privateKeyPEM: a.privateKeyPEM)
        let parse = #expect(throws: HTTPListenerError.self) { try CertificateTable(entries: [garbage]) }
        #expect(parse?.code == .invalidCertificate)
    }
}
