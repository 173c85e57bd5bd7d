import AASAOpenSSL
import AASATestSupport
import Foundation
import Testing

@Suite struct JSONWebSignatureTests {
    private static let url = "https://acme.test/acme/new-account"
    private static let nonce = "oFvnlFP1wIhRlYS2jTaXbA"

    @Test func signatureVerifiesWithTheRealOpenSSLTool() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        let key = try PrivateKey.generate(.ecdsaP256)
        try key.pemEncoded().write(toFile: directory + "/key.pem", atomically: true, encoding: .utf8)
        for attempt in 0..<4 {
            let payload = Array("{\"termsOfServiceAgreed\":true,\"attempt\":\(attempt)}".utf8)
            let jws = try JSONWebSignature(
                payload: payload, key: key, keyIdentifier: .jwk(JSONWebKey(publicKeyOf: key)), nonce: Self.nonce,
                url: Self.url)
            let body = try flattened(jws.jsonBytes)
            #expect(bytesOfBase64URL(body.payload) == payload)
            let signature = try #require(bytesOfBase64URL(body.signature))
            #expect(signature.count == 64)

            // What the server checks: the signature over "protected.payload" exactly as sent.
            let signingInput = Array((body.protected + "." + body.payload).utf8)
            #expect(try openSSLVerifies(signingInput, signature: signature, directory: directory))
            var altered = signingInput
            altered[altered.count - 1] ^= 1
            #expect(try !openSSLVerifies(altered, signature: signature, directory: directory))
        }
    }

    @Test func jwkHeaderCarriesAlgorithmKeyNonceAndURL() throws {
        let key = try PrivateKey.generate(.ecdsaP256)
        let jwk = try JSONWebKey(publicKeyOf: key)
        let jws = try JSONWebSignature(
            payload: Array("{}".utf8), key: key, keyIdentifier: .jwk(jwk), nonce: Self.nonce, url: Self.url)
        let header = try headerObject(flattened(jws.jsonBytes).protected)
        #expect(Set(header.keys) == ["alg", "jwk", "nonce", "url"])
        #expect(header["alg"] as? String == "ES256")
        #expect(header["jwk"] as? [String: String] == jwk.members)
        #expect(header["nonce"] as? String == Self.nonce)
        #expect(header["url"] as? String == Self.url)
    }

    @Test func postAsGetHasAnEmptyPayloadAndNamesTheAccountByKid() throws {
        let key = try PrivateKey.generate(.ecdsaP256)
        let account = "https://acme.test/acme/acct/17"
        let jws = try JSONWebSignature(
            payload: [], key: key, keyIdentifier: .kid(account), nonce: Self.nonce, url: "https://acme.test/order/1")
        let text = String(decoding: jws.jsonBytes, as: UTF8.self)
        #expect(text.hasPrefix("{\"protected\":\""))
        #expect(text.contains(",\"payload\":\"\",\"signature\":\""))
        let header = try headerObject(flattened(jws.jsonBytes).protected)
        #expect(Set(header.keys) == ["alg", "kid", "nonce", "url"])
        #expect(header["kid"] as? String == account)
    }

    @Test func rsaKeysAreRefused() throws {
        let key = try PrivateKey.generate(.rsa(bits: 2048))
        let error = #expect(throws: OpenSSLError.self) {
            try JSONWebSignature(payload: [], key: key, keyIdentifier: .kid("k"), nonce: "n", url: "u")
        }
        #expect(error?.code == .unsupportedKey)
    }

    /// The three members of a flattened JWS, parsed by Foundation.
    private func flattened(_ bytes: [UInt8]) throws -> (protected: String, payload: String, signature: String) {
        let object = try #require(JSONSerialization.jsonObject(with: Data(bytes)) as? [String: String])
        #expect(Set(object.keys) == ["protected", "payload", "signature"])
        return (object["protected"] ?? "", object["payload"] ?? "", object["signature"] ?? "")
    }

    private func headerObject(_ encoded: String) throws -> [String: Any] {
        let bytes = try #require(bytesOfBase64URL(encoded))
        return try #require(JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    /// Whether `openssl dgst -sha256 -prverify` accepts the r || s `signature` over `input` for the key in
    /// `directory/key.pem`, once turned back into DER.
    private func openSSLVerifies(_ input: [UInt8], signature: [UInt8], directory: String) throws -> Bool {
        try Data(input).write(to: URL(fileURLWithPath: directory + "/input"))
        try Data(ecdsaSigValue(signature)).write(to: URL(fileURLWithPath: directory + "/signature.der"))
        let result = try Command.run(
            "openssl",
            [
                "dgst", "-sha256", "-prverify", directory + "/key.pem", "-signature", directory + "/signature.der",
                directory + "/input",
            ])
        return result.status == 0 && result.stdout.contains("Verified OK")
    }

    /// r || s as DER `ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }` (RFC 3279 §2.2.3).
    private func ecdsaSigValue(_ signature: [UInt8]) -> [UInt8] {
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop { $0 == 0 })
            if value.isEmpty || value[0] & 0x80 != 0 { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let content = integer(signature.prefix(32)) + integer(signature.suffix(32))
        return [0x30, UInt8(content.count)] + content
    }
}
