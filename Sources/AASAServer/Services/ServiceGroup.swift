import AASACore
import Synchronization

/// One ordered list of what the server runs: started in order, each after those before it; when one fails to start,
/// those already started are stopped, newest first; and stopped in the reverse order of the start, each joined before
/// the next is stopped.
///
/// The order is the data flow's: what serves (the listeners) first, what reads (the store, the reloader's first load)
/// next, what acts on what is served (the follower, the watcher, the CDN check, ACME) last. So a stop ends what could
/// start a reload before the reloader, and the reloader before the listeners it publishes to.
final class ServiceGroup: Sendable {
    private struct State {
        var services: [any Service]
        /// How many of ``services`` started, in order.
        var started = 0
        var stopped = false
    }

    private let state: Mutex<State>

    /// A group of `services`, in the order they start; nothing runs until ``start()``.
    init(_ services: [any Service]) {
        state = Mutex(State(services: services))
    }

    /// The services, in the order they start.
    var services: [any Service] { state.withLock { $0.services } }

    /// Starts every service in order. When one throws, or the group is stopped meanwhile, stops those started
    /// (newest first) and throws.
    func start() throws(Server.StartupError) {
        for index in services.indices {
            guard let service = state.withLock({ $0.stopped ? nil : $0.services[index] }) else { throw Self.stopped }
            do {
                try service.start()
            } catch {
                stop(draining: .zero)
                throw error
            }
            let stoppedMeanwhile = state.withLock { state in
                if !state.stopped { state.started = index + 1 }
                return state.stopped
            }
            if stoppedMeanwhile {
                // The stop did not see this one started: it is stopped here.
                service.stop()
                throw Self.stopped
            }
        }
    }

    /// Stops every service that started, newest first, each within `grace` (``Service/stop(draining:)``), and returns
    /// once their threads have ended. Calling it again does nothing.
    func stop(draining grace: Duration) {
        let stopping = state.withLock { state -> [any Service] in
            guard !state.stopped else { return [] }
            state.stopped = true
            return Array(state.services.prefix(state.started))
        }
        for service in stopping.reversed() { service.stop(draining: grace) }
    }

    /// Why a start ends when the group is stopped before its last service started.
    private static let stopped = Server.StartupError(
        diagnostics: [Diagnostic(.error, rule: .listener, "the server was stopped while it was starting")],
        isConfigurationError: false)
}
