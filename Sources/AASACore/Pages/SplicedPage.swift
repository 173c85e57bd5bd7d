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
