import AASACore
import Foundation

/// One name's order state, kept where every replica reads it (``ACMEStorage``): the failures in a row, the
/// validations that failed within the last hour (Let's Encrypt allows 5 per name per account per hour), when the next
/// attempt is due and why the last one failed, and the renewal window the CA last suggested for the certificate in
/// service (RFC 9773), so one replica asks it for the fleet.
struct ACMEHistory: Sendable, Equatable {
    /// Failures in a row.
    var failures = 0
    /// When validations failed, the last hour's only.
    var failedValidations: [Date] = []
    /// When to try again.
    var nextAttempt: Date?
    /// The last failure in words, with its fix.
    var lastError: String?
    /// The CA's last problem document, verbatim.
    var lastProblem: String?
    /// The renewal window the CA suggested (`nil`: it offers none), for the certificate `windowCertificate` (its ARI
    /// certID), asked at `windowCheckedAt`.
    var renewalWindow: ClosedRange<Date>?
    var windowCertificate: String?
    var windowCheckedAt: Date?

    /// Failed validations allowed per name per hour (Let's Encrypt's "Authorization Failures per Identifier per
    /// Account").
    static let validationFailuresPerHour = 5

    /// ``failedValidations`` without those older than an hour before `now`.
    func recentValidations(now: Date) -> [Date] {
        failedValidations.filter { now.timeIntervalSince($0) < 3600 }
    }

    /// When another validation may fail without passing the hourly limit: `now` unless 5 failed within the hour.
    func validationAllowed(now: Date) -> Date {
        let recent = recentValidations(now: now).sorted()
        guard recent.count >= Self.validationFailuresPerHour else { return now }
        return recent[recent.count - Self.validationFailuresPerHour].addingTimeInterval(3600)
    }

    /// The history as stored (JSON).
    var json: JSONValue {
        let formatter = ISO8601DateFormatter()
        return .members([
            ("failures", .number(Double(failures))),
            ("failedValidations", .strings(failedValidations.map { formatter.string(from: $0) })),
            ("nextAttempt", nextAttempt.map { .string(formatter.string(from: $0)) } ?? .null),
            ("lastError", lastError.map { .string($0) } ?? .null),
            ("lastProblem", lastProblem.map { .string($0) } ?? .null),
            ("windowStart", renewalWindow.map { .string(formatter.string(from: $0.lowerBound)) } ?? .null),
            ("windowEnd", renewalWindow.map { .string(formatter.string(from: $0.upperBound)) } ?? .null),
            ("windowCertificate", windowCertificate.map { .string($0) } ?? .null),
            ("windowCheckedAt", windowCheckedAt.map { .string(formatter.string(from: $0)) } ?? .null),
        ])
    }

    /// Reads a stored history; `nil` when `json` is not one.
    init?(json: JSONValue) {
        guard case .object = json else { return nil }
        let formatter = ISO8601DateFormatter()
        if case .number(let count)? = json[member: "failures"] { failures = Int(count) }
        failedValidations =
            json[member: "failedValidations"]?.arrayValue?.compactMap { $0.stringValue.flatMap(formatter.date) } ?? []
        nextAttempt = json[member: "nextAttempt"]?.stringValue.flatMap(formatter.date)
        lastError = json[member: "lastError"]?.stringValue
        lastProblem = json[member: "lastProblem"]?.stringValue
        if let start = json[member: "windowStart"]?.stringValue.flatMap(formatter.date),
            let end = json[member: "windowEnd"]?.stringValue.flatMap(formatter.date), start <= end
        {
            renewalWindow = start...end
        }
        windowCertificate = json[member: "windowCertificate"]?.stringValue
        windowCheckedAt = json[member: "windowCheckedAt"]?.stringValue.flatMap(formatter.date)
    }

    init() {}
}
