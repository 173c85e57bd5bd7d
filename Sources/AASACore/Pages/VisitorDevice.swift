/// What kind of device a page's visitor is on, from its `User-Agent`: decides whether a page shows the QR code
/// that sends a desktop visitor to their phone.
public enum VisitorDevice: Sendable, Hashable {
    /// A desktop browser: gets the QR code.
    case desktop
    /// Anything else (a phone or tablet, a crawler, a non-browser client, no `User-Agent`): the page as it is.
    case other

    /// Tokens of a `User-Agent` (matched ASCII case-insensitively anywhere in it) that make a visitor not a
    /// desktop one: phones and tablets (Android tablets say `Android`; iPadOS's Safari asks for desktop pages and
    /// sends a Mac `User-Agent`, so it is seen as a desktop), and crawlers and link-preview fetchers, which have
    /// no phone to scan with.
    public static let nonDesktopTokens = [
        "iphone", "ipad", "ipod", "android", "mobile", "bot", "crawl", "spider", "slurp", "facebookexternalhit",
        "embedly", "preview",
    ]

    /// The longest `User-Agent` read: a longer one is not a desktop browser's (they send 100–200 bytes), and the
    /// scan stays bounded whatever a client sends.
    public static let maximumUserAgentBytes = 512

    /// A desktop browser sends a `User-Agent` starting `Mozilla/` (every browser engine does) with none of the
    /// ``nonDesktopTokens``; everything else, a missing or over-long header included, is ``other``.
    public init(userAgent: UnsafeRawBufferPointer?) {
        guard let userAgent, userAgent.count <= Self.maximumUserAgentBytes, userAgent.starts(with: Self.mozilla)
        else {
            self = .other
            return
        }
        for token in Self.tokenBytes where Self.contains(userAgent, token) {
            self = .other
            return
        }
        self = .desktop
    }

    /// Reads `userAgent` as UTF-8 bytes.
    public init(userAgent: String?) {
        guard let userAgent else {
            self = .other
            return
        }
        var bytes = Array(userAgent.utf8)
        self = bytes.withUnsafeMutableBytes { VisitorDevice(userAgent: UnsafeRawBufferPointer($0)) }
    }

    private static let mozilla = Array("Mozilla/".utf8)
    private static let tokenBytes = nonDesktopTokens.map { Array($0.utf8) }

    /// Whether `haystack` contains `needle` (lowercase ASCII), ignoring ASCII case.
    private static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        outer: for start in 0...(haystack.count - needle.count) {
            for (offset, byte) in needle.enumerated() {
                let candidate = haystack[start + offset]
                let lower = candidate >= 0x41 && candidate <= 0x5A ? candidate | 0x20 : candidate
                if lower != byte { continue outer }
            }
            return true
        }
        return false
    }
}
