import Testing

@testable import AASACore

/// FIPS 180-4's test vectors, as ETags spell them (lowercase hex). ``SHA256FingerprintTests`` checks the same
/// vectors as certificate fingerprints.
@Suite struct SHA256Tests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
    ])
    func hexSpellsTheDigest(text: String, expected: String) {
        #expect(SHA256.hex(Array(text.utf8)) == expected)
    }
}
