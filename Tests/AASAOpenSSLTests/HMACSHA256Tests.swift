import AASAOpenSSL
import Testing

/// HMAC-SHA256 against the test vectors of RFC 4231 §4.
@Suite struct HMACSHA256Tests {
    struct Vector: Sendable, CustomTestStringConvertible {
        var name: String
        var key: [UInt8]
        var data: [UInt8]
        var mac: String
        /// Test case 5 compares only the first 128 bits.
        var truncatedTo: Int = 32
        var testDescription: String { name }
    }

    static func bytes(hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            result.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return result
    }

    static let vectors: [Vector] = [
        Vector(
            name: "4.2: a 20-byte key", key: [UInt8](repeating: 0x0b, count: 20), data: Array("Hi There".utf8),
            mac: "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        Vector(
            name: "4.3: a key shorter than the output", key: Array("Jefe".utf8),
            data: Array("what do ya want for nothing?".utf8),
            mac: "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        Vector(
            name: "4.4: 50 bytes of 0xdd", key: [UInt8](repeating: 0xaa, count: 20),
            data: [UInt8](repeating: 0xdd, count: 50),
            mac: "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        Vector(
            name: "4.5: a 25-byte key", key: bytes(hex: "0102030405060708090a0b0c0d0e0f10111213141516171819"),
            data: [UInt8](repeating: 0xcd, count: 50),
            mac: "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        Vector(
            name: "4.6: truncated output", key: [UInt8](repeating: 0x0c, count: 20),
            data: Array("Test With Truncation".utf8), mac: "a3b6167473100ee06e0c796c2955552b", truncatedTo: 16),
        Vector(
            name: "4.7: a key longer than the block size", key: [UInt8](repeating: 0xaa, count: 131),
            data: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            mac: "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        Vector(
            name: "4.8: a long key and long data", key: [UInt8](repeating: 0xaa, count: 131),
            data: Array(
                ("This is a test using a larger than block-size key and a larger than block-size data. The key needs "
                    + "to be hashed before being used by the HMAC algorithm.").utf8),
            mac: "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ]

    @Test(arguments: vectors) func theCodeIsRFC4231s(_ vector: Vector) {
        let code = HMACSHA256.authenticationCode(key: vector.key, message: vector.data)
        #expect(code.count == 32)
        #expect(Array(code.prefix(vector.truncatedTo)) == Self.bytes(hex: vector.mac))
    }

    @Test func anEmptyKeyAndMessageHaveTheirOwnCode() {
        // `printf '' | openssl dgst -sha256 -hmac ''`: an empty key is a key of zero bytes, not no key.
        #expect(
            HMACSHA256.authenticationCode(key: [], message: [])
                == Self.bytes(hex: "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad"))
    }
}
