import Testing

@testable import AASACore

/// FIPS 180-4's test vectors, in the two forms the server prints: ETags (lowercase hex) and certificate
/// fingerprints (uppercase pairs joined by `:`, as `openssl x509 -fingerprint -sha256`).
@Suite struct SHA256Tests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
    ])
    func hexAndFingerprintSpellTheSameDigest(text: String, expected: String) {
        #expect(SHA256.hex(Array(text.utf8)) == expected)
        let pairs = stride(from: 0, to: expected.count, by: 2).map { offset -> String in
            let start = expected.index(expected.startIndex, offsetBy: offset)
            return String(expected[start..<expected.index(start, offsetBy: 2)]).uppercased()
        }
        #expect(SHA256.fingerprint(Array(text.utf8)) == pairs.joined(separator: ":"))
    }
}
