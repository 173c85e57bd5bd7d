package import Foundation

/// One name's order state, kept where every replica reads it (`certs/acme/orders.json`, or the store's
/// `acme_orders`): the failures in a row, the validations that failed within the last hour (Let's Encrypt allows 5
/// per name per account per hour), when the next attempt is due and why the last one failed, and the renewal window
/// the CA last suggested for the certificate in service (RFC 9773), so one replica asks it for the fleet.
package struct ACMEHistory: Sendable, Equatable {
    /// Failures in a row.
    package var failures = 0
    /// When validations failed, the last hour's only.
    package var failedValidations: [Date] = []
    /// When to try again.
    package var nextAttempt: Date?
    /// The last failure in words, with its fix.
    package var lastError: String?
    /// The CA's last problem document, verbatim.
    package var lastProblem: String?
    /// The renewal window the CA suggested (`nil`: it offers none), for the certificate `windowCertificate` (its ARI
    /// certID), asked at `windowCheckedAt`.
    package var renewalWindow: ClosedRange<Date>?
    package var windowCertificate: String?
    package var windowCheckedAt: Date?
    /// dns-01 records written and not yet removed.
    package var challengeRecords: [DNSChallengeRecord] = []

    /// Whether the history holds nothing but ``challengeRecords``, or nothing at all.
    package var isOnlyRecords: Bool {
        var bare = ACMEHistory()
        bare.challengeRecords = challengeRecords
        return self == bare
    }

    /// Failed validations allowed per name per hour (Let's Encrypt's "Authorization Failures per Identifier per
    /// Account").
    package static let validationFailuresPerHour = 5
    /// The most failures in a row a history holds: retried daily after the third, more than two thousand years.
    package static let failureRange = 0...1_000_000

    /// ``failedValidations`` without those older than an hour before `now`.
    package func recentValidations(now: Date) -> [Date] {
        failedValidations.filter { now.timeIntervalSince($0) < 3600 }
    }

    /// When another validation may fail without passing the hourly limit: `now` unless 5 failed within the hour.
    package func validationAllowed(now: Date) -> Date {
        let recent = recentValidations(now: now).sorted()
        guard recent.count >= Self.validationFailuresPerHour else { return now }
        return recent[recent.count - Self.validationFailuresPerHour].addingTimeInterval(3600)
    }

    /// The history as stored (JSON).
    package var json: JSONValue {
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
            ("challengeRecords", .array(challengeRecords.map { JSONNode($0.json) })),
        ])
    }

    /// Reads a stored history. A time that is not a text ISO 8601 date is left out, as an absent one.
    ///
    /// - Throws: ``CheckedNumber/Failure`` naming the member when `json` is no object, `failures` is no whole number
    ///   within ``failureRange``, or a time lies outside years 1 to 9999.
    package init(json: JSONValue) throws(CheckedNumber.Failure) {
        guard case .object = json else {
            throw CheckedNumber.Failure(field: "the history", value: CheckedNumber.shown(json), expected: "an object")
        }
        let formatter = ISO8601DateFormatter()
        func date(_ key: String, _ value: JSONValue?) throws(CheckedNumber.Failure) -> Date? {
            guard let date = value?.stringValue.flatMap(formatter.date) else { return nil }
            return try CheckedNumber.date(date, field: "\"\(key)\"")
        }
        switch json[member: "failures"] {
        case .number(let count)?:
            failures = try CheckedNumber.integer(count, in: Self.failureRange, field: "\"failures\"")
        case nil, .null?: break
        case let other?:
            throw CheckedNumber.Failure(
                field: "\"failures\"", value: CheckedNumber.shown(other),
                expected: "a whole number from 0 to \(Self.failureRange.upperBound)")
        }
        for value in json[member: "failedValidations"]?.arrayValue ?? [] {
            if let failed = try date("failedValidations", value) { failedValidations.append(failed) }
        }
        nextAttempt = try date("nextAttempt", json[member: "nextAttempt"])
        lastError = json[member: "lastError"]?.stringValue
        lastProblem = json[member: "lastProblem"]?.stringValue
        if let start = try date("windowStart", json[member: "windowStart"]),
            let end = try date("windowEnd", json[member: "windowEnd"]), start <= end
        {
            renewalWindow = start...end
        }
        windowCertificate = json[member: "windowCertificate"]?.stringValue
        windowCheckedAt = try date("windowCheckedAt", json[member: "windowCheckedAt"])
        challengeRecords = (json[member: "challengeRecords"]?.arrayValue ?? []).prefix(64).compactMap(
            DNSChallengeRecord.init(json:))
    }

    package init() {}
}
