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
        let entry = CertificateTable.positionID
        #expect(table.entryID(forServerName: "www.shop.test") == entry(2))  // exact beats wildcard
        #expect(table.entryID(forServerName: "api.shop.test") == entry(1))
        #expect(table.entryID(forServerName: "API.SHOP.TEST.") == entry(1))
        #expect(table.entryID(forServerName: "other.test") == entry(2))
        #expect(table.entryID(forServerName: "shop.test") == entry(0))
        #expect(table.entryID(covering: "shop.test") == nil)
        #expect(table.entryID(forServerName: "a.b.shop.test") == entry(0))
        #expect(table.entryID(forServerName: nil) == entry(0))
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
        let (a, b) = try (#require(table.credential(id: "00000000")), #require(table.credential(id: "00000001")))
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
        #expect(first.credential(id: "00000000") === credential && second.credential(id: "00000001") === credential)
        #expect(second.entryID(forServerName: "www.a.test") == "00000001")
        #expect(second.credential(id: "00000000") !== credential)
        #expect(credential.staple?.pointee.response.size == 2)
        // A key that is not the leaf's is refused at the import, with the code the server turns into a finding.
        let refused = #expect(throws: HTTPListenerError.self) {
            try GnuTLSCredential(chainPEM: a.certificateChainPEM, keyPEM: b.privateKeyPEM, label: "a")
        }
        #expect(refused?.code == .keyMismatch)
    }

    /// A table made entry by entry (``CertificateTable/Builder``) serves as one made from an array: exact names before
    /// wildcards, fallbacks last, the first id among several; it refuses an id twice, an entry never imported, and a
    /// default it does not have.
    @Test func aBuilderMakesTheTableAnArrayWould() throws {
        let pki = try TestPKI()
        let a = try pki.entry(["a.test"]).entry
        let credential = try GnuTLSCredential(chainPEM: a.certificateChainPEM, keyPEM: a.privateKeyPEM, label: "a")
        var builder = CertificateTable.Builder(capacity: 3)
        try builder.add(.init(id: "z", names: ["a.test", "*.test"], credential: credential))
        try builder.add(.init(id: "temporary", names: ["B.test."], credential: credential, isFallback: true))
        try builder.add(.init(id: "m", names: ["a.test"], credential: credential))
        let table = try builder.table(defaultID: "z")
        #expect(table.entryID(covering: "a.test") == "m")
        #expect(table.entryID(covering: "b.test") == "z")
        #expect(table.entryID(covering: "c.test") == "z")
        #expect(table.entryID(forServerName: "other.example") == "z")
        #expect(table.count == 3)
        let twice = #expect(throws: HTTPListenerError.self) {
            try builder.add(.init(id: "m", names: ["m.test"], credential: credential))
        }
        #expect(twice?.description.contains("two certificate entries are named 'm'") == true)
        #expect(throws: HTTPListenerError.self) {
            try builder.add(.init(id: "pem", names: ["p.test"], certificateChainPEM: [], privateKeyPEM: []))
        }
        #expect(throws: HTTPListenerError.self) { try builder.table(defaultID: "absent") }
        #expect(throws: HTTPListenerError.self) { try CertificateTable.Builder().table(defaultID: "z") }
    }

    /// A reload changes a few certificates among thousands: the new table replaces, adds and removes entries by id,
    /// keeps every other entry's credential, and the table it was made from still serves what it served.
    @Test func updatingReplacesAddsAndRemovesEntriesByID() throws {
        let pki = try TestPKI()
        let a = try pki.entry(["a.test", "*.a.test"]).entry
        let b = try pki.entry(["b.test"]).entry
        let c = try pki.entry(["c.test", "b.test"]).entry
        func named(_ id: String, _ entry: CertificateTable.Entry) -> CertificateTable.Entry {
            var entry = entry
            entry.id = id
            return entry
        }
        let first = try CertificateTable(entries: [named("a", a), named("b", b)], defaultEntry: 0)
        let kept = try #require(first.credential(id: "b"))
        // "a" renewed for other names, "c" added (listing b.test too: "b" sorts first and keeps serving it).
        let second = try first.updating(
            removing: [], adding: [named("a", try pki.entry(["www.a.test"]).entry), named("c", c)])
        #expect(second.count == 3)
        #expect(second.credential(id: "b") === kept)
        #expect(second.credential(id: "a") !== first.credential(id: "a"))
        #expect(second.entryID(covering: "a.test") == nil)
        #expect(second.entryID(covering: "x.a.test") == nil)
        #expect(second.entryID(covering: "www.a.test") == "a")
        #expect(second.entryID(covering: "b.test") == "b")
        #expect(second.entryID(covering: "c.test") == "c")
        // The first table is untouched.
        #expect(first.entryID(covering: "x.a.test") == "a")
        #expect(first.entryID(covering: "c.test") == nil)
        // Removing "b" hands b.test to "c"; removing the default needs a new one.
        let third = try second.updating(removing: ["b"], adding: [])
        #expect(third.entryID(covering: "b.test") == "c")
        let noDefault = #expect(throws: HTTPListenerError.self) { try third.updating(removing: ["a"], adding: []) }
        #expect(noDefault?.code == .invalidCertificateTable)
        let fourth = try third.updating(removing: ["a"], adding: [], defaultID: "c")
        #expect(fourth.entryID(forServerName: "unknown.test") == "c")
        #expect(fourth.ids.sorted() == ["c"])
    }
}
