import Synchronization

/// Pages rendered for one URL each, kept so the next request for the same URL is answered without rendering.
///
/// A page with a Smart App Banner is spliced per request: its `app-argument` and canonical URL come from the
/// request URL (spec §5), so the bytes, and the ETag, differ per URL. Rendering, escaping, tagging and
/// building the response for the wire cost as much as serving it (about half of the server's CPU per page
/// request under load, docs/benchmarks.md), and clients ask for the same few URLs over and over.
///
/// One cache serves every domain, across reloads: a domain whose pages a reload changes renders under a new
/// version, and its old renderings are dropped with the rest when the budget is reached. Its memory is bounded by
/// ``budget`` bytes of bodies: when a new page would exceed it, every entry is dropped and filling starts
/// again. A client asking for a new URL on every request (nothing to reuse) then costs one rendering each,
/// as without the cache, and never more memory than the budget.
public final class RenderedPages: Sendable {
    /// What identifies one rendering: the version of the domain's pages, and the URL as far as a page depends
    /// on it (the same URL always routes to the same page of one version).
    struct Key: Hashable, Sendable {
        /// The rendering routes' version (``PageRoutes``): a domain's edited pages get a new one.
        let version: UInt64
        /// The raw request path, before normalisation.
        let path: [UInt8]
        let query: String?
        /// Who the variant is for, as far as the domain's pages differ by visitor (``Visitor/other`` for everyone).
        var visitor = Visitor.other
    }

    /// The 200 and 304 answers for one URL, and the ETag they carry. Kept responses, so the transport builds
    /// each for the wire once too.
    struct Rendering: Sendable {
        let ok: PreparedResponse
        let notModified: PreparedResponse
        let etag: [UInt8]
        /// The page's modification time, for `If-Modified-Since`.
        let lastModified: Int
        /// The bytes of the body that are this rendering's own, not shared with its page
        /// (``SplicedPage/parts(appArgument:pageURL:)``).
        let ownBytes: Int
    }

    /// Body bytes kept at most.
    public let budget: Int
    /// Draws the QR code desktop visitors get on pages with the banner and the landing page; without it every
    /// visitor gets the page without one.
    public let qrCode: PageQRCode?
    private let state = Mutex<(pages: [Key: Rendering], bytes: Int)>(([:], 0))

    /// A cache keeping at most `budget` bytes of page bodies (8 MiB: thousands of typical pages), whose desktop
    /// variants show the QR code `qrCode` draws.
    public init(budget: Int = 8 << 20, qrCode: PageQRCode? = nil) {
        self.budget = budget
        self.qrCode = qrCode
    }

    /// The rendering kept for `key`, if any.
    func kept(_ key: Key) -> Rendering? {
        state.withLock { $0.pages[key] }
    }

    /// Keeps `rendering` for `key`, dropping every kept rendering first when it would not fit the budget.
    func keep(_ rendering: Rendering, for key: Key) {
        // The body's own bytes are counted twice (the transport keeps a copy in its native form), the key's bytes
        // once; a large page's chunks are the page's, counted where it is loaded.
        let size = 2 * rendering.ownBytes + key.path.count + (key.query?.utf8.count ?? 0) + 256
        guard size <= budget else { return }
        state.withLock { state in
            if state.bytes + size > budget {
                state.pages.removeAll(keepingCapacity: true)
                state.bytes = 0
            }
            if state.pages.updateValue(rendering, forKey: key) == nil { state.bytes += size }
        }
    }

    /// The number of renderings kept.
    var count: Int { state.withLock { $0.pages.count } }
}
