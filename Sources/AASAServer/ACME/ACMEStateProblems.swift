import AASACore
import Logging
import Synchronization

/// The records of ACME's state an ``ACMEStorage`` leaves out because they hold a value out of range (a state file,
/// one name's member of `orders.json`, a row of `acme_orders` or `acme_pacing`): each is logged once, as an error
/// naming where it is, what is wrong and the fix, however often it is read again.
final class ACMEStateProblems: Sendable {
    private let logger: Logger
    private let reported = Mutex<Set<String>>([])

    /// Problems logged to `logger`.
    init(logger: Logger) {
        self.logger = logger
    }

    /// Logs `<place>: error: <problem>; fix: <fix>`, unless that line was logged already.
    func report(_ place: String, _ problem: String, fix: String) {
        let line = "\(place): error: \(problem); fix: \(fix)"
        guard reported.withLock({ $0.insert(line).inserted }) else { return }
        logger.error("ACME: a record of the state is left out", metadata: ["error": "\(LogEscaping.escape(line))"])
    }
}
