import AASAOpenSSL
import AASATestSupport
import Foundation
import Testing

@Suite struct JSONWebKeyTests {
    /// RFC 7638 §3.1: the RSA key of RFC 7517 Appendix A.1 and its SHA-256 thumbprint.
    @Test func thumbprintMatchesRFC7638Example() {
        let members = [
            "e": "AQAB",
            "kty": "RSA",
            "n":
                "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw",
        ]
        #expect(JSONWebKey.thumbprint(requiredMembers: members) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
    }

    @Test func coordinatesAreThePointOpenSSLExports() throws {
        let directory = try makeTemporaryDirectory()
        defer { removeDirectory(directory) }
        // Several keys, so a coordinate with leading zero bytes (1 in 128 per key) is likely to come up sometimes.
        for _ in 0..<8 {
            let key = try PrivateKey.generate(.ecdsaP256)
            try key.pemEncoded().write(toFile: directory + "/key.pem", atomically: true, encoding: .utf8)
            let exported = try Command.run(
                "openssl", ["pkey", "-in", directory + "/key.pem", "-pubout", "-outform", "DER"])
            #expect(exported.status == 0, "\(exported.stderr)")
            let jwk = try JSONWebKey(publicKeyOf: key)
            // SubjectPublicKeyInfo ends with the uncompressed point 04 || x || y (SEC 1 §2.3.3).
            #expect(Array(exported.stdoutBytes.suffix(65)) == [0x04] + jwk.x + jwk.y)
            #expect(jwk.members["crv"] == "P-256")
            #expect(jwk.members["kty"] == "EC")
            #expect(jwk.members["x"]?.count == 43)
            #expect(jwk.members["y"]?.count == 43)
        }
    }

    @Test func thumbprintIsSHA256OfTheCanonicalECKeyAsOpenSSLHashesIt() throws {
        let jwk = try JSONWebKey(publicKeyOf: PrivateKey.generate(.ecdsaP256))
        let members = jwk.members
        let canonical = "{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"\(members["x"]!)\",\"y\":\"\(members["y"]!)\"}"
        let digest = try Command.run("openssl", ["dgst", "-sha256", "-binary"], input: Array(canonical.utf8))
        #expect(digest.status == 0)
        #expect(jwk.thumbprint == base64URL(digest.stdoutBytes))
    }

    @Test func keyAuthorizationIsTokenDotThumbprint() throws {
        let jwk = try JSONWebKey(publicKeyOf: PrivateKey.generate(.ecdsaP256))
        let token = "evaGxfADs6pSRb2LAv9IZf17Dt3juxGJ-PCt92wr-oA"
        #expect(jwk.keyAuthorization(token: token) == token + "." + jwk.thumbprint)
        #expect(jwk.thumbprint.count == 43)
    }

    @Test func rsaKeysAreRefused() throws {
        let key = try PrivateKey.generate(.rsa(bits: 2048))
        let error = #expect(throws: OpenSSLError.self) { try JSONWebKey(publicKeyOf: key) }
        #expect(error?.code == .unsupportedKey)
    }
}

/// Base64url without padding, through Foundation: an encoder independent of the one under test.
func base64URL(_ bytes: [UInt8]) -> String {
    Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-")
        .replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
}

/// The bytes of base64url `text`, through Foundation.
func bytesOfBase64URL(_ text: String) -> [UInt8]? {
    var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    standard += String(repeating: "=", count: (4 - standard.count % 4) % 4)
    return Data(base64Encoded: standard).map { [UInt8]($0) }
}
