public import Foundation

/// A number read from data the process does not control (a row of the store, a record of its snapshot, a state
/// file, a header of a CA's answer), converted without a trap.
///
/// Swift traps on `Int(Double.infinity)`, `Int(Double.nan)`, `Int(1e300)` and `UInt16(70_000)`; one such value in a
/// row every replica reads would stop the whole fleet, again at every restart. Every conversion of such a number
/// goes through here: a value that is not finite or lies outside its range is a ``Failure`` naming the field, the
/// value and the range, which the caller makes the error of that row, record or file (and serves everything else),
/// or ``clamped(_:to:)`` bounds it where a bound is the answer (a wait, a count for display).
public enum CheckedNumber {
    /// A number outside the range it must lie in: what it is, its value, and the range.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// What was read, as the message names it: `changes.at of change 42`, `"failures"`.
        public var field: String
        /// The value as read (`inf`, `nan`, `1e+300`, or the text that is no number).
        public var value: String
        /// The range it must lie in, in words.
        public var expected: String

        /// A failure of `field`, read as `value`, which must be `expected`.
        public init(field: String, value: String, expected: String) {
            self.field = field
            self.value = value
            self.expected = expected
        }

        /// `<field> is <value>, not <expected>`.
        public var description: String { "\(field) is \(value), not \(expected)" }
    }

    /// The seconds since 1970 of the times the server keeps: from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z, the
    /// years of ISO 8601's four digits and of an HTTP date (the store's `CHECK` constraints allow the same).
    public static let timeRange: ClosedRange<Double> = -62_135_596_800...253_402_300_799

    /// `value` rounded toward zero as a `T` within `range`.
    ///
    /// - Throws: ``Failure`` when `value` is not finite, or outside `range` once rounded.
    public static func integer<T: FixedWidthInteger>(
        _ value: Double, in range: ClosedRange<T> = T.min...T.max, field: @autoclosure () -> String
    ) throws(Failure) -> T {
        guard value.isFinite, let whole = T(exactly: value.rounded(.towardZero)), range.contains(whole) else {
            throw Failure(field: field(), value: "\(value)", expected: wholeNumber(in: range))
        }
        return whole
    }

    /// The decimal integer `text` (as PostgreSQL sends a `bigint`) as a `T` within `range`.
    ///
    /// - Throws: ``Failure`` when `text` is missing (`NULL`), no decimal integer, or outside `range`.
    public static func integer<T: FixedWidthInteger>(
        _ text: String?, in range: ClosedRange<T> = T.min...T.max, field: @autoclosure () -> String
    ) throws(Failure) -> T {
        guard let text, let whole = T(text), range.contains(whole) else {
            throw Failure(field: field(), value: text.map(quoted) ?? "NULL", expected: wholeNumber(in: range))
        }
        return whole
    }

    /// `value` when it is finite and within `range`.
    ///
    /// - Throws: ``Failure`` otherwise.
    public static func real(_ value: Double, in range: ClosedRange<Double>, field: @autoclosure () -> String)
        throws(Failure) -> Double
    {
        guard value.isFinite, range.contains(value) else {
            throw Failure(field: field(), value: "\(value)", expected: words(for: range))
        }
        return value
    }

    /// The number `text` (as PostgreSQL sends a `double precision`: `Infinity` and `NaN` included) when it is finite
    /// and within `range`.
    ///
    /// - Throws: ``Failure`` when `text` is missing, no number, not finite or outside `range`.
    public static func real(_ text: String?, in range: ClosedRange<Double>, field: @autoclosure () -> String)
        throws(Failure) -> Double
    {
        guard let text, let value = Double(text) else {
            throw Failure(
                field: field(), value: text.map(quoted) ?? "NULL",
                expected: words(for: range))
        }
        return try real(value, in: range, field: field())
    }

    /// The time `value` seconds after 1970, within ``timeRange``.
    ///
    /// - Throws: ``Failure`` when `value` is not finite or outside the range.
    public static func date(secondsSince1970 value: Double, field: @autoclosure () -> String) throws(Failure) -> Date {
        guard value.isFinite, timeRange.contains(value) else {
            throw Failure(field: field(), value: "\(value)", expected: timeWords)
        }
        return Date(timeIntervalSince1970: value)
    }

    /// The time `text` seconds after 1970 (as `extract(epoch FROM …)::float8` sends it), within ``timeRange``.
    ///
    /// - Throws: ``Failure`` when `text` is missing, no number, not finite or outside the range.
    public static func date(secondsSince1970 text: String?, field: @autoclosure () -> String) throws(Failure) -> Date {
        guard let text, let value = Double(text) else {
            throw Failure(field: field(), value: text.map(quoted) ?? "NULL", expected: timeWords)
        }
        return try date(secondsSince1970: value, field: field())
    }

    /// `date` when its seconds since 1970 lie within ``timeRange``.
    ///
    /// - Throws: ``Failure`` otherwise.
    public static func date(_ date: Date, field: @autoclosure () -> String) throws(Failure) -> Date {
        try self.date(secondsSince1970: date.timeIntervalSince1970, field: field())
    }

    /// `value` rounded toward zero and bounded by `range`; `nan` is the lower bound. For a value whose bound is the
    /// answer (a wait, seconds shown), never for one that decides what is served.
    public static func clamped<T: FixedWidthInteger>(_ value: Double, to range: ClosedRange<T>) -> T {
        guard !value.isNaN else { return range.lowerBound }
        if value <= Double(range.lowerBound) { return range.lowerBound }
        // `Double(T.max)` may round up past `T.max`: compare with the bound as a Double, then convert the bound.
        if value >= Double(range.upperBound) { return range.upperBound }
        return T(value.rounded(.towardZero))
    }

    private static let timeWords =
        "a time from year 1 to 9999 (seconds since 1970 from -62135596800 to 253402300799)"

    private static func wholeNumber<T: FixedWidthInteger>(in range: ClosedRange<T>) -> String {
        "a whole number from \(range.lowerBound) to \(range.upperBound)"
    }

    /// A JSON value of the wrong type as a failure names it: `a string`, `an object`, `null`.
    package static func shown(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .array, .object: "an \(value.typeName)"
        default: "a \(value.typeName)"
        }
    }

    /// `a number from <lower> to <upper>`, whole bounds without a fraction.
    package static func words(for range: ClosedRange<Double>) -> String {
        func text(_ bound: Double) -> String { Int64(exactly: bound).map(String.init) ?? "\(bound)" }
        return "a number from \(text(range.lowerBound)) to \(text(range.upperBound))"
    }

    /// `text` in quotes, cut to 40 characters.
    private static func quoted(_ text: String) -> String {
        "'" + text.prefix(40) + (text.count > 40 ? "…" : "") + "'"
    }
}
