public import Foundation

/// The token bucket every new order takes a token from, and the fleet-wide pause a CA's rate limit sets, as ACME's
/// storage keeps them (`certs/acme/pacing.json`, or the store's `acme_pacing` row for a fleet).
///
/// The bucket holds at most the order rate's `orders` tokens and refills continuously at the rate, as Let's
/// Encrypt's own limit does, so a start with thousands of new domains places the first `orders` at once and then one
/// every `period / orders`. A pause (a `429` or `503` with `Retry-After`, or a `rateLimited` problem) holds every new
/// order until it ends, whatever the bucket holds.
public struct PacingState: Sendable, Equatable {
    /// Tokens in the bucket at ``refilledAt``.
    public var tokens: Double
    /// When ``tokens`` was counted.
    public var refilledAt: Date
    /// Until when new orders wait; `nil`: not paused.
    public var pausedUntil: Date?
    /// Why, naming the CA's problem and URL.
    public var pauseReason: String?

    /// The tokens a bucket holds: none to the most orders an order rate allows (`--acme-order-rate`).
    public static let tokenRange: ClosedRange<Double> = 0...1_000_000

    /// A state as stored.
    public init(tokens: Double, refilledAt: Date, pausedUntil: Date?, pauseReason: String?) {
        self.tokens = tokens
        self.refilledAt = refilledAt
        self.pausedUntil = pausedUntil
        self.pauseReason = pauseReason
    }

    /// The state `pacing.json` holds: `tokens` (a number), `refilledAt` and `pausedUntil` (ISO 8601 times, the pause
    /// `null` when there is none) and `pauseReason`.
    ///
    /// - Throws: ``CheckedNumber/Failure`` naming the member that is missing, of another type, or out of range
    ///   (``tokenRange``; a time outside years 1 to 9999).
    public init(json: JSONValue) throws(CheckedNumber.Failure) {
        guard case .object = json else {
            throw CheckedNumber.Failure(
                field: "the pacing state", value: CheckedNumber.shown(json), expected: "an object")
        }
        let formatter = ISO8601DateFormatter()
        func date(_ key: String) throws(CheckedNumber.Failure) -> Date? {
            switch json[member: key] {
            case nil, .null?: return nil
            case .string(let text)?:
                guard let date = formatter.date(from: text) else {
                    throw CheckedNumber.Failure(
                        field: "\"\(key)\"", value: "'\(text.prefix(40))'", expected: "an ISO 8601 time")
                }
                return try CheckedNumber.date(date, field: "\"\(key)\"")
            case let other?:
                throw CheckedNumber.Failure(
                    field: "\"\(key)\"", value: CheckedNumber.shown(other), expected: "an ISO 8601 time")
            }
        }
        guard case .number(let tokens)? = json[member: "tokens"] else {
            throw CheckedNumber.Failure(
                field: "\"tokens\"", value: json[member: "tokens"].map(CheckedNumber.shown) ?? "absent",
                expected: CheckedNumber.words(for: Self.tokenRange))
        }
        guard let refilledAt = try date("refilledAt") else {
            throw CheckedNumber.Failure(field: "\"refilledAt\"", value: "absent", expected: "an ISO 8601 time")
        }
        self.init(
            tokens: try CheckedNumber.real(tokens, in: Self.tokenRange, field: "\"tokens\""), refilledAt: refilledAt,
            pausedUntil: try date("pausedUntil"), pauseReason: json[member: "pauseReason"]?.stringValue)
    }

    /// The state as `pacing.json` holds it.
    public var json: JSONValue {
        let formatter = ISO8601DateFormatter()
        return .members([
            ("tokens", .number(tokens)), ("refilledAt", .string(formatter.string(from: refilledAt))),
            ("pausedUntil", pausedUntil.map { .string(formatter.string(from: $0)) } ?? .null),
            ("pauseReason", pauseReason.map { .string($0) } ?? .null),
        ])
    }

    /// The state the cells of the store's `acme_pacing` row hold, as PostgreSQL sends them: `tokens`, `refilled_at`
    /// and `paused_until` as the text of a `double precision` (seconds since 1970 for the times; `paused_until`
    /// `NULL` when not paused), and `pause_reason`.
    ///
    /// - Throws: ``CheckedNumber/Failure`` naming the column that is `NULL`, not finite or out of range.
    public init(tokens: String?, refilledAt: String?, pausedUntil: String?, pauseReason: String?)
        throws(CheckedNumber.Failure)
    {
        self.init(
            tokens: try CheckedNumber.real(tokens, in: Self.tokenRange, field: "tokens"),
            refilledAt: try CheckedNumber.date(secondsSince1970: refilledAt, field: "refilled_at"),
            pausedUntil: try pausedUntil.map { text throws(CheckedNumber.Failure) in
                try CheckedNumber.date(secondsSince1970: text, field: "paused_until")
            }, pauseReason: pauseReason)
    }
}
