public import AASACore

/// A QR code drawn as one inline `<svg>`: a white square with a quiet zone of ``quietZone`` modules, the dark
/// modules as one `<path>` (each row's runs of dark modules merged into one rectangle), no script.
public struct QRCodeSVG: Sendable, Hashable {
    /// The light border on each side, in modules: the 4 ISO/IEC 18004 asks for, so a scanner finds the symbol
    /// against any background.
    public static let quietZone = 4
    /// The least and most CSS pixels per side: at least 4 pixels per module for small symbols, so a phone's camera
    /// reads it off a screen, without growing past a third of a laptop's screen for the largest.
    public static let pixelRange = 192...480

    /// The markup.
    public let markup: String

    /// Draws `code`, labelled (`aria-label` and `<title>`) with `label`, which is HTML-escaped.
    public init(_ code: QRCode, label: String) {
        let side = code.size + 2 * Self.quietZone
        let pixels = min(max(side * 4, Self.pixelRange.lowerBound), Self.pixelRange.upperBound)
        let escaped = HTMLEscape.escape(label)
        // Bytes, not string interpolation: drawing is most of what a desktop rendering of a new URL costs.
        var path: [UInt8] = []
        path.reserveCapacity(code.size * code.size * 2)
        code.modules.withUnsafeBufferPointer { modules in
            for row in 0..<code.size {
                let offset = row * code.size
                var column = 0
                while column < code.size {
                    guard modules[offset + column] else {
                        column += 1
                        continue
                    }
                    let start = column
                    while column < code.size && modules[offset + column] { column += 1 }
                    let width = column - start
                    path.append(UInt8(ascii: "M"))
                    Self.append(start + Self.quietZone, to: &path)
                    path.append(UInt8(ascii: " "))
                    Self.append(row + Self.quietZone, to: &path)
                    path.append(UInt8(ascii: "h"))
                    Self.append(width, to: &path)
                    path += [UInt8(ascii: "v"), UInt8(ascii: "1"), UInt8(ascii: "h"), UInt8(ascii: "-")]
                    Self.append(width, to: &path)
                    path.append(UInt8(ascii: "z"))
                }
            }
        }
        markup =
            "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(side) \(side)\" width=\"\(pixels)\" "
            + "height=\"\(pixels)\" shape-rendering=\"crispEdges\" role=\"img\" aria-label=\"\(escaped)\">"
            + "<title>\(escaped)</title><rect width=\"\(side)\" height=\"\(side)\" fill=\"#fff\"/>"
            + "<path fill=\"#000\" d=\"\(String(decoding: path, as: UTF8.self))\"/></svg>"
    }

    /// Appends the decimal digits of `value` (0 or more).
    private static func append(_ value: Int, to bytes: inout [UInt8]) {
        if value >= 10 { append(value / 10, to: &bytes) }
        bytes.append(UInt8(ascii: "0") + UInt8(value % 10))
    }
}

extension PageQRCode {
    /// QR codes made with libqrencode (``QRCode``), drawn by ``QRCodeSVG``; `nil` for a URL over
    /// ``QRCode/maximumTextBytes``.
    public static let libqrencode = PageQRCode { url in
        guard let code = try? QRCode(text: url) else { return nil }
        return QRCodeSVG(code, label: "QR code of " + url).markup
    }
}
