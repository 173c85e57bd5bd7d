import AASACore
import AASAMicroHTTPD
import AASAPostgres
import Foundation
import Logging

/// What the admin listener serves of a running server: the routes of each catalog with ACME's or a webroot's
/// challenge answers, the live figures its routes read at request time (``AdminRoutes/Live``), and the tenant API
/// over where the domains are.
struct AdminWiring: Sendable {
    let configuration: ServerConfiguration
    let logger: Logger
    let recorder: TrafficRecorder
    let history: ReloadHistory
    let listeners: Listeners
    /// Where certificates' leaves and keys wait for a handshake; `nil`: in memory.
    let vault: CredentialVault?
    /// The http-01 answers of this process's orders, with `--acme`.
    let challenges: ChallengeStore?
    /// Where the tenant API reads and writes.
    let repository: any DomainRepository
    /// The ACME manager, once made.
    let acme: @Sendable () -> ACMEManager?
    /// The CDN check's observations.
    let cdn: @Sendable () -> [String: (apple: CDNObservation?, google: CDNObservation?)]
    /// What the replica knows of its store.
    let store: @Sendable () -> StoreStatus?
    /// The served status.
    let status: @Sendable () -> ServerStatus?
    /// Domains signed as the server's loads sign them.
    let sign: @Sendable ([LoadedDomain]) -> [LoadedDomain]

    /// The builder of every catalog's routes.
    var routeBuilder: RouteBuilder {
        RouteBuilder(
            recorder: recorder, responseCache: listeners.responseCache, challenges: challenges,
            webroot: configuration.acmeWebroot.map(WebrootChallenges.init(root:)),
            thumbprint: { [acme] in acme()?.thumbprint }, live: live, access: configuration.adminAccess)
    }

    /// What the admin routes read at request time.
    private var live: AdminRoutes.Live {
        var acmeFigures: (@Sendable () -> ACMEFigures)?
        if configuration.acme != nil {
            acmeFigures = { [acme] in acme()?.figures ?? ACMEFigures() }
        }
        let cdnFigures = configuration.cdnCheck == nil ? nil : cdn
        var live = AdminRoutes.Live(
            recorder: recorder, reloads: { [history] in history.counts },
            reloadHistory: { [history] in history.latest }, listeners: { [listeners] in listeners.figures },
            acme: acmeFigures, cdn: cdnFigures)
        if configuration.acme != nil {
            live.retryACME = { [acme] domain in acme()?.retryNow(domain) ?? .unknownDomain }
        }
        if configuration.httpsPort != nil {
            live.certificateCache = { [listeners] in listeners.certificateCacheFigures }
        }
        if let vault { live.credentialVault = { vault.figures } }
        if configuration.httpsPort != nil || configuration.httpPort != nil {
            live.responseCache = { [listeners] in listeners.responseCacheFigures }
        }
        if let settings = configuration.store {
            let server = PostgresConnection.server(of: settings.uri)
            live.store = { [store] in store() ?? StoreStatus(server: server, replica: settings.replica) }
        }
        if !configuration.adminAccess.tokens.isEmpty { live.api = tenantAPI(acme: acmeFigures, cdn: cdnFigures) }
        return live
    }

    /// The tenant API (`/api/v1/`, docs/api.md) over ``repository``, reading
    /// each domain's state from the served `/status` with ACME's and the CDN check's live figures.
    private func tenantAPI(
        acme: (@Sendable () -> ACMEFigures)?,
        cdn: (@Sendable () -> [String: (apple: CDNObservation?, google: CDNObservation?)])?
    ) -> @Sendable (APIRequest) -> Response {
        let view: @Sendable () -> ServerStatus.LiveView = {
            var view = ServerStatus.LiveView()
            view.acme = acme?()
            view.certificates = view.acme?.statuses ?? [:]
            view.cdn = cdn?() ?? [:]
            return view
        }
        let api = TenantAPI(
            repository: repository,
            states: { [status] in status()?.tenantStates(live: view()) ?? [:] },
            status: { [status] name in status()?.tenantStatus(name, live: view()) },
            sign: sign, logger: logger)
        return { api.answer($0) }
    }
}
