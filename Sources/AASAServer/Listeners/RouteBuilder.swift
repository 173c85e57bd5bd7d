import AASACore
import AASAMicroHTTPD
import AASAQRCode

/// The public routes of a catalog's published domains and the snapshot the public listeners serve them from, kept
/// between reloads so the next one rebuilds only the domains that changed.
struct PublishedRoutes: Sendable {
    var site: SiteRoutes
    var snapshot: RouteSnapshot
}

/// Builds what the listeners serve for a ``Catalog``: one route snapshot for both public listeners (its native
/// responses built once between them), wrapped with the ACME challenge answers when there are any, and the admin
/// routes, whose `/status` and `/match` describe the same catalog.
struct RouteBuilder: Sendable {
    /// Numbers each domain for the traffic figures.
    var recorder: TrafficRecorder
    /// Keeps the native responses the public listeners built, for every snapshot made here.
    var responseCache: ResponseCache
    /// ACME's pending http-01 answers, with `--acme`.
    var challenges: ChallengeStore?
    /// The folder of another client's http-01 answers, with `--acme-webroot`.
    var webroot: WebrootChallenges?
    /// The thumbprint of the ACME account's key: every replica answers any order of the account on a configured
    /// domain (``StatelessChallenges``).
    var thumbprint: @Sendable () -> String? = { nil }
    /// What the admin routes read at request time.
    var live: AdminRoutes.Live
    var access: AdminAccess

    /// The routes for `catalog`: the domains in `changed` built anew on `previous` (every domain's when either is
    /// `nil`), the snapshot the public listeners serve, and the admin routes.
    func routes(for catalog: Catalog, previous: PublishedRoutes?, changed: [String]?) throws -> (
        published: PublishedRoutes, served: RouteSnapshot, admin: AdminRoutes
    ) {
        let site: SiteRoutes
        if let changed, let previous {
            site = previous.site.updating(changed.map { ($0, catalog.published[$0]) })
        } else {
            // Desktop visitors of the landing page and of pages with the banner get a QR code of the page's URL.
            site = SiteRoutes(
                catalog.published.values, rendered: RenderedPages(qrCode: .libqrencode), domainIDs: recorder.domainIDs)
        }
        let snapshot = try RouteSnapshot(site, previous: previous?.snapshot, cache: responseCache)
        // The challenge routes wrap the site's without preparing anything of their own for each domain.
        let stateless = thumbprint().map { thumbprint in
            StatelessChallenges(thumbprint: thumbprint) { [loaded = catalog.loaded] in loaded.contains($0) }
        }
        let served =
            try challenges == nil && webroot == nil
            ? snapshot
            : RouteSnapshot(
                ChallengeRoutes(site, store: challenges, webroot: webroot, stateless: stateless), previous: snapshot,
                cache: responseCache)
        return (PublishedRoutes(site: site, snapshot: snapshot), served, adminRoutes(for: catalog))
    }

    /// The admin routes for `catalog`: `/status` and `/match` describe it.
    func adminRoutes(for catalog: Catalog) -> AdminRoutes {
        AdminRoutes(published: catalog.published, status: catalog.status, live: live, access: access)
    }
}
