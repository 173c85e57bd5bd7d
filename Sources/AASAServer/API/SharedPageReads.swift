import AASACore
import Synchronization

/// The pages the tenant API last read, one copy each, as the public listener serves a page from one copy: every
/// answer of a page shares its bytes (``AASAMicroHTTPD`` sends an answer's bytes from their own storage), so sixty
/// slow readers of a 16 MiB page hold 16 MiB, not sixty copies. A page is read again only when its validator
/// (``DomainRepository/pageValidator(_:path:)``) moves, so a write, a push or an edit of the file is read at once.
///
/// At most ``maximumBytes`` in at most ``maximumEntries`` pages are kept, the least recently used dropped first, so
/// neither a few large pages nor many small ones of many domains grow it; what the connections still send is
/// bounded apart, per listener (`ListenerConfiguration.bytesInFlight`).
final class SharedPageReads: Sendable {
    /// The most bytes of pages kept: two at the page cap.
    static let maximumBytes = 2 * PageLoader().maximumFileBytes
    /// The most pages kept (each key is a name and a path of at most a few KiB).
    static let maximumEntries = 1_024

    private struct Entry {
        var validator: String
        var page: PageDocument
        var used: UInt64
    }

    private let state = Mutex<(entries: [String: Entry], bytes: Int, clock: UInt64)>(([:], 0, 0))

    /// Page `path` of `name`: the copy kept when `validator` still gives what it gave when it was read, else what
    /// `read` gives (kept when it fits); `nil` when there is no such page.
    func page(
        _ name: String, _ path: String, validator: () throws -> String?, read: () throws -> PageDocument?
    ) throws -> PageDocument? {
        let key = name + "\u{0}" + path
        guard let current = try validator() else {
            drop(key)
            return nil
        }
        let kept = state.withLock { state -> PageDocument? in
            guard var entry = state.entries[key], entry.validator == current else { return nil }
            state.clock += 1
            entry.used = state.clock
            state.entries[key] = entry
            return entry.page
        }
        if let kept { return kept }
        // Taken before the read: bytes written meanwhile are kept under the older validator, and read again next.
        guard let page = try read() else {
            drop(key)
            return nil
        }
        keep(key, Entry(validator: current, page: page, used: 0))
        return page
    }

    /// The bytes and the pages kept now.
    var kept: (bytes: Int, pages: Int) { state.withLock { ($0.bytes, $0.entries.count) } }

    private func keep(_ key: String, _ entry: Entry) {
        let size = entry.page.bytes.count
        guard size <= Self.maximumBytes else { return drop(key) }
        state.withLock { state in
            if let old = state.entries.removeValue(forKey: key) { state.bytes -= old.page.bytes.count }
            while state.bytes + size > Self.maximumBytes || state.entries.count >= Self.maximumEntries,
                let oldest = state.entries.min(by: { $0.value.used < $1.value.used })
            {
                state.entries[oldest.key] = nil
                state.bytes -= oldest.value.page.bytes.count
            }
            state.clock += 1
            var entry = entry
            entry.used = state.clock
            state.entries[key] = entry
            state.bytes += size
        }
    }

    private func drop(_ key: String) {
        state.withLock { state in
            if let old = state.entries.removeValue(forKey: key) { state.bytes -= old.page.bytes.count }
        }
    }
}
