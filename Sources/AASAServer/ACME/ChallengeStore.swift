import Synchronization

/// The http-01 answers the server's own orders publish, by domain and token, read by ``ChallengeRoutes`` on the
/// listeners' threads.
public final class ChallengeStore: ChallengeResponder {
    private let answers = Mutex<[String: [String: String]]>([:])

    /// An empty store.
    public init() {}

    /// Answers `keyAuthorization` for `token` on `domain`.
    public func publish(token: String, keyAuthorization: String, domain: String) {
        answers.withLock { $0[domain, default: [:]][token] = keyAuthorization }
    }

    /// Stops answering `token` on `domain`.
    public func withdraw(token: String, domain: String) {
        answers.withLock { answers in
            answers[domain]?[token] = nil
            if answers[domain]?.isEmpty == true { answers[domain] = nil }
        }
    }

    /// The key authorization published for `token` on `domain`, if any.
    public func answer(domain: String, token: String) -> String? {
        answers.withLock { $0[domain]?[token] }
    }
}
