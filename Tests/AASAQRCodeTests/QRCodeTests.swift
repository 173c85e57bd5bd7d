import AASACore
import AASAQRCode
import AASATestSupport
import Foundation
import Testing

/// QR codes read back by a real decoder: the SVG's path is drawn into a PGM image and `zbarimg` reads it.
@Suite struct QRCodeTests {
    /// A URL of exactly `bytes` bytes on shop.example.
    static func url(bytes: Int) -> String {
        let base = "https://shop.example/p/"
        return base + String(repeating: "a", count: bytes - base.utf8.count)
    }

    static let urls = [
        "https://shop.example/", "https://shop.example/products/42?ref=mail",
        "https://shop.example/search?q=a&b=%3Cscript%3E&c=1", "https://shop.example/<not-escaped>&\"'",
        "https://xn--bcher-kva.example/b%C3%BCcher/", url(bytes: 300), url(bytes: QRCode.maximumTextBytes),
    ]

    @Test(arguments: urls) func theSVGDecodesBackToTheURL(_ url: String) throws {
        let code = try QRCode(text: url)
        let svg = QRCodeSVG(code, label: url).markup
        let (side, dark) = try ZBar.modules(ofSVG: svg)
        #expect(side == code.size + 2 * QRCodeSVG.quietZone)
        // The quiet zone is light.
        #expect(dark.allSatisfy { $0.allSatisfy { (QRCodeSVG.quietZone..<(side - QRCodeSVG.quietZone)).contains($0) } })
        let folder = TemporaryDirectory("aasa-qr")
        let file = folder.path + "/code.pgm"
        try Data(ZBar.pgm(side: side, scale: 4) { dark.contains([$0, $1]) }).write(to: URL(fileURLWithPath: file))
        #expect(try ZBar.decode(file) == [url])
    }

    @Test func theSVGIsOneEscapedLabelledImageWithoutScript() throws {
        let url = "https://shop.example/a?b=1&c=<x>\"'"
        let svg = QRCodeSVG(try QRCode(text: url), label: url).markup
        let escaped = "https://shop.example/a?b=1&amp;c=&lt;x&gt;&quot;&#39;"
        #expect(svg.hasPrefix("<svg ") && svg.hasSuffix("</svg>"))
        #expect(svg.contains("role=\"img\" aria-label=\"\(escaped)\""))
        #expect(svg.contains("<title>\(escaped)</title>"))
        #expect(svg.contains("shape-rendering=\"crispEdges\""))
        #expect(svg.components(separatedBy: "<path").count == 2)
        #expect(!svg.contains("<x>") && !svg.lowercased().contains("script"))
    }

    @Test func aTypicalURLGivesASmallSVG() throws {
        let url = "https://shop.example/products/1234567890"  // 40 characters
        #expect(url.utf8.count == 40)
        let svg = QRCodeSVG(try QRCode(text: url), label: url).markup
        #expect(svg.utf8.count < 4096, "\(svg.utf8.count) bytes")
        let largest = QRCodeSVG(try QRCode(text: Self.url(bytes: QRCode.maximumTextBytes)), label: "x").markup
        // Version 40: at most one run per two modules of 177 × 177, about 20 bytes each.
        #expect(largest.utf8.count < 400_000, "\(largest.utf8.count) bytes")
    }

    @Test(arguments: [
        (QRCode.maximumTextBytes + 1, QRCodeError.Code.textTooLong),
        // Over what libqrencode itself can hold (2,331 bytes at level M): still our refusal, so never the C call.
        (5000, .textTooLong), (0, .emptyText),
    ])
    func textOverTheCapIsRefusedBeforeLibqrencode(_ bytes: Int, _ code: QRCodeError.Code) throws {
        let text = bytes == 0 ? "" : Self.url(bytes: bytes)
        #expect(text.utf8.count == bytes)
        let error = try #require(throws: QRCodeError.self) { try QRCode(text: text) }
        #expect(error.code == code)
        #expect(error.reason.contains(bytes == 0 ? "at least one byte" : "\(QRCode.maximumTextBytes) bytes"))
    }

    @Test func symbolsAreMadeAtLevelMInTheSmallestVersion() throws {
        // Level M, 8-bit: version 1 holds 14 bytes, version 2 26 bytes.
        #expect(try QRCode(text: String(repeating: "a", count: 14)).version == 1)
        #expect(try QRCode(text: String(repeating: "a", count: 15)).version == 2)
        #expect(try QRCode(text: String(repeating: "a", count: 26)).size == 25)
        // 2,048 bytes at level M: version 38 (version 40 holds 2,331 bytes), 169 modules a side.
        let largest = try QRCode(text: Self.url(bytes: QRCode.maximumTextBytes))
        #expect(largest.version == 38 && largest.size == 169, "version \(largest.version)")
    }

    /// A desktop rendering draws one code: 0.2 ms for a typical URL and 5 ms for the largest were measured in a debug
    /// build; the bounds are 25x and 20x above, far below what drawing per request without a cap would cost.
    @Test(arguments: [("https://shop.example/products/1234567890", 5.0), (url(bytes: QRCode.maximumTextBytes), 100.0)])
    func drawingACodeTakesMillisecondsAtMost(url: String, boundMilliseconds: Double) throws {
        let rounds = 50
        let clock = ContinuousClock()
        var bytes = 0
        let elapsed = try clock.measure {
            for _ in 0..<rounds { bytes += QRCodeSVG(try QRCode(text: url), label: url).markup.utf8.count }
        }
        let each =
            Double(elapsed.components.attoseconds) / 1e15 / Double(rounds)
            + Double(elapsed.components.seconds) * 1000 / Double(rounds)
        print("QR code of \(url.utf8.count) bytes: \(each) ms, \(bytes / rounds) bytes of SVG")
        #expect(each < boundMilliseconds, "\(each) ms")
    }

    @Test func codesAreMadeOnManyThreadsAtOnce() async throws {
        let urls = (0..<64).map { "https://shop.example/item/\($0)" }
        let serial = try urls.map { try QRCode(text: $0) }
        let parallel = try await withThrowingTaskGroup(of: (Int, QRCode).self) { group in
            for (index, url) in urls.enumerated() { group.addTask { (index, try QRCode(text: url)) } }
            var codes = [QRCode?](repeating: nil, count: urls.count)
            for try await (index, code) in group { codes[index] = code }
            return codes
        }
        #expect(parallel == serial)
    }
}
