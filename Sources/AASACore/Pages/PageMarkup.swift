/// Escaping for text placed in HTML: every value a page gets from config or from a request goes through it.
public enum HTMLEscape {
    /// `text` escaped for an attribute value in double quotes or for element text.
    public static func escape(_ text: String) -> String {
        String(decoding: escape(Array(text.utf8)), as: UTF8.self)
    }

    /// `bytes` (UTF-8) escaped: `&`, `<`, `>`, `"` and `'` become character references.
    public static func escape(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "&"): out += Array("&amp;".utf8)
            case UInt8(ascii: "<"): out += Array("&lt;".utf8)
            case UInt8(ascii: ">"): out += Array("&gt;".utf8)
            case UInt8(ascii: "\""): out += Array("&quot;".utf8)
            case UInt8(ascii: "'"): out += Array("&#39;".utf8)
            default: out.append(byte)
            }
        }
        return out
    }
}

/// Percent-encoding that makes any bytes a valid URL without changing one that already is.
public enum URLText {
    /// `bytes` with every byte that may not appear in a URL percent-encoded: controls, space, `"`, `<`, `>`,
    /// `'`, `\`, `^`, `` ` ``, `{`, `|`, `}`, non-ASCII, and a `%` not starting an escape. With
    /// `encodeCommas`, `,` becomes `%2C` too: the banner's `content` separates parameters with commas (spec §5).
    public static func encode(_ bytes: some Collection<UInt8>, encodeCommas: Bool) -> [UInt8] {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        let array = Array(bytes)
        for (index, byte) in array.enumerated() {
            let keep: Bool
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                keep = true
            case UInt8(ascii: ","): keep = !encodeCommas
            case UInt8(ascii: "%"):
                keep = index + 2 < array.count && isHex(array[index + 1]) && isHex(array[index + 2])
            default: keep = Array("-._~!$&()*+;=:@/?#[]".utf8).contains(byte)
            }
            if keep {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return out
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x66)
    }
}

/// The request a page is rendered for, as the banner's `app-argument` and the landing page's URL see it.
public struct PageRequest: Sendable, Hashable {
    /// The URL: `https://` + the domain (+ the port the client used, unless 443) + raw path + `?` + raw query.
    public var url: [UInt8]
    /// The raw path as sent.
    public var path: [UInt8]
    /// The raw query, without `?`; empty when there is none.
    public var query: [UInt8]

    /// Builds the request's canonical URL. The host is the configured domain, never the `Host` header's
    /// text; only a numeric port is taken from it.
    public init(domain: String, port: String? = nil, path: [UInt8], query: String?) {
        var url = Array("https://".utf8) + Array(domain.utf8)
        if let port, port != "443", !port.isEmpty, port.utf8.count <= 5,
            port.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
        {
            url += Array(":\(port)".utf8)
        }
        url += path
        if let query {
            url.append(UInt8(ascii: "?"))
            url += Array(query.utf8)
        }
        self.url = url
        self.path = path
        self.query = Array((query ?? "").utf8)
    }
}

/// The tags injected into a page's `<head>` and how the dynamic `app-argument` is rendered.
public struct HeadMarkup: Sendable {
    /// The banner, when the domain has one.
    public let banner: BannerConfig?
    /// The touch icons, smallest first.
    public let icons: [TouchIcon]

    /// Creates the markup for `banner` and `icons`.
    public init(banner: BannerConfig?, icons: [TouchIcon]) {
        self.banner = banner
        self.icons = icons.sorted { ($0.size, $0.path) < ($1.size, $1.path) }
    }

    /// The banner's `content` up to `app-argument`, HTML-escaped: `app-id=…` and the other parameters, with
    /// `app-argument` last so a URL in it can never be read as another parameter (spec §5).
    public static func bannerContent(_ banner: BannerConfig) -> String {
        var parts = ["app-id=" + banner.appStoreID]
        if let affiliate = banner.affiliateData {
            parts.append(
                "affiliate-data=" + String(decoding: URLText.encode(affiliate.utf8, encodeCommas: true), as: UTF8.self))
        }
        if let clip = banner.appClipBundleID { parts.append("app-clip-bundle-id=" + clip) }
        if let display = banner.appClipDisplay { parts.append("app-clip-display=" + display) }
        return HTMLEscape.escape(parts.joined(separator: ", "))
    }

    /// The `app-argument` value for `request`, percent-encoded (commas included) and HTML-escaped; `nil` when off.
    public static func appArgument(_ argument: BannerConfig.AppArgument, for request: PageRequest) -> [UInt8]? {
        let raw: [UInt8]
        switch argument {
        case .off: return nil
        case .requestURL: raw = request.url
        case .template(let template): raw = expand(template, request)
        }
        return HTMLEscape.escape(URLText.encode(raw, encodeCommas: true))
    }

    /// Whether the template uses anything from the request (else it is rendered once, at load).
    public static func isDynamic(_ argument: BannerConfig.AppArgument) -> Bool {
        switch argument {
        case .off: false
        case .requestURL: true
        case .template(let template): BannerConfig.placeholders.contains { template.contains($0) }
        }
    }

    static func expand(_ template: String, _ request: PageRequest) -> [UInt8] {
        var out: [UInt8] = []
        let bytes = Array(template.utf8)
        var index = 0
        let values: [([UInt8], [UInt8])] = [
            (Array("{url}".utf8), request.url), (Array("{path}".utf8), request.path),
            (Array("{query}".utf8), request.query),
        ]
        outer: while index < bytes.count {
            for (name, value) in values where bytes[index...].starts(with: name) {
                out += value
                index += name.count
                continue outer
            }
            out.append(bytes[index])
            index += 1
        }
        return out
    }

    /// The icon links: one without `sizes` (the 180×180 icon, else the largest), then one per size (spec §6).
    public var iconLinks: String {
        guard let preferred = TouchIcon.best(for: 180, among: icons) else { return "" }
        var text = "\n<link rel=\"apple-touch-icon\" href=\"\(preferred.escapedHref)\">"
        var seen: Set<Int> = []
        for icon in icons where seen.insert(icon.size).inserted {
            text += "\n<link rel=\"apple-touch-icon\" sizes=\"\(icon.size)x\(icon.size)\" href=\"\(icon.escapedHref)\">"
        }
        return text
    }

    /// `page` with the banner and icons it lacks, as chunks around the dynamic `app-argument`.
    ///
    /// - Parameters:
    ///   - withBanner: `false` for a page the banner is excluded from.
    ///   - request: for a static template, the banner is rendered once here (`nil` request: no request data).
    public func inject(into page: [UInt8], withBanner: Bool) -> SplicedPage {
        let scan = HTMLHeadScan(page)
        var before = ""
        var slot = false
        var after = ""
        if let banner, withBanner, !scan.hasBanner, !scan.optsOutOfBanner {
            before = "\n<meta name=\"apple-itunes-app\" content=\"" + Self.bannerContent(banner)
            if Self.isDynamic(banner.appArgument) {
                before += ", app-argument="
                slot = true
            } else if case .template(let fixed) = banner.appArgument {
                let empty = PageRequest(domain: "", path: [], query: nil)
                before +=
                    ", app-argument="
                    + String(decoding: Self.appArgument(.template(fixed), for: empty) ?? [], as: UTF8.self)
            }
            after = "\">"
        }
        if !scan.hasTouchIcon { after += iconLinks }
        let head = Array(page[..<scan.insertionOffset])
        let tail = Array(page[scan.insertionOffset...])
        if slot {
            return SplicedPage(chunks: [head + Array(before.utf8), Array(after.utf8) + tail], slots: [.appArgument])
        }
        guard !(before + after).isEmpty else { return SplicedPage(chunks: [page], slots: []) }
        return SplicedPage(chunks: [head + Array((before + after).utf8) + tail], slots: [])
    }
}

/// A page as fixed chunks around per-request values, so serving it is a splice, not a parse.
public struct SplicedPage: Sendable, Hashable {
    /// A per-request value.
    public enum Slot: Sendable, Hashable {
        /// The banner's `app-argument`, encoded and escaped.
        case appArgument
        /// The request's URL, encoded and escaped (landing page `{{url}}`).
        case pageURL
    }

    /// The fixed bytes: one more than `slots`.
    public var chunks: [[UInt8]]
    /// What goes between consecutive chunks.
    public var slots: [Slot]

    /// Creates a page.
    public init(chunks: [[UInt8]], slots: [Slot]) {
        precondition(chunks.count == slots.count + 1)
        self.chunks = chunks
        self.slots = slots
    }

    /// Whether the page is the same for every request.
    public var isStatic: Bool { slots.isEmpty }

    /// The bytes of a page without slots, or of every fixed part joined (for hashing).
    public var fixedBytes: [UInt8] { chunks.count == 1 ? chunks[0] : Array(chunks.joined()) }

    /// The page for one request.
    public func render(appArgument: [UInt8], pageURL: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(chunks.reduce(0) { $0 + $1.count } + slots.count * max(appArgument.count, pageURL.count))
        for (index, chunk) in chunks.enumerated() {
            out += chunk
            if index < slots.count {
                out += slots[index] == .appArgument ? appArgument : pageURL
            }
        }
        return out
    }

    /// This page with every `marker` in its fixed parts replaced by `slot`.
    public func splitting(_ marker: [UInt8], into slot: Slot) -> SplicedPage {
        var chunks: [[UInt8]] = []
        var slots: [Slot] = []
        for (index, chunk) in self.chunks.enumerated() {
            var start = 0
            var position = 0
            var current: [UInt8] = []
            while position + marker.count <= chunk.count {
                if chunk[position] == marker[0] && chunk[position..<(position + marker.count)].elementsEqual(marker) {
                    current += chunk[start..<position]
                    chunks.append(current)
                    current = []
                    slots.append(slot)
                    position += marker.count
                    start = position
                } else {
                    position += 1
                }
            }
            current += chunk[start...]
            if index < self.slots.count {
                chunks.append(current)
                slots.append(self.slots[index])
            } else {
                chunks.append(current)
            }
        }
        return SplicedPage(chunks: chunks, slots: slots)
    }
}
