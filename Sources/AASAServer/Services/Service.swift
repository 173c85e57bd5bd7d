/// The one shape of everything the server runs: the listeners, the store replica and its follower, the reloader,
/// the file watcher, the CDN check and ACME, each made stopped, started once and stopped once, in the order of a
/// ``ServiceGroup``.
///
/// ``stop()`` returns only when every thread the service started has ended, joined rather than abandoned, so the
/// group stops its services in the reverse order it started them and knows, when `stop` returns, that none of
/// them still calls back into it.
protocol Service: AnyObject, Sendable {
    /// Starts the service: after every service listed before it, before every one listed after. Called at most once;
    /// a start that throws leaves nothing running.
    func start() throws(Server.StartupError)
    /// Stops the service: work in progress ends at its next check, waiting work is dropped, and the call returns
    /// once the service's threads have ended. Safe to call before ``start()``, and more than once.
    func stop()
    /// Stops the service, letting work in progress finish within `grace` (the listeners' requests in flight). Most
    /// services have nothing to drain: they ``stop()``.
    func stop(draining grace: Duration)
}

extension Service {
    func stop(draining grace: Duration) {
        stop()
    }
}
