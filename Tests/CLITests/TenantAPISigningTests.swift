import AASATestSupport
import Foundation
import Testing

/// A write through the API of a real `serve` is signed as the server's load signs it: a site.json whose signature
/// cannot be made is refused with the signing identity's finding (a load would not publish it), one that can is
/// written and its signed file served.
@Suite(.serialized) struct TenantAPISigningTests {
    static let token = String(repeating: "g", count: 40)

    static func site(signing: String) -> String {
        """
        {
          "universalLinks": { "apps": [{ "appIDs": ["ABCDE12345.com.example.shop"], "rules": [{ "path": "/signed/*" }] }] },
          "signing": \(signing)
        }

        """
    }

    @Test func aSiteJSONWhoseSignatureCannotBeMadeIsRefusedAndOneThatCanIsServedSigned() throws {
        let folder = TemporaryDirectory("aasa-api-signing")
        let serve = try ServeProcess.withTokens("signer write \(Self.token)\n", in: folder)
        #expect(serve.waitUntilReady())
        let api = "http://127.0.0.1:\(serve.admin)/api/v1/domains/"
        func put(_ name: String, _ body: String, _ precondition: String) throws -> CurlResponse {
            try Curl.request(
                api + name, method: "PUT",
                headers: ["Authorization: Bearer \(Self.token)", "Content-Type: application/json", precondition],
                extra: ["--data-binary", body])
        }

        // No certificate covers a new domain: nothing is written.
        let uncovered = try put("unsigned.example", Self.site(signing: "true"), "If-None-Match: *")
        #expect(uncovered.status == 422, "\(uncovered.text)")
        #expect(uncovered.text.contains("\"severity\" : \"error\"") || uncovered.text.contains("\"error\""))
        #expect(uncovered.text.contains("unsigned.example"), "\(uncovered.text)")
        #expect(!FileManager.default.fileExists(atPath: folder.path + "/site-config/unsigned.example"))
        // An identity the tenant's folder does not hold.
        let current = try Curl.request(api + "shop.example", headers: ["Authorization: Bearer \(Self.token)"])
        let tag = try #require(current.headers["etag"])
        let absent = try put(
            "shop.example", Self.site(signing: #"{ "certificate": "signing/cert.pem", "key": "signing/key.pem" }"#),
            "If-Match: \(tag)")
        #expect(absent.status == 422, "\(absent.text)")
        #expect(absent.text.contains("signing/cert.pem"), "\(absent.text)")

        // The domain's dev certificate signs it: written, and the signed file is served.
        let signed = try put("shop.example", Self.site(signing: "true"), "If-Match: \(tag)")
        #expect(signed.status == 200, "\(signed.text)")
        let deadline = TestTime.deadline(20)
        var served: CurlResponse?
        while Date() < deadline {
            served = try Curl.request(
                "https://shop.example:\(serve.port)/apple-app-site-association",
                caFile: folder.path + "/certs/dev-ca/ca.pem", resolve: ("shop.example", serve.port))
            if served?.headers["content-type"] == "application/pkcs7-mime" { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(served?.headers["content-type"] == "application/pkcs7-mime", "\(served?.headers ?? [:])")
        let file = folder.path + "/signed.der"
        #expect(FileManager.default.createFile(atPath: file, contents: Data(served?.body ?? [])))
        let verified = try Command.run(
            "openssl",
            [
                "cms", "-verify", "-inform", "DER", "-in", file, "-CAfile", folder.path + "/certs/dev-ca/ca.pem",
                "-purpose", "sslserver",
            ])
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(verified.stdout.contains("/signed/*"), "\(verified.stdout)")
        #expect(serve.terminate() == 0)
    }
}
