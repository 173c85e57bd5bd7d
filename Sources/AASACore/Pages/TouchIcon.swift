/// One apple-touch-icon: a square PNG served from `pages/` (spec §6).
public struct TouchIcon: Sendable, Hashable {
    /// The URL path it is served at, e.g. `/apple-touch-icon-180x180.png` (decoded).
    public var path: String
    /// Width and height in pixels.
    public var size: Int

    /// Creates an icon.
    public init(path: String, size: Int) {
        self.path = path
        self.size = size
    }

    /// The path as an HTML attribute value: percent-encoded where needed, then escaped.
    var escapedHref: String {
        String(decoding: HTMLEscape.escape(URLText.encode(path.utf8, encodeCommas: false)), as: UTF8.self)
    }

    /// Apple's choice for a device that wants `wanted` pixels (spec §6, §10.8): the exact size, else the
    /// smallest larger one, else the largest. Ties go to the first icon listed.
    public static func best(for wanted: Int, among icons: [TouchIcon]) -> TouchIcon? {
        if let exact = icons.first(where: { $0.size == wanted }) { return exact }
        if let larger = icons.filter({ $0.size > wanted }).min(by: { $0.size < $1.size }) { return larger }
        return icons.max { $0.size < $1.size }
    }

    /// The size Safari asks for with a probe path (`/apple-touch-icon.png`, `/apple-touch-icon-precomposed.png`,
    /// `/apple-touch-icon-NxN.png`, `/apple-touch-icon-NxN-precomposed.png`), or `nil` when `path` is not one.
    /// Without a size, 180 (today's iPhones) is what the device wants.
    public static func probeSize(_ path: String) -> Int? {
        guard path.hasPrefix("/apple-touch-icon"), path.hasSuffix(".png") else { return nil }
        var middle = path.dropFirst("/apple-touch-icon".count).dropLast(".png".count)
        if middle.hasSuffix("-precomposed") { middle = middle.dropLast("-precomposed".count) }
        if middle.isEmpty { return 180 }
        guard middle.first == "-" else { return nil }
        let parts = middle.dropFirst().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0] == parts[1], parts[0].count <= 4, let size = Int(parts[0]), size > 0,
            parts[0].allSatisfy(\.isASCII)
        else { return nil }
        return size
    }
}

/// What a PNG file's header says (the IHDR chunk), read without any image library.
public struct PNGInfo: Sendable, Hashable {
    /// Width in pixels.
    public var width: Int
    /// Height in pixels.
    public var height: Int

    /// The PNG signature every file starts with.
    static let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]

    /// Reads the signature and the IHDR chunk (always first); `nil` when `bytes` is not a PNG.
    public init?(_ bytes: [UInt8]) {
        guard bytes.count >= 24, bytes.starts(with: Self.signature), bytes[12..<16].elementsEqual("IHDR".utf8) else {
            return nil
        }
        func word(_ offset: Int) -> Int {
            Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8
                | Int(bytes[offset + 3])
        }
        width = word(16)
        height = word(20)
        guard width > 0, height > 0 else { return nil }
    }
}
