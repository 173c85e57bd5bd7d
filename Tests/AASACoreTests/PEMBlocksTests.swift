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
}
