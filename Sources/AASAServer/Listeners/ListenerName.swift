/// The server's listeners, as logs, `/status` and `/metrics` name them.
enum ListenerName: String, CaseIterable, Sendable {
    /// The public HTTPS listener, with each domain's certificate.
    case https
    /// The public plain HTTP listener (ACME's http-01 answers, or behind a TLS-terminating proxy).
    case http
    /// The admin listener: health, metrics, status, match, the dashboard.
    case admin

    /// Whether it serves the public routes, whose every request the ``TrafficRecorder`` counts.
    var isPublic: Bool { self != .admin }
}
