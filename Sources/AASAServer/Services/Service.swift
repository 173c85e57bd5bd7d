/// The one shape of everything the server runs in the background (the file watcher, ACME, the CDN check, the
/// removal timer, the change comparer): made stopped, started once, stopped once.
///
/// ``stop()`` returns only when every thread the service started has ended, joined rather than abandoned, so the
/// server stops its services in the reverse order it started them and knows, when `stop` returns, that none of
/// them still calls back into it.
protocol Service: AnyObject, Sendable {
    /// Starts the service's threads. Called at most once.
    func start()
    /// Stops the service: work in progress ends at its next check, waiting work is dropped, and the call returns
    /// once the service's threads have ended. Safe to call before ``start()``, and more than once.
    func stop()
}
