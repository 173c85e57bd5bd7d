import AASACore
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// A real server with signing on: curl fetches, the real openssl verifies against the development CA.
@Suite(.serialized) struct SigningLiveTests {
    static let root = "/apple-app-site-association"
    static let wellKnown = "/.well-known/apple-app-site-association"

    /// Turns signing on for shop.example in the copied sample config (`value` is the JSON of "signing").
    static func enableSigning(_ value: String) -> (String) throws -> Void {
        { configFolder in
            let path = configFolder + "/shop.example/site.json"
            var text = try String(contentsOfFile: path, encoding: .utf8)
            text = text.replacingOccurrences(
                of: "\"universalLinks\": {", with: "\"signing\": \(value),\n  \"universalLinks\": {")
            try text.write(toFile: path, atomically: true, encoding: .utf8)
        }
    }

    func verify(_ body: [UInt8], live: LiveServer) throws -> [UInt8]? {
        try OpenSSLCMS.verify(body, ["-CAfile", live.caFile, "-purpose", "sslserver"]).content
    }

    @Test func rootPathIsSignedAndWellKnownStaysJSON() throws {
        let live = try LiveServer(prepare: Self.enableSigning("true"))
        let unsigned = try live.expectedFile("shop.example")
        let signed = try live.get("shop.example", Self.root)
        #expect(signed.status == 200)
        #expect(signed.headers["content-type"] == "application/pkcs7-mime")
        #expect(try verify(signed.body, live: live) == unsigned)
        #expect(try OpenSSLCMS.print(signed.body).contains("signedAttrs:\n          <ABSENT>"))
        let plain = try live.get("shop.example", Self.wellKnown)
        #expect(plain.headers["content-type"] == "application/json")
        #expect(plain.body == unsigned)
        // Each form has its own ETag, and each answers 304 only to its own.
        let signedTag = try #require(signed.headers["etag"])
        #expect(signedTag != plain.headers["etag"])
        #expect(try live.get("shop.example", Self.root, headers: ["If-None-Match: \(signedTag)"]).status == 304)
        #expect(try live.get("shop.example", Self.wellKnown, headers: ["If-None-Match: \(signedTag)"]).status == 200)
        let head = try live.get("shop.example", Self.root, method: "HEAD")
        #expect(head.headers["content-type"] == "application/pkcs7-mime")
        #expect(head.headers["content-length"] == "\(signed.body.count)")
        // Another domain without signing is untouched.
        #expect(try live.get("links.example", Self.root).headers["content-type"] == "application/json")
    }

    @Test func theBothOptionSignsBothPaths() throws {
        let live = try LiveServer(prepare: Self.enableSigning(#"{"paths": "both"}"#))
        let unsigned = try live.expectedFile("shop.example")
        for path in [Self.root, Self.wellKnown] {
            let response = try live.get("shop.example", path)
            #expect(response.headers["content-type"] == "application/pkcs7-mime", "\(path)")
            #expect(try verify(response.body, live: live) == unsigned, "\(path)")
        }
    }

    @Test func aCertificateChangeOnReloadReSignsWithTheNewCertificate() throws {
        let live = try LiveServer(prepare: Self.enableSigning("true"))
        let before = try live.get("shop.example", Self.root).body
        let oldFingerprint = try signerFingerprint(before)
        _ = try DevCertificates(certificateDirectory: live.certsDirectory).ensure(
            names: ["shop.example"], replace: true)
        let diagnostics = live.server.reload()
        #expect(!diagnostics.hasErrors, "\(diagnostics)")
        let after = try live.get("shop.example", Self.root).body
        #expect(after != before)
        #expect(try verify(after, live: live) == (try live.expectedFile("shop.example")))
        let newFingerprint = try signerFingerprint(after)
        let served = try Command.run(
            "openssl",
            ["x509", "-noout", "-fingerprint", "-sha256", "-in", live.certsDirectory + "/shop.example/fullchain.pem"])
        #expect(newFingerprint != oldFingerprint)
        #expect(served.stdout.contains(newFingerprint))
    }

    @Test func aBrokenKeyOnReloadKeepsTheLastGoodSignedFile() throws {
        let live = try LiveServer(prepare: Self.enableSigning("true"))
        let before = try live.get("shop.example", Self.root)
        try "-----BEGIN PRIVATE KEY-----\nbroken\n-----END PRIVATE KEY-----\n".write(
            toFile: live.certsDirectory + "/shop.example/privkey.pem", atomically: true, encoding: .utf8)
        // A config change too, so the domain really is re-signed (and fails).
        let config = live.configDirectory + "/shop.example/site.json"
        let text = try String(contentsOfFile: config, encoding: .utf8)
        try text.replacingOccurrences(
            of: "\"signing\": true,", with: "\"signing\": true, \"cacheControl\": \"max-age=60\","
        ).write(
            toFile: config, atomically: true, encoding: .utf8)
        let diagnostics = live.server.reload()
        #expect(
            diagnostics.contains { $0.rule == .signingIdentity && $0.message.contains("shop.example") },
            "\(diagnostics)")
        let after = try live.get("shop.example", Self.root)
        #expect(after.body == before.body)
        #expect(after.headers["etag"] == before.headers["etag"])
        #expect(try verify(after.body, live: live) != nil)
        let status = try live.status()
        let shop = (status["domains"] as? [String: Any])?["shop.example"] as? [String: Any]
        #expect(shop?["published"] as? Bool == true)
        #expect((shop?["errors"] as? [String])?.contains { $0.contains("[signing-identity]") } == true)
    }

    @Test func anUnchangedDomainKeepsItsExactSignatureAcrossReloads() throws {
        let live = try LiveServer(prepare: Self.enableSigning("true"))
        let before = try live.get("shop.example", Self.root)
        live.server.reload()
        let after = try live.get("shop.example", Self.root)
        #expect(after.body == before.body)
        #expect(after.headers["etag"] == before.headers["etag"])
    }

    @Test func assetLinksIsServedLikeTheAssociationFile() throws {
        let live = try LiveServer()
        let response = try live.get("shop.example", "/.well-known/assetlinks.json")
        #expect(response.status == 200)
        #expect(response.headers["content-type"] == "application/json")
        #expect(response.headers["location"] == nil)
        #expect(response.headers["cache-control"] == "max-age=3600")
        let golden = try [UInt8](
            Data(
                contentsOf: URL(
                    fileURLWithPath: RepositoryPaths.root
                        + "/Tests/AASACoreTests/Fixtures/golden/shop.example.assetlinks.json")))
        #expect(response.body == golden)
        let etag = try #require(response.headers["etag"])
        #expect(
            try live.get("shop.example", "/.well-known/assetlinks.json", headers: ["If-None-Match: \(etag)"]).status
                == 304)
        #expect(try live.get("shop.example", "/.well-known/assetlinks.json", method: "POST").status == 405)
        // A domain without an android section has no such file.
        #expect(try live.get("links.example", "/.well-known/assetlinks.json").status == 404)
        #expect(try live.get("shop.example", "/assetlinks.json").status == 404)
    }

    /// A signing identity that cannot be used (here missing; an expired one takes the same path, `signing-expired`)
    /// leaves out its domain only: a restart never turns it into an outage of the other domains.
    @Test func aDomainWhoseSigningIdentityIsUnusableIsLeftOutAtStartAndTheOthersServed() throws {
        let prepare = Self.enableSigning(#"{"certificate": "missing.pem", "key": "missing-key.pem"}"#)
        let live = try LiveServer(prepare: prepare)
        #expect(try live.fetch("shop.example") == .unknownHost)
        #expect(try live.fetch("links.example") == .ok(try live.expectedFile("links.example")))
        let shop = try #require((try live.status()["domains"] as? [String: [String: Any]])?["shop.example"])
        #expect(shop["state"] as? String == "failed")
        #expect((shop["errors"] as? [String])?.contains { $0.contains("[signing-identity]") } == true, "\(shop)")
        // Under --strict the start is refused.
        #expect(throws: Server.StartupError.self) {
            _ = try LiveServer(configure: { $0.refusesToStartWithErrors = true }, prepare: prepare)
        }
    }

    /// The SHA-256 fingerprint (as openssl prints it) of the signer certificate in a signed blob.
    func signerFingerprint(_ signed: [UInt8]) throws -> String {
        let directory = TemporaryDirectory("aasa-signer")
        let input = directory.path + "/signed.der"
        try Data(signed).write(to: URL(fileURLWithPath: input))
        _ = try Command.run(
            "openssl",
            [
                "cms", "-verify", "-noverify", "-inform", "DER", "-in", input, "-signer",
                directory.path + "/signer.pem", "-out", "/dev/null",
            ])
        let output = try Command.run(
            "openssl", ["x509", "-noout", "-fingerprint", "-sha256", "-in", directory.path + "/signer.pem"])
        return String(output.stdout.split(separator: "=").last ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
