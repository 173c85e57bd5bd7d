/// A page as fixed chunks around per-request values, so serving it is a splice, not a parse.
public struct SplicedPage: Sendable, Hashable {
    /// A per-request value.
    public enum Slot: Sendable, Hashable {
        /// The banner's `app-argument`, encoded and escaped.
        case appArgument
        /// The request's URL, encoded and escaped (landing page `{{url}}`).
        case pageURL
        /// The QR code of the page's URL for a desktop visitor, empty for anyone else (landing page `{{qrCode}}`).
        case qrCode
        /// The same QR code kept in the window's corner: put before `</body>` of a hosted page with the banner.
        case floatingQRCode
        /// The `open-in-browser` element for a visitor in an in-app browser, empty for anyone else: after `<body>`
        /// of a page with the banner (landing page `{{openInBrowser}}`).
        case openInBrowser
        /// The landing page's buttons for the visitor's platform (landing page `{{appButtons}}`).
        case appButtons

        /// Whether the slot's value depends on who the visitor is.
        public var isPerVisitor: Bool {
            switch self {
            case .appArgument, .pageURL: false
            case .qrCode, .floatingQRCode, .openInBrowser, .appButtons: true
            }
        }
    }

    /// What fills the slots for one request.
    public struct Values: Sendable {
        /// ``Slot/appArgument``.
        public var appArgument: [UInt8]
        /// ``Slot/pageURL``.
        public var pageURL: [UInt8]
        /// ``Slot/qrCode``.
        public var qrCode: [UInt8]
        /// ``Slot/floatingQRCode``.
        public var floatingQRCode: [UInt8]
        /// ``Slot/openInBrowser``.
        public var openInBrowser: [UInt8] = []
        /// ``Slot/appButtons``.
        public var appButtons: [UInt8] = []

        /// Creates the values; the visitor's are empty unless given.
        public init(appArgument: [UInt8], pageURL: [UInt8], qrCode: [UInt8] = [], floatingQRCode: [UInt8] = []) {
            self.appArgument = appArgument
            self.pageURL = pageURL
            self.qrCode = qrCode
            self.floatingQRCode = floatingQRCode
        }

        /// Every value that depends on the visitor, joined (for the rendering's tag).
        var perVisitor: [UInt8] { qrCode + [0] + floatingQRCode + [0] + openInBrowser + [0] + appButtons }

        /// The value of `slot`.
        public subscript(slot: Slot) -> [UInt8] {
            switch slot {
            case .appArgument: appArgument
            case .pageURL: pageURL
            case .qrCode: qrCode
            case .floatingQRCode: floatingQRCode
            case .openInBrowser: openInBrowser
            case .appButtons: appButtons
            }
        }
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

    /// The page as every visitor gets it who has no page of their own (`VisitorKinds`): the buttons
    /// `appButtons` in their slot, every other per-visitor slot left out, and the chunks around each joined, so a
    /// page whose only per-request values are the visitor's is static for them.
    public func forEveryone(appButtons: [UInt8]) -> SplicedPage {
        var page = SplicedPage(chunks: [chunks[0]], slots: [])
        for (index, slot) in slots.enumerated() {
            if slot.isPerVisitor {
                if slot == .appButtons { page.chunks[page.chunks.count - 1] += appButtons }
                page.chunks[page.chunks.count - 1] += chunks[index + 1]
            } else {
                page.slots.append(slot)
                page.chunks.append(chunks[index + 1])
            }
        }
        return page
    }

    /// The page for one request, in one array.
    public func render(appArgument: [UInt8], pageURL: [UInt8]) -> [UInt8] {
        render(Values(appArgument: appArgument, pageURL: pageURL))
    }

    /// The page for one request, in one array.
    public func render(_ values: Values) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(slots.reduce(chunks.reduce(0) { $0 + $1.count }) { $0 + values[$1].count })
        for (index, chunk) in chunks.enumerated() {
            out += chunk
            if index < slots.count { out += values[slots[index]] }
        }
        return out
    }

    /// Up to how many bytes a page is rendered into one array of its own (``parts(appArgument:pageURL:)``): one
    /// TLS record, so a small page goes out in one write, and a connection sending it holds no more than
    /// libmicrohttpd's own buffers for it.
    public static let joinedUpTo = 16 * 1024

    /// The page for one request as body parts (``Response/bodyParts``), and how many bytes of them are the
    /// request's own rather than shared with this page.
    ///
    /// A page of at most ``joinedUpTo`` bytes is one array of its own. A larger one is its fixed chunks, shared
    /// with this page (no byte copied), between the request's values: its own bytes are those values only, so
    /// rendering and sending it costs the same per connection whatever the page's size.
    public func parts(appArgument: [UInt8], pageURL: [UInt8]) -> (parts: [[UInt8]], ownBytes: Int) {
        parts(Values(appArgument: appArgument, pageURL: pageURL))
    }

    /// The page for one request as body parts; see ``parts(appArgument:pageURL:)``.
    public func parts(_ values: Values) -> (parts: [[UInt8]], ownBytes: Int) {
        let size = slots.reduce(chunks.reduce(0) { $0 + $1.count }) { $0 + values[$1].count }
        guard size > Self.joinedUpTo else { return ([render(values)], size) }
        var parts: [[UInt8]] = []
        parts.reserveCapacity(chunks.count + slots.count)
        for (index, chunk) in chunks.enumerated() {
            parts.append(chunk)
            if index < slots.count { parts.append(values[slots[index]]) }
        }
        // Each value is one array, however often the page repeats it.
        let ownBytes = Set(slots).reduce(0) { $0 + values[$1].count }
        return (parts.filter { !$0.isEmpty }, ownBytes)
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
