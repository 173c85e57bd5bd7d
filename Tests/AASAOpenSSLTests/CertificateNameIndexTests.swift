import AASAOpenSSL
import Foundation
import Testing

/// Overlapping certificates, so the index must also pick the same one as a first-match scan would.
private let certificates: [X509Certificate] = {
    let directory = try! makeTemporaryDirectory()
    defer { removeDirectory(directory) }
    let ca = try! DevCertificateAuthority.loadOrCreate(directory: directory)
    return [
        ["shop.example", "*.wild.example", "127.0.0.1", "2001:db8::1"],
        ["*.shop.example", "a.wild.example", "SHOP.example."],
        ["links.example", "::1", "*.deep.wild.example"],
        ["*.example"],  // a wildcard over a single label is never honoured
    ].map { try! ca.issue(names: $0).certificate }
}()

@Suite struct CertificateNameIndexTests {
    @Test(arguments: [
        "shop.example", "SHOP.Example", "shop.example.", "www.shop.example", "a.shop.example", "a.b.shop.example",
        "a.wild.example", "b.wild.example", "A.WILD.EXAMPLE", "wild.example", "a.b.wild.example", ".wild.example",
        "x.deep.wild.example", "deep.wild.example", "links.example", "other.example", "example", "a.example",
        "x.y.example", "x.*.example", "*.wild.example", "127.0.0.1", "127.0.0.2", "2001:db8:0::1", "[2001:db8::1]",
        "::1", "[::1]", "", ".", "..",
    ])
    func answersAsAScanOfEveryCertificateWould(hostname: String) {
        let scan = certificates.firstIndex { $0.covers(hostname: hostname) }
        #expect(CertificateNameIndex(certificates).firstIndex(covering: hostname) == scan)
        let names = CertificateNameIndex(subjectAlternativeNames: certificates.map(\.subjectAlternativeNames))
        #expect(names.firstIndex(covering: hostname) == scan)
    }

    @Test func coversNothingWithoutCertificates() {
        #expect(CertificateNameIndex([X509Certificate]()).firstIndex(covering: "shop.example") == nil)
    }
}
