import Synchronization

/// The routes of one domain's pages, touch-icon probes and landing page, built once per snapshot.
///
/// Order (after the association file and any other well-known routes, which keep priority): the request
/// path is normalised once by ``RequestPath`` (a refused path is 404), then a file of `pages/` (a folder
/// serves its `index.html`), then Safari's touch-icon probe paths, then the landing page for URLs an app
/// claims, else 404. Nothing redirects.
public struct PageRoutes: Sendable {
    /// A page spliced per request, and what its answers say.
    struct Spliced: Sendable {
        let page: SplicedPage
        let headers: [HTTPHeader]
        let contentTag: String
        let lastModified: Int
        /// Who the page has values of their own for (none for a page everyone gets alike).
        let kinds: VisitorKinds
    }

    /// A resource and how it is answered.
    enum Resource: Sendable {
        /// The same bytes for every request: prepared 200 and 304.
        case fixed(ok: PreparedResponse, notModified: PreparedResponse, etag: [UInt8], lastModified: Int)
        /// HTML spliced per request around the banner's `app-argument` (and the landing page's URL).
        case spliced(Spliced)
        /// A page that differs by visitor: `own`, spliced per URL, for a visitor it differs for
        /// (``VisitorKinds/differs(for:)``), and `everyone` for the rest (fixed unless something else of it is per
        /// URL).
        indirect case byVisitor(everyone: Resource, own: Spliced)

        /// Whether a visitor without a page of their own gets an answer spliced per URL.
        var isSpliced: Bool {
            switch self {
            case .fixed: false
            case .spliced: true
            case .byVisitor(let everyone, _): everyone.isSpliced
            }
        }

        /// Who a visitor may get a page of their own as.
        var kinds: VisitorKinds {
            if case .byVisitor(_, let own) = self { own.kinds } else { VisitorKinds() }
        }
    }

    private let domain: String
    private let domainID: Int
    /// Which version of the domain's pages these routes serve, unique for the process: renderings are kept
    /// under it, so a page edited by a reload is never answered with a rendering of its previous version from
    /// the cache every version shares.
    private let version = Self.versions.add(1, ordering: .relaxed).newValue
    private static let versions = Atomic<UInt64>(0)
    private let banner: BannerConfig?
    private let files: [String: Resource]
    private let icons: [TouchIcon]
    private let landing: (withBanner: Resource, withoutBanner: Resource)?
    private let exclusions: SitePages
    private let matcher: URLMatcher?
    private let notFound: PreparedResponse
    private let methodNotAllowed: PreparedResponse
    /// The domain's HTTPS-only headers (HSTS), for the responses built per request.
    private let httpsOnlyHeaders: [HTTPHeader]
    /// Spliced pages already rendered, shared by every domain of the snapshot.
    private let rendered: RenderedPages
    /// Whether any resource is spliced per URL for a visitor not on a desktop, so ``rendered`` is worth asking for
    /// every request.
    private let hasSplicedPages: Bool
    /// Which visitors any of the domain's pages differs for, so the `User-Agent` is worth reading, and how far.
    private let visitorKinds: VisitorKinds
    /// The landing page's buttons.
    private let buttons: AppButtons?

    /// Prepares every fixed response of `pages` for `domain`, whose served association file is `file`; pages
    /// spliced per request are kept in `rendered` once rendered.
    public init(
        domain: String, pages: SitePages, file: AssociationFile, builder: inout PreparedResponseBuilder,
        rendered: RenderedPages = RenderedPages()
    ) {
        let plain = [HTTPHeader("Content-Type", "text/plain; charset=utf-8"), HTTPHeader("Cache-Control", "no-store")]
        notFound = builder.prepare(Response(status: 404, headers: plain, body: Array("not found\n".utf8)), common: true)
        methodNotAllowed = builder.prepare(
            Response(
                status: 405, headers: plain + [HTTPHeader("Allow", "GET, HEAD")],
                body: Array("method not allowed\n".utf8)), common: true)
        self.domain = domain
        domainID = builder.domainID
        self.rendered = rendered
        httpsOnlyHeaders = builder.httpsOnlyHeaders
        let qrCodes = rendered.qrCode != nil
        banner = pages.banner
        icons = pages.icons
        exclusions = SitePages(banner: pages.banner)
        var files: [String: Resource] = [:]
        for (path, page) in pages.files {
            files[path] = Self.resource(
                page.page, contentType: page.contentType, contentTag: page.contentTag,
                lastModified: page.lastModified, cacheControl: pages.cacheControl, qrCodes: qrCodes, buttons: [],
                builder: &builder)
        }
        self.files = files
        if let landing = pages.landing {
            let everyone = landing.buttons.everyone
            let resources = [landing.withBanner, landing.withoutBanner].map { page in
                Self.resource(
                    page, contentType: "text/html; charset=utf-8",
                    // The buttons everyone gets are the config's, not the page's: a changed app is a new tag.
                    contentTag: PageLoader.tag(page) + "-" + Self.fnv1a(everyone), lastModified: landing.lastModified,
                    cacheControl: pages.cacheControl, qrCodes: qrCodes, buttons: everyone, builder: &builder)
            }
            self.landing = (resources[0], resources[1])
            matcher = URLMatcher(file: file, mode: .modern)
        } else {
            self.landing = nil
            matcher = nil
        }
        buttons = pages.landing?.buttons
        let resources = Array(files.values) + [self.landing?.withBanner, self.landing?.withoutBanner].compactMap { $0 }
        hasSplicedPages = resources.contains(where: \.isSpliced)
        visitorKinds = resources.reduce(VisitorKinds()) { $0.union($1.kinds) }
    }

    /// `page`'s resource. A page that differs by visitor is answered by visitor, and both answers say
    /// `Vary: User-Agent`; every visitor without a page of their own gets it with `buttons` in its buttons' slot and
    /// no other visitor's slot, prepared once when nothing else of it is per URL.
    private static func resource(
        _ page: SplicedPage, contentType: String, contentTag: String, lastModified: Int, cacheControl: String,
        qrCodes: Bool, buttons: [UInt8], builder: inout PreparedResponseBuilder
    ) -> Resource {
        let kinds = VisitorKinds(page, qrCodes: qrCodes)
        let everyone = resource(
            page.forEveryone(appButtons: buttons), contentType: contentType, contentTag: contentTag,
            lastModified: lastModified, cacheControl: cacheControl, varies: !kinds.isEmpty, builder: &builder)
        guard !kinds.isEmpty else { return everyone }
        let headers = Self.headers(contentType: contentType, cacheControl: cacheControl, lastModified: lastModified)
        return .byVisitor(
            everyone: everyone,
            own: Spliced(
                page: page, headers: headers.all, contentTag: contentTag, lastModified: lastModified, kinds: kinds))
    }

    /// `page`'s resource: prepared when it is static, else spliced per URL; `varies` adds `Vary: User-Agent`.
    private static func resource(
        _ page: SplicedPage, contentType: String, contentTag: String, lastModified: Int, cacheControl: String,
        varies: Bool, builder: inout PreparedResponseBuilder
    ) -> Resource {
        let (headers, shared) = Self.headers(
            contentType: contentType, cacheControl: cacheControl, lastModified: lastModified, varies: varies)
        guard page.isStatic else {
            return .spliced(
                Spliced(
                    page: page, headers: headers, contentTag: contentTag, lastModified: lastModified,
                    kinds: VisitorKinds()))
        }
        let tag = "\"" + contentTag + "\""
        return .fixed(
            ok: builder.prepare(
                Response(status: 200, headers: [HTTPHeader("ETag", tag)] + headers, body: page.fixedBytes)),
            notModified: builder.prepare(Response(status: 304, headers: [HTTPHeader("ETag", tag)] + shared)),
            etag: Array(tag.utf8), lastModified: lastModified)
    }

    /// A page's headers: `all` for its 200, `shared` (without the body's) for its 304. `varies` adds
    /// `Vary: User-Agent`: a cache must never give one visitor's variant to another (a 304 included, RFC 9110
    /// §15.4.5).
    private static func headers(contentType: String, cacheControl: String, lastModified: Int, varies: Bool = true)
        -> (all: [HTTPHeader], shared: [HTTPHeader])
    {
        var shared = [
            HTTPHeader("Cache-Control", cacheControl), HTTPHeader("Last-Modified", HTTPDate.format(lastModified)),
        ]
        if varies { shared.append(HTTPHeader("Vary", "User-Agent")) }
        return (
            [HTTPHeader("Content-Type", contentType)] + shared + [HTTPHeader("X-Content-Type-Options", "nosniff")],
            shared
        )
    }

    /// The answer for a request that is not for the association file.
    public func route(_ request: some HTTPRequest) -> RouteDecision {
        // A URL whose page was rendered before is answered before its path is even normalised: the same URL
        // always routes to the same page (files, probes and the landing page's claims are fixed per snapshot).
        // A visitor's own page is rendered per URL; the page everyone else gets only when spliced.
        let visitor =
            visitorKinds.isEmpty
            ? .other : visitorKinds.relevant(request.withHeader("User-Agent") { Visitor(userAgent: $0) })
        let key = hasSplicedPages || visitor != .other ? renderingKey(request, visitor: visitor) : nil
        if let key, request.method.isRead, let kept = rendered.kept(key) { return answer(kept, request) }
        guard let path = request.withPath({ RequestPath(raw: $0) }) else { return .prepared(notFound) }
        for file in path.lookupKeys {
            if let resource = files[file] { return answer(resource, request, key: key) }
        }
        // Safari's probes (spec §6): the best icon for the size asked, or a quick plain 404, never a page.
        if path.segments.count == 1, !path.isDirectory, let size = TouchIcon.probeSize("/" + path.segments[0]) {
            guard let icon = TouchIcon.best(for: size, among: icons), let resource = files[icon.path] else {
                return .prepared(notFound)
            }
            return answer(resource, request, key: key)
        }
        if let landing, let matcher {
            var url = "https://" + domain + request.withPath { String(decoding: $0, as: UTF8.self) }
            if let query = request.rawQuery { url += "?" + query }
            if matcher.match(url, nearMissLimit: 0).verdict == .match {
                return answer(
                    exclusions.bannerExcluded(path.description) ? landing.withoutBanner : landing.withBanner, request,
                    key: key)
            }
        }
        return .prepared(notFound)
    }

    /// `key` is the request's ``RenderedPages`` key when the domain has spliced pages.
    private func answer(_ resource: Resource, _ request: some HTTPRequest, key: RenderedPages.Key?) -> RouteDecision {
        guard request.method.isRead else { return .prepared(methodNotAllowed) }
        switch resource {
        case .fixed(let ok, let notModified, let etag, let lastModified):
            return .prepared(Self.isNotModified(request, etag: etag, lastModified: lastModified) ? notModified : ok)
        case .spliced(let spliced):
            // ``route(_:)`` makes a key whenever this visitor's answer may be spliced.
            return answer(spliced, key: key ?? renderingKey(request, visitor: .other), request)
        case .byVisitor(let everyone, let own):
            guard let key, own.kinds.differs(for: key.visitor) else { return answer(everyone, request, key: key) }
            return answer(own, key: key, request)
        }
    }

    /// `spliced` rendered for the URL and visitor of `key`, kept for the next request with the same key.
    private func answer(_ spliced: Spliced, key: RenderedPages.Key, _ request: some HTTPRequest) -> RouteDecision {
        let rendering = render(spliced, path: key.path, query: key.query, visitor: key.visitor)
        rendered.keep(rendering, for: key)
        return answer(rendering, request)
    }

    /// A page rendered for the request's URL: its 304 when the client has it, else its 200.
    private func answer(_ rendering: RenderedPages.Rendering, _ request: some HTTPRequest) -> RouteDecision {
        .prepared(
            Self.isNotModified(request, etag: rendering.etag, lastModified: rendering.lastModified)
                ? rendering.notModified : rendering.ok)
    }

    /// What a spliced page depends on: this version of this domain's pages, the raw path, the query, and who the
    /// visitor is as far as any of the domain's pages differs for them. Nothing of the `Host` header: the page
    /// names the domain's canonical origin.
    private func renderingKey(_ request: some HTTPRequest, visitor: Visitor) -> RenderedPages.Key {
        RenderedPages.Key(
            version: version, path: request.withPath { Array($0) }, query: request.rawQuery, visitor: visitor)
    }

    /// `page` as served at one URL to `visitor`: the banner's `app-argument` and the page URL spliced in, and what
    /// the visitor gets of their own (a desktop visitor the QR code of the page's URL, an in-app browser's visitor
    /// the way out of it, a phone the landing page's buttons for its platform), and an ETag that tells this URL's
    /// and this visitor's variant apart. A large page's body shares the page's fixed chunks
    /// (``SplicedPage/parts(appArgument:pageURL:)``).
    private func render(_ spliced: Spliced, path: [UInt8], query: String?, visitor: Visitor)
        -> RenderedPages.Rendering
    {
        let page = spliced.page
        let pageRequest = PageRequest(domain: domain, path: path, query: query)
        let argument = banner.flatMap { HeadMarkup.appArgument($0.appArgument, for: pageRequest) } ?? []
        let pageURL = HTMLEscape.escape(URLText.encode(pageRequest.url, encodeCommas: false))
        var values = SplicedPage.Values(appArgument: argument, pageURL: pageURL)
        // The representation depends on the URL, so the tag does too.
        var tag = "\"" + spliced.contentTag + "-" + Self.fnv1a(argument + [0] + pageURL)
        if spliced.kinds.differs(for: visitor) {
            values = visitorValues(values, page: page, request: pageRequest, visitor: visitor)
            // A visitor's own variant has a tag of its own, whatever it holds (a URL over the QR code's cap has no
            // code).
            tag += "-" + visitor.tag + "-" + Self.fnv1a(values.perVisitor)
        }
        tag += "\""
        let etag = HTTPHeader("ETag", tag)
        let body = page.parts(values)
        let ok = Response(
            status: 200, headers: [etag] + spliced.headers, bodyParts: body.parts, httpsOnlyHeaders: httpsOnlyHeaders)
        let notModified = Response(
            status: 304,
            headers: [etag]
                + spliced.headers.filter { $0.name != "Content-Type" && $0.name != "X-Content-Type-Options" },
            httpsOnlyHeaders: httpsOnlyHeaders)
        return RenderedPages.Rendering(
            ok: PreparedResponse(ok, domainID: domainID),
            notModified: PreparedResponse(notModified, domainID: domainID),
            etag: Array(tag.utf8), lastModified: spliced.lastModified, ownBytes: body.ownBytes)
    }

    /// `values` with what `visitor` gets of their own in `page`'s slots: a desktop visitor the QR code of the page's
    /// URL, an in-app browser's visitor the way out of it, a phone the landing page's buttons for its platform.
    private func visitorValues(
        _ values: SplicedPage.Values, page: SplicedPage, request pageRequest: PageRequest, visitor: Visitor
    ) -> SplicedPage.Values {
        var values = values
        let path = pageRequest.path
        if visitor.platform == .desktop, let qrCode = rendered.qrCode {
            // The page's own URL without its query: the page a phone opens is the same one (a query is often a
            // campaign's or a session's, not the page's).
            let url = URLText.encode(PageRequest(domain: domain, path: path, query: nil).url, encodeCommas: false)
            if let svg = qrCode.draw(String(decoding: url, as: UTF8.self)) {
                if page.slots.contains(.qrCode) { values.qrCode = PageQRCode.block(svg: svg, floating: false) }
                if page.slots.contains(.floatingQRCode) {
                    values.floatingQRCode = PageQRCode.block(svg: svg, floating: true)
                }
            }
        }
        if let browser = visitor.inAppBrowser, page.slots.contains(.openInBrowser) {
            values.openInBrowser = OpenInBrowser.block(browser, platform: visitor.platform, request: pageRequest)
        }
        if let buttons, page.slots.contains(.appButtons) {
            values.appButtons = buttons.block(for: visitor, request: pageRequest)
        }
        return values
    }

    /// RFC 9110 §13.2.2: `If-None-Match` decides when present; otherwise `If-Modified-Since`.
    static func isNotModified(_ request: some HTTPRequest, etag: [UInt8], lastModified: Int) -> Bool {
        let byTag: Bool? = request.withHeader("If-None-Match") { list in
            list.map { list in etag.withUnsafeBufferPointer { StaticResource.entityTagList(list, contains: $0) } }
        }
        if let byTag { return byTag }
        return request.withHeader("If-Modified-Since") { raw in
            guard let raw, let since = HTTPDate.parse(raw) else { return false }
            return lastModified <= since
        }
    }

    /// 64-bit FNV-1a as hex: cheap, for telling per-request variants of a page apart in its ETag.
    static func fnv1a(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        let text = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - text.count) + text
    }
}
