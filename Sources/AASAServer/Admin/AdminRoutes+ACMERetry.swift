import AASACore
import Foundation

extension AdminRoutes {
    /// `POST /acme/retry?domain=D`: makes one domain's certificate order due now (``ACMERetryOutcome``), as JSON
    /// that is never cached.
    ///
    /// 202 when queued (`queuePosition`, or `null` when it is placed at once) or already running (`in-progress`);
    /// 400 when `domain` is missing or not a host name; 404 when no domain folder has that name; 409 when the
    /// certificate is the operator's, or without `--acme` (`retry` is `nil`); 429 with `Retry-After` (seconds) and
    /// `retryAfter` (the time) when the name failed validation too often in the last hour. The route takes no
    /// body: the listeners refuse one with 413 before routing.
    static func acmeRetryAnswer(
        rawQuery: String?, retry: (@Sendable (String) -> ACMERetryOutcome)?, now: Date = Date()
    ) -> Response {
        guard let retry else {
            return retryJSON(
                409,
                [("error", .string("ACME is off: this server does not obtain certificates; start it with --acme"))])
        }
        guard let raw = QueryString.value("domain", in: rawQuery), !raw.isEmpty else {
            return retryJSON(
                400,
                [
                    (
                        "error",
                        .string("domain: missing; name the domain to retry, e.g. POST /acme/retry?domain=shop.example")
                    )
                ])
        }
        let name = raw.hasSuffix(".") ? String(raw.lowercased().dropLast()) : raw.lowercased()
        if let problem = SiteConfigLoader.domainNameProblem(name) {
            // The name is echoed at most 100 bytes long: the request line bounds it, this keeps answers short.
            return retryJSON(
                400,
                [
                    (
                        "error",
                        .string(
                            "domain=\(UTF8Bound.cut(raw, bytes: 100)): \(problem.message); e.g. ?domain=shop.example")
                    )
                ])
        }
        switch retry(name) {
        case .queued(let position):
            return retryJSON(
                202,
                [
                    ("domain", .string(name)), ("state", .string("queued")),
                    ("queuePosition", position.map { .number(Double($0)) } ?? .null),
                ])
        case .inProgress:
            return retryJSON(202, [("domain", .string(name)), ("state", .string("in-progress"))])
        case .unknownDomain:
            return retryJSON(
                404,
                [
                    ("domain", .string(name)),
                    ("error", .string("\(name) is not a configured domain: no domain folder has that name")),
                ])
        case .notManaged(let reason):
            return retryJSON(
                409, [("domain", .string(name)), ("state", .string("not-managed")), ("error", .string(reason))])
        case .tooManyFailures(let until):
            let time = ServerStatus.makeFormatter().string(from: until)
            let seconds = CheckedNumber.clamped(until.timeIntervalSince(now).rounded(.up), to: 1...Int.max)
            return retryJSON(
                429,
                [
                    ("domain", .string(name)), ("state", .string("too-many-failures")),
                    ("retryAfter", .string(time)),
                    (
                        "error",
                        .string(
                            "\(name) failed validation as often in the last hour as the CA allows (Let's Encrypt: 5 "
                                + "per name per hour); retry after \(time)")
                    ),
                ], extraHeaders: [HTTPHeader("Retry-After", "\(seconds)")])
        }
    }

    private static func retryJSON(
        _ status: Int, _ members: [(String, JSONValue)], extraHeaders: [HTTPHeader] = []
    ) -> Response {
        Response(
            status: status,
            headers: [HTTPHeader("Content-Type", "application/json"), HTTPHeader("Cache-Control", "no-store")]
                + extraHeaders,
            body: JSONWriter(style: .pretty).bytes(.members(members)))
    }
}
