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
    ///   - visitorSlots: when the banner is injected, also the slots of what a visitor gets of their own: an
    ///     ``SplicedPage/Slot/openInBrowser`` at the top of the body (after the `<body>` tag) and a
    ///     ``SplicedPage/Slot/floatingQRCode`` before the page's last `</body>` (at its end when it has none).
    ///   - openInBrowser: an ``SplicedPage/Slot/openInBrowser`` at the top of the body whether or not the banner is
    ///     injected (the landing page, whose template does not place it).
    public func inject(into page: [UInt8], withBanner: Bool, visitorSlots: Bool = false, openInBrowser: Bool = false)
        -> SplicedPage
    {
        let injected = injectHead(into: page, withBanner: withBanner)
        let floating = visitorSlots && injected.banner
        guard openInBrowser || floating else { return injected.page }
        // Both places are after the head's insertion point, so they lie in the last chunk, at the same distance
        // from its end as in the page; the top first, so the body's end (never before it) is then in the new last
        // chunk.
        let start = Self.bodyStart(page, notBefore: injected.insertionOffset) ?? injected.insertionOffset
        let result = Self.split(injected.page, atDistanceFromEnd: page.count - start, slot: .openInBrowser)
        guard floating else { return result }
        let end = max(start, Self.lastBodyEnd(page, notBefore: injected.insertionOffset) ?? page.count)
        return Self.split(result, atDistanceFromEnd: page.count - end, slot: .floatingQRCode)
    }

    /// `page` with `slot` inserted into its last chunk, `distance` bytes before the chunk's end.
    private static func split(_ page: SplicedPage, atDistanceFromEnd distance: Int, slot: SplicedPage.Slot)
        -> SplicedPage
    {
        var chunks = page.chunks
        let last = chunks.removeLast()
        let split = last.count - distance
        chunks += [Array(last[..<split]), Array(last[split...])]
        return SplicedPage(chunks: chunks, slots: page.slots + [slot])
    }

    /// Where the body's content starts: after the first `<body …>` tag (ASCII case-insensitive, its attributes'
    /// quoted values skipped) at or after `notBefore`, else after the first `</head>` there; `nil` when neither is.
    static func bodyStart(_ page: [UInt8], notBefore: Int) -> Int? {
        for (name, isEnd) in [(Array("<body".utf8), false), (Array("</head".utf8), true)] {
            var index = notBefore
            while index + name.count < page.count {
                defer { index += 1 }
                guard page[index] == UInt8(ascii: "<"),
                    zip(page[index..<(index + name.count)], name).allSatisfy({ ($0 | 0x20) == ($1 | 0x20) })
                else { continue }
                let next = page[index + name.count]
                guard
                    next == UInt8(ascii: ">") || next == UInt8(ascii: "/") || next == 0x20
                        || (0x09...0x0D).contains(next)
                else { continue }
                // The tag ends at the first `>` outside a quoted attribute value.
                var quote: UInt8?
                var position = index + name.count
                while position < page.count {
                    let byte = page[position]
                    if let open = quote {
                        if byte == open { quote = nil }
                    } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'") {
                        quote = isEnd ? nil : byte
                    } else if byte == UInt8(ascii: ">") {
                        return position + 1
                    }
                    position += 1
                }
                return nil
            }
        }
        return nil
    }

    /// Where the last `</body` (ASCII case-insensitive) starts, if at or after `notBefore`.
    static func lastBodyEnd(_ page: [UInt8], notBefore: Int) -> Int? {
        let needle = Array("</body".utf8)
        guard page.count >= needle.count else { return nil }
        var start = page.count - needle.count
        while start >= notBefore {
            if page[start] == needle[0]
                && zip(page[start..<(start + needle.count)], needle).allSatisfy({ ($0 | 0x20) == ($1 | 0x20) })
            {
                return start
            }
            start -= 1
        }
        return nil
    }

    /// `page` with the head tags it lacks; whether the banner was among them, and where they went.
    private func injectHead(into page: [UInt8], withBanner: Bool) -> (
        page: SplicedPage, banner: Bool, insertionOffset: Int
    ) {
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
        let banner = !before.isEmpty
        if slot {
            return (
                SplicedPage(chunks: [head + Array(before.utf8), Array(after.utf8) + tail], slots: [.appArgument]),
                banner, scan.insertionOffset
            )
        }
        guard !(before + after).isEmpty else {
            return (SplicedPage(chunks: [page], slots: []), banner, scan.insertionOffset)
        }
        return (
            SplicedPage(chunks: [head + Array((before + after).utf8) + tail], slots: []), banner, scan.insertionOffset
        )
    }
}
