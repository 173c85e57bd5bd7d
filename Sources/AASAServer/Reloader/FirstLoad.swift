public import AASACore
import Foundation
import Logging

/// The start's load: read like every reload, then checked before anything is served. The start fails when the
/// domains cannot be listed, when no domain at all can be served, when no certificate can (with HTTPS), or with
/// ``ServerConfiguration/refusesToStartWithErrors`` on any error; otherwise every domain and certificate that loads
/// is served and the others are reported.
struct FirstLoad {
    let configuration: ServerConfiguration
    /// The start's loader: its source watches each folder as it reads it.
    let loader: Loader
    let logger: Logger

    /// Loads everything, checks it, and hands the first catalog to `serve` (which starts the listeners). With
    /// `watcher`, the entries the load did not read are watched meanwhile, on another thread, and are watched when
    /// this returns or throws. Returns the catalog served and how long the start took.
    func run(watcher: ConfigWatcher?, serve: (Catalog) throws(Server.StartupError) -> Void) throws(Server.StartupError)
        -> (Catalog, Duration)
    {
        let clock = ContinuousClock()
        let started = clock.now
        let load = loader.load(after: Catalog(), at: Date())
        let remaining = DispatchGroup()
        if let watcher { DispatchQueue.global().async(group: remaining) { watcher.watchRemainingEntries() } }
        defer { remaining.wait() }
        var catalog = Catalog(shard: configuration.shard)
        let transition = catalog.apply(
            consume load, signer: loader, trigger: .start, removalGrace: configuration.removalGrace)
        let loaded: [LoadedDomain]
        do {
            loaded = try transition.domains.get()
        } catch {
            throw Server.StartupError(diagnostics: [error], isConfigurationError: true)
        }
        let diagnostics = loaded.flatMap(\.diagnostics)
        // A certificate that fails leaves its names on the default certificate, as on reload; the domains decide
        // whether the start goes on.
        guard !configuration.refusesToStartWithErrors || !diagnostics.hasErrors else {
            throw Server.StartupError(diagnostics: diagnostics.errors, isConfigurationError: true)
        }
        let location = loader.source.domainsLocation
        if loaded.isEmpty {
            logger.warning("no domain folders found; every request will get 404", metadata: ["config": "\(location)"])
        }
        guard loaded.isEmpty || !catalog.published.isEmpty else {
            throw Server.StartupError(
                diagnostics: diagnostics.errors + [
                    Diagnostic(
                        .error, rule: .noDomainServed,
                        "none of the \(loaded.count) domain folders in '\(location)' can be served", file: location,
                        hint: "fix the errors above")
                ], isConfigurationError: true)
        }
        if let intake = transition.certificates {
            FindingsLog(logger: logger).log(intake, defaultEntry: catalog.certificates.defaultEntry)
            if catalog.certificates.defaultEntry == nil {
                throw Server.StartupError(diagnostics: intake.diagnostics.errors, isConfigurationError: true)
            }
        }
        FindingsLog(logger: logger).log(loaded)
        try serve(catalog)
        FreedMemory.release()
        let took = clock.now - started
        // The counts, not the names: with thousands of domains one line listing them all helps nobody; the failed
        // ones were logged with their diagnostics above and are named on /readyz and /status.
        logger.info(
            "serving",
            metadata: [
                "domains": "\(catalog.published.count)", "failed": "\(loaded.count - catalog.published.count)",
                "seconds": "\(Reloader.seconds(took))",
            ])
        return (catalog, took)
    }
}

/// The rule of a start that serves nothing.
extension Rule {
    /// Reported by ``FirstLoad`` when no domain folder loaded.
    public static let noDomainServed = Rule(
        "no-domain-served", .error,
        "At start, no domain folder could be served: the start fails with exit status 2 (one failing domain beside good ones never stops the start)."
    )

    /// The rules of starting `serve` with the domains that loaded, in the order of the docs table: their part of
    /// `Rule.all`.
    package static let startRules: [Rule] = [
        .noDomainServed
    ]
}
