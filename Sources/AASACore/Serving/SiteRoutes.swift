#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What one domain serves, ready to be turned into routes: every field of it is served, and two versions serve the
/// same when they are `==`, which is how a reload tells a domain to republish. A new field is served and compared
/// by being here (``LoadedDomain/published`` sets it from the domain's config).
public struct PublishedDomain: Sendable, Equatable {
    /// The host name (lower case, no trailing dot).
    public var domain: String
    /// The generated association file.
    public var associationFile: [UInt8]
    /// `Cache-Control` for the association file.
    public var cacheControl: String
    /// `/.well-known/assetlinks.json`, when the domain has Android apps (spec §7).
    public var assetLinks: [UInt8]?
    /// The CMS-signed association file (`application/pkcs7-mime`), when signing is on (spec §4).
    public var signedAssociationFile: [UInt8]?
    /// Where the signed file is served.
    public var signedPaths: SigningConfig.Paths = .root
    /// Pages, touch icons and landing page; `nil` when the domain serves none.
    public var pages: SitePages? {
        get { pagesStorage?.value }
        set { pagesStorage = newValue.map(OutOfLine.init) }
    }
    /// Out of line: most domains serve no pages, and a server keeps one of these per domain.
    private var pagesStorage: OutOfLine<SitePages>?
    /// `Strict-Transport-Security` value for the domain's HTTPS responses, or `nil` for none.
    public var hsts: String?
    /// `/.well-known/passkey-endpoints` and `/.well-known/change-password`; `nil` when the domain serves neither.
    public var credentialEndpoints: CredentialEndpoints? {
        get { credentialStorage?.value }
        set { credentialStorage = newValue.map(OutOfLine.init) }
    }
    /// Out of line: most domains serve neither, and a server keeps one of these per domain.
    private var credentialStorage: OutOfLine<CredentialEndpoints>?
    /// For each details entry of the association file, the site.json app it comes from
    /// (``AssociationGenerator/Output/detailsSource``), so what changes between versions is named in site.json
    /// terms.
    public var detailsSource: [Int?] = []

    /// Creates a published domain.
    public init(domain: String, associationFile: [UInt8], cacheControl: String, pages: SitePages? = nil) {
        self.domain = domain
        self.associationFile = associationFile
        self.cacheControl = cacheControl
        self.pages = pages
    }

    /// The served association file as a document, read back from its bytes (for the pages' banner matcher): a
    /// server does not keep every domain's document, most of its memory per domain (docs/benchmarks.md). The
    /// bytes were generated from a valid document, so they read back; an empty document otherwise (no URL
    /// matches, so no banner claims an app).
    public var file: AssociationFile {
        AssociationFile.parse(SourceText(name: domain, bytes: associationFile)).file ?? AssociationFile()
    }
}

/// The public routes of every domain: an immutable snapshot built at load. A reload makes the next one from it
/// (``updating(_:)``), rebuilding only the routes of the domains that changed; every other domain keeps its
/// routes and their prepared responses. A request does a host lookup and a few byte comparisons, and gets a
/// response that was prepared when its domain's routes were built.
public final class SiteRoutes: RouteTable {
    /// Both paths Apple has fetched the file from (spec §3.1): serve identical bytes, never redirect.
    static let associationPaths: [[UInt8]] = [
        Array("/.well-known/apple-app-site-association".utf8), Array("/apple-app-site-association".utf8),
    ]

    /// Android's Digital Asset Links path (spec §7).
    static let assetLinksPath = Array("/.well-known/assetlinks.json".utf8)

    /// W3C Passkey Endpoints §3: `https://<RP ID>/.well-known/passkey-endpoints`.
    static let passkeyEndpointsPath = Array("/.well-known/passkey-endpoints".utf8)

    /// W3C A Well-Known URL for Changing Passwords §2: the one path the server answers with a redirect.
    static let changePasswordPath = Array("/.well-known/change-password".utf8)

    /// The credential endpoints of a domain that serves any: one pointer in ``DomainRoutes`` for the many that
    /// serve none.
    final class CredentialRoutes: Sendable {
        let passkeyEndpoints: StaticResource?
        let changePassword: PreparedResponse?

        init(passkeyEndpoints: StaticResource?, changePassword: PreparedResponse?) {
            self.passkeyEndpoints = passkeyEndpoints
            self.changePassword = changePassword
        }
    }

    /// A class, so the per-request lookup retains one object instead of copying every field.
    final class DomainRoutes: Sendable {
        let association: StaticResource
        /// The resource for the legacy root path: the signed file when signing is on (spec §4).
        let rootAssociation: StaticResource
        let assetLinks: StaticResource?
        let credentials: CredentialRoutes?
        let methodNotAllowed: PreparedResponse
        let notFound: PreparedResponse
        /// Out of line: most domains serve no pages, and the routes inline would be 450 bytes larger for each.
        let pages: OutOfLine<PageRoutes>?

        init(
            association: StaticResource, rootAssociation: StaticResource, assetLinks: StaticResource?,
            credentials: CredentialRoutes?, methodNotAllowed: PreparedResponse, notFound: PreparedResponse,
            pages: PageRoutes?
        ) {
            self.association = association
            self.rootAssociation = rootAssociation
            self.assetLinks = assetLinks
            self.credentials = credentials
            self.methodNotAllowed = methodNotAllowed
            self.notFound = notFound
            self.pages = pages.map(OutOfLine.init)
        }
    }

    /// What every version of the routes shares.
    private struct Shared: Sendable {
        let unknownHost: PreparedResponse
        let misdirected: PreparedResponse
        /// The 405 and 404 of every domain without HTTPS-only headers: one pair for all of them, counted under
        /// the domain the request's Host names (``PreparedResponse/domainFromHost``).
        let methodNotAllowed: PreparedResponse
        let notFound: PreparedResponse
        /// Banner pages rendered per URL (one cache for every domain, bounded in bytes).
        let rendered: RenderedPages
        /// The number stamped on each domain's responses.
        let domainIDs: DomainIDs
    }

    /// The prepared responses of the domains this version built (all of them for the first version).
    public let preparedResponses: [PreparedResponse]
    private let domains: HostDirectory<DomainRoutes>
    private let shared: Shared

    private static let plain = [
        HTTPHeader("Content-Type", "text/plain; charset=utf-8"), HTTPHeader("Cache-Control", "no-store"),
    ]
    /// Every domain's 405 and 404 carry the same bytes: made once, their arrays shared by every domain's copy.
    private static let methodNotAllowed = Response(
        status: 405, headers: plain + [HTTPHeader("Allow", "GET, HEAD")], body: Array("method not allowed\n".utf8))
    private static let notFound = Response(status: 404, headers: plain, body: Array("not found\n".utf8))

    /// Builds the routes for `published`; banner pages rendered per URL are kept in `rendered` (one cache for
    /// every domain, bounded in bytes); every response carries its domain's number from `domainIDs`.
    public convenience init(
        _ published: [PublishedDomain], rendered: RenderedPages = RenderedPages(), domainIDs: DomainIDs = DomainIDs()
    ) {
        var builder = PreparedResponseBuilder()
        // Spec §10.6 #103: an unknown host gets a 404 that names no configured domain.
        let unknownHost = builder.prepare(
            Response(status: 404, headers: Self.plain, body: Array("unknown host\n".utf8)))
        // RFC 9110 §15.5.20: the connection was set up for another name; the client retries on a new one.
        let misdirected = builder.prepare(
            Response(
                status: 421, headers: Self.plain,
                body: Array("misdirected request: the Host header names a different domain than TLS SNI\n".utf8)))
        builder.domainID = PreparedResponse.domainFromHost
        let methodNotAllowed = builder.prepare(Self.methodNotAllowed, common: true)
        let notFound = builder.prepare(Self.notFound, common: true)
        builder.domainID = 0
        let shared = Shared(
            unknownHost: unknownHost, misdirected: misdirected, methodNotAllowed: methodNotAllowed, notFound: notFound,
            rendered: rendered, domainIDs: domainIDs)
        // Each domain's routes on every processor at once (their ETags are SHA-256 digests of the files): at
        // 100,000 domains, one after the other, they take seconds of a start with one core busy.
        let built = published.concurrentMap { domain in
            var builder = PreparedResponseBuilder()
            let routes = Self.routes(for: domain, shared: shared, builder: &builder)
            return (name: domain.domain, routes: routes, prepared: builder.responses)
        }
        self.init(
            domains: HostDirectory(built.map { ($0.name, $0.routes) }), shared: shared,
            prepared: builder.responses + built.flatMap(\.prepared))
    }

    private init(domains: HostDirectory<DomainRoutes>, shared: Shared, prepared: [PreparedResponse]) {
        self.domains = domains
        self.shared = shared
        preparedResponses = prepared
    }

    /// These routes with `changes` applied: a domain given with a version gets routes built for it (its
    /// responses are this table's ``preparedResponses``), a domain given with `nil` is removed, and every other
    /// domain keeps its routes, its prepared responses and the transport's native forms of them.
    public func updating(_ changes: some Sequence<(domain: String, version: PublishedDomain?)>) -> SiteRoutes {
        var builder = PreparedResponseBuilder()
        let updates = changes.map { change in
            (name: change.domain, value: change.version.map { Self.routes(for: $0, shared: shared, builder: &builder) })
        }
        return SiteRoutes(domains: domains.updating(updates), shared: shared, prepared: builder.responses)
    }

    /// The number of domains routed.
    public var domainCount: Int { domains.count }

    /// The routes of one domain, its responses prepared in `builder`.
    private static func routes(for domain: PublishedDomain, shared: Shared, builder: inout PreparedResponseBuilder)
        -> DomainRoutes
    {
        builder.domainID = shared.domainIDs.id(for: domain.domain)
        builder.httpsOnlyHeaders = domain.hsts.map { [HTTPHeader("Strict-Transport-Security", $0)] } ?? []
        defer {
            builder.domainID = 0
            builder.httpsOnlyHeaders = []
        }
        let unsigned = StaticResource(
            body: domain.associationFile, contentType: "application/json", cacheControl: domain.cacheControl,
            builder: &builder)
        // Content type and body always agree, and each form has its own ETag (derived from its bytes).
        let signed = domain.signedAssociationFile.map {
            StaticResource(
                body: $0, contentType: "application/pkcs7-mime", cacheControl: domain.cacheControl, builder: &builder)
        }
        return DomainRoutes(
            association: domain.signedPaths == .both ? signed ?? unsigned : unsigned,
            rootAssociation: signed ?? unsigned,
            assetLinks: domain.assetLinks.map {
                StaticResource(
                    body: $0, contentType: "application/json", cacheControl: domain.cacheControl, builder: &builder)
            },
            credentials: domain.credentialEndpoints.flatMap {
                credentialRoutes($0, cacheControl: domain.cacheControl, builder: &builder)
            },
            // A domain with HSTS sends it on its 404 and 405 too: those are its own.
            methodNotAllowed: domain.hsts == nil
                ? shared.methodNotAllowed : builder.prepare(methodNotAllowed, common: true),
            notFound: domain.hsts == nil ? shared.notFound : builder.prepare(notFound, common: true),
            pages: domain.pages.map {
                PageRoutes(
                    domain: domain.domain, pages: $0, file: domain.file, builder: &builder, rendered: shared.rendered)
            })
    }

    /// The passkey endpoints document (W3C Passkey Endpoints §3.1.1: 200, `application/json`, with the domain's
    /// ETag and `Cache-Control` like its other files) and the change-password redirect (a `302` with `Location`,
    /// `no-store` so a target changed on reload is followed at once); `nil` when neither is served. A URL that is
    /// not ``CredentialURL/isServable(_:)`` is not served, whatever the load let through: nothing but a checked
    /// URL reaches a header.
    private static func credentialRoutes(
        _ endpoints: CredentialEndpoints, cacheControl: String, builder: inout PreparedResponseBuilder
    ) -> CredentialRoutes? {
        let passkeys = endpoints.passkeys.flatMap { passkeys in
            passkeys.urls.allSatisfy { CredentialURL.isServable($0.url) } ? passkeys : nil
        }
        let target = endpoints.changePassword.flatMap { CredentialURL.isServable($0) ? $0 : nil }
        guard passkeys != nil || target != nil else { return nil }
        return CredentialRoutes(
            passkeyEndpoints: passkeys.map {
                StaticResource(
                    body: $0.body, contentType: "application/json", cacheControl: cacheControl, builder: &builder)
            },
            changePassword: target.map {
                builder.prepare(
                    Response(
                        status: 302,
                        headers: [
                            HTTPHeader("Location", $0), HTTPHeader("Content-Type", "text/plain; charset=utf-8"),
                            HTTPHeader("Cache-Control", "no-store"), HTTPHeader("X-Content-Type-Options", "nosniff"),
                        ],
                        body: Array("change your password at \($0)\n".utf8)))
            })
    }

    /// Routes by Host (SNI when there is no Host), then by exact path. Only `/.well-known/change-password` is
    /// ever redirected, and only where the domain configures it; the association files never are (spec §3.3).
    ///
    /// A request whose Host names a configured domain other than the connection's SNI gets 421: it was
    /// sent on a connection whose certificate was chosen for another name (RFC 9110 §15.5.20).
    public func route(_ request: some HTTPRequest) -> RouteDecision {
        let serverName = request.tlsServerName
        let site: DomainRoutes
        switch lookUpHost(request, serverName: serverName) {
        case .unknown: return .prepared(shared.unknownHost)
        case .misdirected: return .prepared(shared.misdirected)
        case .found(let found): site = found
        }
        // Which resource, without copying one out (a copy retains each of its responses, and at thousands of
        // domains each retain is a cache miss).
        let which = request.withPath { path -> FixedResource? in
            func equals(_ candidate: [UInt8]) -> Bool {
                candidate.count == path.count
                    && candidate.withUnsafeBytes { memcmp($0.baseAddress!, path.baseAddress!, path.count) == 0 }
            }
            if equals(Self.associationPaths[0]) { return .association }
            if equals(Self.associationPaths[1]) { return .rootAssociation }
            if equals(Self.assetLinksPath) && site.assetLinks != nil { return .assetLinks }
            if let credentials = site.credentials {
                if equals(Self.passkeyEndpointsPath) && credentials.passkeyEndpoints != nil { return .passkeyEndpoints }
                if equals(Self.changePasswordPath) && credentials.changePassword != nil { return .changePassword }
            }
            return nil
        }
        // The association files keep priority over pages (a pages/ file can never shadow them).
        guard let which else { return site.pages?.value.route(request) ?? .prepared(site.notFound) }
        guard request.method.isRead else { return .prepared(site.methodNotAllowed) }
        return .prepared(
            request.withHeader("If-None-Match") { ifNoneMatch in
                switch which {
                case .association: site.association.answer(ifNoneMatch: ifNoneMatch)
                case .rootAssociation: site.rootAssociation.answer(ifNoneMatch: ifNoneMatch)
                case .assetLinks: site.assetLinks!.answer(ifNoneMatch: ifNoneMatch)
                case .passkeyEndpoints: site.credentials!.passkeyEndpoints!.answer(ifNoneMatch: ifNoneMatch)
                // A redirect has no validator: If-None-Match does not apply to it.
                case .changePassword: site.credentials!.changePassword!
                }
            })
    }

    private enum FixedResource {
        case association, rootAssociation, assetLinks, passkeyEndpoints, changePassword
    }

    private enum HostLookup {
        case found(DomainRoutes)
        case unknown
        case misdirected
    }

    /// The domain named by the Host header, or by SNI when there is no usable Host.
    private func lookUpHost(_ request: some HTTPRequest, serverName: String?) -> HostLookup {
        let byHost: HostLookup? = request.withHeader("Host") { raw in
            HostName.withNormalized(raw) { host in
                guard let host else { return nil }
                guard let site = domains[host] else { return .unknown }
                if let serverName, !Self.equal(serverName, host) { return .misdirected }
                return .found(site)
            }
        }
        if let byHost { return byHost }
        guard let serverName, let site = domains[serverName] else { return .unknown }
        return .found(site)
    }

    private static func equal(_ name: String, _ bytes: UnsafeRawBufferPointer) -> Bool {
        var name = name
        return name.withUTF8 {
            $0.count == bytes.count && (bytes.isEmpty || memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0)
        }
    }
}
