import AASATestSupport
import Foundation
import Testing

@testable import AASAOpenSSL

/// Sealing private keys at rest: AES-256-GCM with a versioned header, a fresh nonce and the context as AAD.
@Suite struct StoreKeyTests {
    /// A fixed key (its hex is what a key file holds), and the file it is said to come from.
    static let keyHex = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
    static let keyBytes = (0..<32).map { UInt8($0) }
    static let file = "/etc/aasa-server/store.key"
    static let context = Array("shop.example/privkey.pem".utf8)

    static func key() throws -> StoreKey { try StoreKey(key: keyBytes, file: file) }

    /// Whether Python's `cryptography` package can be imported (the independent AES-GCM implementation).
    static let pythonCryptography: Bool = {
        (try? Command.run("python3", ["-c", "import cryptography.hazmat.primitives.ciphers.aead"]).status) == 0
    }()

    @Test(arguments: ["ecdsa-p256", "rsa-2048", "openssl-genpkey-ed25519"])
    func aRealPEMPrivateKeyRoundTripsAndNoneOfItShowsInTheSealedBytes(kind: String) throws {
        let pem: [UInt8]
        switch kind {
        case "ecdsa-p256": pem = Array(try PrivateKey.generate(.ecdsaP256).pemEncoded().utf8)
        case "rsa-2048": pem = Array(try PrivateKey.generate(.rsa(bits: 2048)).pemEncoded().utf8)
        default:
            let generated = try Command.run("openssl", ["genpkey", "-algorithm", "ED25519"])
            #expect(generated.status == 0, "\(generated.stderr)")
            pem = generated.stdoutBytes
        }
        #expect(pem.starts(with: Array("-----BEGIN PRIVATE KEY-----".utf8)))
        let key = try Self.key()
        let sealed = try key.seal(pem, context: Self.context)

        #expect(sealed.count == pem.count + SealedFormat.overhead)
        #expect(Array(sealed.prefix(5)) == Array("AASK".utf8) + [1])
        #expect(try key.open(sealed, context: Self.context) == pem)
        // No run of 8 plaintext bytes anywhere in the sealed value (a byte or two match by chance; 8 do not).
        let windows = Set((0...(pem.count - 8)).map { Array(pem[$0..<($0 + 8)]) })
        let found = (0...(sealed.count - 8)).filter { windows.contains(Array(sealed[$0..<($0 + 8)])) }
        #expect(found.isEmpty, "plaintext runs at offsets \(found)")
        #expect(!String(decoding: sealed, as: UTF8.self).contains("PRIVATE KEY"))
        #expect(!String(decoding: sealed, as: UTF8.self).contains("-----"))
        if kind != "openssl-genpkey-ed25519" {
            #expect(try PrivateKey(pemEncoded: try key.open(sealed, context: Self.context)).bits > 0)
        }
    }

    @Test func twoSealsOfTheSameInputDifferInNonceAndCiphertext() throws {
        let key = try Self.key()
        let plaintext = Array("the same private key".utf8)
        let seals = try (0..<64).map { _ in try key.seal(plaintext, context: Self.context) }
        let nonces = Set(seals.map { Array($0[13..<25]) })
        #expect(nonces.count == seals.count)
        #expect(Set(seals).count == seals.count)
        #expect(Set(seals.map { Array($0.prefix(13)) }).count == 1)  // the header is the key's, the same each time
        for sealed in seals { #expect(try key.open(sealed, context: Self.context) == plaintext) }
    }

    @Test(arguments: [Array("".utf8), Array("x".utf8), [UInt8](repeating: 0, count: 4096)])
    func anyLengthFromEmptyRoundTrips(plaintext: [UInt8]) throws {
        let key = try Self.key()
        let sealed = try key.seal(plaintext, context: [])
        #expect(sealed.count == plaintext.count + 41)
        #expect(try key.open(sealed, context: []) == plaintext)
    }

    /// How a sealed value is damaged, and the error it must give.
    struct Damage: Sendable, CustomTestStringConvertible {
        var name: String
        var apply: @Sendable ([UInt8]) -> [UInt8]
        var expected: OpenSSLError.Code
        var testDescription: String { name }

        static func flip(_ name: String, at offset: @escaping @Sendable (Int) -> Int, _ code: OpenSSLError.Code)
            -> Damage
        {
            Damage(
                name: name,
                apply: { bytes in
                    var copy = bytes
                    copy[offset(bytes.count)] ^= 0x01
                    return copy
                }, expected: code)
        }
    }

    static let damages: [Damage] = [
        .flip("a bit of the magic", at: { _ in 0 }, .notSealed),
        .flip("a bit of the version", at: { _ in 4 }, .notSealed),
        .flip("a bit of the key id", at: { _ in 5 }, .sealedUnderAnotherKey),
        .flip("the last bit of the key id", at: { _ in 12 }, .sealedUnderAnotherKey),
        .flip("a bit of the nonce", at: { _ in 13 }, .sealedValueAltered),
        .flip("the last bit of the nonce", at: { _ in 24 }, .sealedValueAltered),
        .flip("a bit of the ciphertext", at: { _ in 25 }, .sealedValueAltered),
        .flip("a bit in the middle of the ciphertext", at: { $0 / 2 }, .sealedValueAltered),
        .flip("a bit of the tag", at: { $0 - 16 }, .sealedValueAltered),
        .flip("the last bit of the tag", at: { $0 - 1 }, .sealedValueAltered),
        Damage(name: "the last byte cut off", apply: { Array($0.dropLast()) }, expected: .sealedValueAltered),
        Damage(name: "the tag cut off", apply: { Array($0.dropLast(16)) }, expected: .sealedValueAltered),
        Damage(name: "a byte appended", apply: { $0 + [0] }, expected: .sealedValueAltered),
        Damage(name: "truncated below the overhead", apply: { Array($0.prefix(40)) }, expected: .notSealed),
        Damage(name: "only the magic", apply: { Array($0.prefix(4)) }, expected: .notSealed),
        Damage(name: "empty", apply: { _ in [] }, expected: .notSealed),
        Damage(
            name: "a plaintext PEM", apply: { _ in Array("-----BEGIN PRIVATE KEY-----\n".utf8) }, expected: .notSealed),
        Damage(
            name: "a later format version", apply: { Array($0.prefix(4)) + [2] + Array($0.dropFirst(5)) },
            expected: .notSealed),
    ]

    @Test(arguments: damages)
    func eachDamageFailsWithItsOwnErrorAndReturnsNothing(damage: Damage) throws {
        let key = try Self.key()
        let sealed = try key.seal(
            Array(String(repeating: "private key material ", count: 8).utf8), context: Self.context)
        let error = #expect(throws: OpenSSLError.self) {
            try key.open(damage.apply(sealed), context: Self.context)
        }
        #expect(error?.code == damage.expected, "\(error.map(String.init(describing:)) ?? "no error")")
        #expect(error?.reason.contains("shop.example/privkey.pem") == true)
    }

    @Test(arguments: ["other.example/privkey.pem", "shop.example/account.pem", "shop.example/privkey.pem ", ""])
    func aValueOpenedForAnotherContextFailsAuthentication(other: String) throws {
        let key = try Self.key()
        let sealed = try key.seal(Array("key of shop.example".utf8), context: Self.context)
        let error = #expect(throws: OpenSSLError.self) { try key.open(sealed, context: Array(other.utf8)) }
        #expect(error?.code == .sealedValueAltered)
        #expect(error?.reason.contains("sealed for another domain or file") == true)
    }

    @Test func aValueSealedUnderAnotherKeyIsNamedSoWithTheKeyFile() throws {
        let sealing = try StoreKey(key: (0..<32).map { UInt8(255 - $0) }, file: "/old/store.key")
        let sealed = try sealing.seal(Array("key".utf8), context: Self.context)
        let opening = try Self.key()
        let error = #expect(throws: OpenSSLError.self) { try opening.open(sealed, context: Self.context) }
        #expect(error?.code == .sealedUnderAnotherKey)
        #expect(
            error?.reason
                == "'shop.example/privkey.pem' was sealed under store key \(sealing.keyIDText), not under "
                + "\(opening.keyIDText) from \(Self.file); start with the key file it was sealed with "
                + "(--store-key-file)")
        #expect(sealing.keyIDText != opening.keyIDText)
    }

    @Test func theKeyIDIsThePrefixOfSHA256OfTheKeyAndNoDescriptionShowsTheKey() throws {
        let key = try Self.key()
        let digest = try Command.run("openssl", ["dgst", "-sha256", "-hex"], input: Self.keyBytes)
        #expect(digest.stdout.contains("= " + key.keyIDText))
        #expect(key.keyIDText.count == 16)
        for text in [key.description, key.debugDescription, "\(key)", String(reflecting: key)] {
            #expect(!text.contains(Self.keyHex))
            #expect(!text.contains(String(Self.keyHex.prefix(16))))
            #expect(text.contains(Self.file))
        }
        var dumped = ""
        dump(key, to: &dumped)
        #expect(!dumped.contains(String(Self.keyHex.prefix(16))))
    }

    @Test(arguments: [0, 16, 31, 33, 64])
    func aKeyOfAnyLengthBut32BytesIsRefused(length: Int) {
        let error = #expect(throws: OpenSSLError.self) {
            try StoreKey(key: [UInt8](repeating: 7, count: length), file: Self.file)
        }
        #expect(error?.code == .storeKey)
        #expect(error?.reason.contains(Self.file) == true)
    }

    @Test func theSizeLimitIsCheckedBeforeAnyWork() throws {
        let key = try Self.key()
        let limit = SealedFormat.maximumPlaintextBytes
        let largest = [UInt8](repeating: 1, count: limit)
        #expect(try key.open(try key.seal(largest, context: []), context: []) == largest)
        let sealError = #expect(throws: OpenSSLError.self) {
            try key.seal(largest + [1], context: [])
        }
        #expect(sealError?.code == .sealing)
        // A value claiming more than the limit is refused from its length, before decryption.
        let oversized = SealedFormat.magic + [1] + key.keyID + [UInt8](repeating: 0, count: limit + 12 + 16 + 1)
        let openError = #expect(throws: OpenSSLError.self) { try key.open(oversized, context: []) }
        #expect(openError?.code == .notSealed)
    }

    /// A published answer, so the cipher is checked even where Python's `cryptography` is not installed: test case 16
    /// of McGrew and Viega's GCM specification (AES-256, 96-bit IV, 20 bytes of AAD, 60 bytes of plaintext), which
    /// NIST's GCM validation vectors include.
    @Test func theCipherGivesThePublishedAES256GCMTestVector() throws {
        func bytes(_ hex: String) -> [UInt8] {
            let digits = Array(hex.utf8)
            return stride(from: 0, to: digits.count, by: 2).map {
                UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)!
            }
        }
        let key = bytes("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
        let nonce = bytes("cafebabefacedbaddecaf888")
        let additional = bytes("feedfacedeadbeeffeedfacedeadbeefabaddad2")
        let plaintext = bytes(
            "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5"
                + "aa0de657ba637b39")
        let ciphertext = bytes(
            "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e63"
                + "93ba7a0abcc9f662")
        let tag = bytes("76fc6ece0f4e1768cddf8853bb2d551b")
        try key.withUnsafeBufferPointer { key in
            let sealed = try StoreKey.gcmSeal(
                key: key.baseAddress!, nonce: nonce, additional: additional, plaintext: plaintext)
            #expect(sealed.ciphertext == ciphertext)
            #expect(sealed.tag == tag)
            let opened = try StoreKey.gcmOpen(
                key: key.baseAddress!, nonce: nonce, additional: additional, ciphertext: ciphertext[...], tag: tag)
            #expect(opened == plaintext)
            var altered = tag
            altered[0] ^= 0x80
            #expect(
                try StoreKey.gcmOpen(
                    key: key.baseAddress!, nonce: nonce, additional: additional, ciphertext: ciphertext[...],
                    tag: altered) == nil)
        }
    }

    /// An independent implementation (Python's `cryptography`, over OpenSSL through its own bindings) reads what
    /// this one seals and seals what this one reads, with the header and the context as the AAD.
    @Test(.enabled(if: pythonCryptography, "python3 with the cryptography package"))
    func pythonCryptographyOpensWhatIsSealedAndSealsWhatOpens() throws {
        let key = try Self.key()
        let plaintext = Array(try PrivateKey.generate().pemEncoded().utf8)
        let sealed = try key.seal(plaintext, context: Self.context)
        let script = """
            import sys, hashlib, os
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM
            key = bytes.fromhex(sys.argv[1]); context = sys.argv[2].encode(); mode = sys.argv[3]
            data = sys.stdin.buffer.read()
            if mode == "open":
                header, nonce, body = data[:13], data[13:25], data[25:]
                assert header[:5] == b"AASK\\x01" and header[5:] == hashlib.sha256(key).digest()[:8]
                sys.stdout.buffer.write(AESGCM(key).decrypt(nonce, body, header + context))
            else:
                header = b"AASK\\x01" + hashlib.sha256(key).digest()[:8]; nonce = os.urandom(12)
                sys.stdout.buffer.write(header + nonce + AESGCM(key).encrypt(nonce, data, header + context))
            """
        let context = String(decoding: Self.context, as: UTF8.self)
        let opened = try Command.run("python3", ["-c", script, Self.keyHex, context, "open"], input: sealed)
        #expect(opened.status == 0, "\(opened.stderr)")
        #expect(opened.stdoutBytes == plaintext)

        let sealedByPython = try Command.run("python3", ["-c", script, Self.keyHex, context, "seal"], input: plaintext)
        #expect(sealedByPython.status == 0, "\(sealedByPython.stderr)")
        #expect(try key.open(sealedByPython.stdoutBytes, context: Self.context) == plaintext)

        let otherContext = try Command.run(
            "python3", ["-c", script, Self.keyHex, "other.example/privkey.pem", "open"], input: sealed)
        #expect(otherContext.status != 0 && otherContext.stderr.contains("InvalidTag"))
    }

    /// The store opens every domain's key at start: 10,000 seal-and-open pairs of a P-256 PEM (241 bytes) take a few
    /// tens of milliseconds; the bound is far above that and far below a per-call cost that would slow a start.
    @Test func tenThousandSealsAndOpensTakeWellUnderTenSeconds() throws {
        let key = try Self.key()
        let plaintext = Array(try PrivateKey.generate().pemEncoded().utf8)
        let clock = ContinuousClock()
        let elapsed = try clock.measure {
            for index in 0..<10_000 {
                let context = Array("domain-\(index).example/privkey.pem".utf8)
                guard try key.open(key.seal(plaintext, context: context), context: context) == plaintext else {
                    Issue.record("round trip \(index) differs")
                    return
                }
            }
        }
        print("10,000 seal+open pairs: \(elapsed)")
        #expect(elapsed < .seconds(10))
    }
}
