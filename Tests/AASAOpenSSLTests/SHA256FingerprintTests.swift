import AASACore
import Synchronization
import Testing

@testable import AASAOpenSSL

/// FIPS 180-4's test vectors as certificate fingerprints spell them: uppercase hex pairs joined by `:`, as `openssl
/// x509 -fingerprint -sha256` prints them (``X509CertificateTests`` compares a real certificate's with that command).
@Suite struct SHA256FingerprintTests {
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
    ])
    func spellsTheDigestAsOpenSSLDoes(text: String, expected: String) {
        let fingerprint = SHA256Fingerprint(der: Array(text.utf8))
        let pairs = stride(from: 0, to: expected.count, by: 2).map { offset -> String in
            let start = expected.index(expected.startIndex, offsetBy: offset)
            return String(expected[start..<expected.index(start, offsetBy: 2)]).uppercased()
        }
        #expect(fingerprint.description == pairs.joined(separator: ":"))
        let hex: [String] = fingerprint.bytes.map { byte in (byte < 16 ? "0" : "") + String(byte, radix: 16) }
        #expect(hex.joined() == expected)
        #expect(fingerprint == SHA256Fingerprint(der: Array(text.utf8)))
        #expect(fingerprint != SHA256Fingerprint(der: Array((text + "!").utf8)))
    }

    /// The core's SHA-256 (ETags) gives OpenSSL's digest for every length around the block boundaries, where the
    /// padding takes one block or two.
    @Test func theCoresDigestIsOpenSSLsAtEveryLength() {
        var generator = SystemRandomNumberGenerator()
        for length in 0...300 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            #expect(SHA256.portableDigest(bytes) == SHA256Fingerprint(der: bytes).bytes, "length \(length)")
        }
    }

    /// With OpenSSL's installed (as the server installs it), the core's digests are made by it, and are the same.
    @Test func theCoreHashesWithTheInstalledDigest() {
        let calls = Mutex(0)
        SHA256.install { bytes in
            calls.withLock { $0 += 1 }
            return SHA256Digest.bytes(of: bytes)
        }
        let bytes = Array("every ETag of a start".utf8)
        let before = calls.withLock { $0 }
        #expect(SHA256.digest(bytes) == SHA256.portableDigest(bytes))
        #expect(calls.withLock { $0 } > before)
        #expect(SHA256.hex(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
