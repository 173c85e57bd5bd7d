import AASAOpenSSL
import AASATestSupport
import Foundation
import Testing

@Suite struct CertificateSigningRequestTests {
    @Test func requestVerifiesWithTheRealOpenSSLToolAndNamesEveryDNSName() throws {
        let key = try PrivateKey.generate(.ecdsaP256)
        let request = try CertificateSigningRequest(
            key: key, dnsNames: ["Shop.Example.", "www.shop.example", "*.cdn.shop.example"])
        let result = try Command.run(
            "openssl", ["req", "-inform", "DER", "-noout", "-text", "-verify"], input: request.der)
        #expect(result.status == 0, "\(result.stderr)")
        // OpenSSL 3 prints the verification result on standard error, older versions on standard output.
        #expect((result.stdout + result.stderr).contains("verify OK"))
        #expect(result.stdout.contains("CN = shop.example") || result.stdout.contains("CN=shop.example"))
        #expect(result.stdout.contains("DNS:shop.example, DNS:www.shop.example, DNS:*.cdn.shop.example"))
        #expect(result.stdout.contains("ecdsa-with-SHA256"))
        #expect(result.stdout.contains("NIST CURVE: P-256"))
        #expect(bytesOfBase64URL(request.base64URL) == request.der)
        #expect(!request.base64URL.contains("="))
    }

    @Test func requestCarriesTheKeysPublicHalf() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        let key = try PrivateKey.generate(.ecdsaP256)
        try key.pemEncoded().write(toFile: directory + "/key.pem", atomically: true, encoding: .utf8)
        let request = try CertificateSigningRequest(key: key, dnsNames: ["a.test"])
        let fromRequest = try Command.run(
            "openssl", ["req", "-inform", "DER", "-noout", "-pubkey"], input: request.der)
        let fromKey = try Command.run("openssl", ["pkey", "-in", directory + "/key.pem", "-pubout"])
        #expect(fromRequest.status == 0 && fromKey.status == 0)
        #expect(fromRequest.stdout == fromKey.stdout)
    }

    @Test(arguments: [[], ["127.0.0.1"], ["a.test,DNS:evil.test"], ["bad_-.test-"], ["ok.test", "::1"]])
    func namesThatAreNotDNSNamesAreRefused(names: [String]) {
        let error = #expect(throws: OpenSSLError.self) {
            try CertificateSigningRequest(key: PrivateKey.generate(.ecdsaP256), dnsNames: names)
        }
        #expect(error?.code == .invalidName)
    }
}
