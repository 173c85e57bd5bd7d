import AASATestSupport
import Foundation
import Testing

@testable import AASACore

/// PEM as certificate chains are written: blocks among other text, base64 bodies decoded strictly.
@Suite struct PEMBlocksTests {
    @Test func theBase64OfPEMBodiesDecodesAsFoundationDecodes() throws {
        var generator = SeededRandomNumberGenerator(seed: 0x5EED_0001)
        for length in 0..<200 {
            let bytes = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let body = Data(bytes).base64EncodedString(options: .lineLength64Characters)
            #expect(Base64.decode(Array(body.utf8)[...]) == bytes)
        }
        // Whitespace anywhere, a group split across lines; data after the padding, in a group of its own.
        #expect(Base64.decode(Array("AA\nEC Aw\r\n==".utf8)[...]) == [0, 1, 2, 3])
        #expect(Base64.decode(Array("AAEC\nAw==AAEC".utf8)[...]) == nil)
        for bad in ["A", "AB", "ABC", "A===", "AB=C", "AB==C", "AB*=", "AAA=A===", "AAECAA*C", "AAECAAE"] {
            #expect(Base64.decode(Array(bad.utf8)[...]) == nil, "\(bad)")
        }
    }

    @Test func blocksAreFoundAmongOtherTextAndCheckedWhole() throws {
        let text =
            "subject=CN = a\r\n-----BEGIN CERTIFICATE-----\r\nAAEC\r\n-----END CERTIFICATE-----\r\n"
            + "note\n-----BEGIN X509 CERTIFICATE-----\nAw==\n-----END X509 CERTIFICATE-----\n"
            + "-----BEGIN PRIVATE KEY-----\nBA==\n-----END PRIVATE KEY-----\n"
        let blocks = try PEMBlocks(Array(text.utf8)).blocks
        #expect(blocks.map(\.label) == ["CERTIFICATE", "X509 CERTIFICATE", "PRIVATE KEY"])
        #expect(blocks.map(\.bytes) == [[0, 1, 2], [3], [4]])
        #expect(blocks.map(\.isCertificate) == [true, true, false])
        for broken in [
            "-----BEGIN CERTIFICATE-----\nAAEC\n",  // no END line
            "-----BEGIN CERTIFICATE-----\nAAEC\n-----END X509 CERTIFICATE-----\n",  // another label
            "-----BEGIN CERTIFICATE-----\nProc-Type: 4,ENCRYPTED\n\nAAEC\n-----END CERTIFICATE-----\n",
            "-----BEGIN CERTIFICATE-----\nAA*C\n-----END CERTIFICATE-----\n",
        ] {
            #expect(throws: PEMBlocks.Failure.self) { try PEMBlocks(Array(broken.utf8)) }
        }
    }

    /// A chain's later blocks (its intermediates, the same in every folder of a CA's domains) are decoded once and
    /// their bytes shared; a body is taken only for the same text, within the bounds, and a failure is not kept.
    @Test func recurringBodiesAreDecodedOnceAndOnlyForTheSameText() throws {
        let bodies = RecurringPEMBodies()
        var decoded = 0
        func bytes(_ text: String) -> [UInt8]? {
            bodies.bytes(of: Array(text.utf8)[...]) { text in
                decoded += 1
                return Base64.decode(text)
            }
        }
        #expect(bytes("AAEC\nAw==\n") == [0, 1, 2, 3] && decoded == 1)
        #expect(bytes("AAEC\nAw==\n") == [0, 1, 2, 3] && decoded == 1)
        // The same length, another text.
        #expect(bytes("AAEC\nBA==\n") == [0, 1, 2, 4] && decoded == 2)
        #expect(bytes("AAEC\nAw==\n") == [0, 1, 2, 3] && decoded == 2)
        // Not base64: nil, each time, and nothing kept in its place.
        #expect(bytes("AA*C\nAw==\n") == nil && decoded == 3)
        #expect(bytes("AA*C\nAw==\n") == nil && decoded == 4)
        // Past the capacity the oldest goes: every body still decodes to its own bytes.
        let many = (0..<RecurringPEMBodies.capacity + 2).map { index in
            Data([UInt8(index), 7, 7]).base64EncodedString()
        }
        for (index, text) in many.enumerated() { #expect(bytes(text) == [UInt8(index), 7, 7]) }
        decoded = 0
        #expect(bytes("AAEC\nAw==\n") == [0, 1, 2, 3] && decoded == 1)
        #expect(bytes(many.last!) == [UInt8(many.count - 1), 7, 7] && decoded == 1)
        // Too long to keep, or empty: decoded each time.
        let long = Data(repeating: 9, count: RecurringPEMBodies.maximumTextBytes).base64EncodedString()
        decoded = 0
        #expect(bytes(long) == [UInt8](repeating: 9, count: RecurringPEMBodies.maximumTextBytes) && decoded == 1)
        #expect(bytes(long) != nil && decoded == 2)
        #expect(bytes("") == [] && bytes("") == [] && decoded == 4)
    }

    /// Two chains with the same intermediate after different leaves read as each alone does.
    @Test func chainsSharingAnIntermediateReadAsTheyWouldAlone() throws {
        var generator = SeededRandomNumberGenerator(seed: 0x5EED_0002)
        func block(_ bytes: [UInt8]) -> String {
            "-----BEGIN CERTIFICATE-----\n" + Data(bytes).base64EncodedString(options: .lineLength64Characters)
                + "\n-----END CERTIFICATE-----\n"
        }
        let intermediate = (0..<1100).map { _ in UInt8.random(in: 0...255, using: &generator) }
        let recurring = RecurringPEMBodies()
        for _ in 0..<3 {
            let leaf = (0..<700).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let blocks = try PEMBlocks(Array((block(leaf) + block(intermediate)).utf8), recurring: recurring).blocks
            #expect(blocks.map(\.bytes) == [leaf, intermediate])
        }
        // The intermediate alone is kept, once; the leaves are not.
        #expect(recurring.count == 1)
        // An intermediate whose text breaks is still refused, named by its place.
        let broken = block([1, 2, 3]) + "-----BEGIN CERTIFICATE-----\nAA*C\n-----END CERTIFICATE-----\n"
        #expect(throws: PEMBlocks.Failure.self) { try PEMBlocks(Array(broken.utf8)) }
        do {
            _ = try PEMBlocks(Array(broken.utf8))
        } catch {
            #expect(error.reason == "block 2 is not valid base64")
        }
    }

    /// Only a certificate that follows a certificate is kept: a key is never held beyond its reading (the second block
    /// of OpenSSL's EC key file, a key after a chain), nor a leaf after other text.
    @Test func onlyACertificateAfterACertificateIsKept() throws {
        func block(_ label: String, _ bytes: [UInt8]) -> String {
            "-----BEGIN \(label)-----\n" + Data(bytes).base64EncodedString(options: .lineLength64Characters)
                + "\n-----END \(label)-----\n"
        }
        let key = [UInt8](repeating: 0x4B, count: 121)
        let leaf = [UInt8](repeating: 0x4C, count: 700)
        let recurring = RecurringPEMBodies()
        func read(_ text: String) throws -> [[UInt8]] {
            try PEMBlocks(Array(text.utf8), recurring: recurring).blocks.map(\.bytes)
        }
        #expect(try read(block("EC PARAMETERS", [6, 8, 42]) + block("EC PRIVATE KEY", key)) == [[6, 8, 42], key])
        #expect(try read(block("CERTIFICATE", leaf) + block("PRIVATE KEY", key)) == [leaf, key])
        #expect(try read(block("PRIVATE KEY", key) + block("CERTIFICATE", leaf)) == [key, leaf])
        #expect(recurring.count == 0)
        let intermediate = [UInt8](repeating: 0x49, count: 900)
        #expect(try read(block("CERTIFICATE", leaf) + block("X509 CERTIFICATE", intermediate)) == [leaf, intermediate])
        #expect(recurring.count == 1)
    }
}
