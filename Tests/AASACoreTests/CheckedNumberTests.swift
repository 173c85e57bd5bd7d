import Foundation
import Testing

@testable import AASACore

/// Numbers read from outside the process (``CheckedNumber``): every value Swift would trap on converting (not
/// finite, out of the type's range) and every value outside its range is a failure naming the field, the value and
/// the range; every value within is converted as `Int(_:)` would.
@Suite struct CheckedNumberTests {
    static let outOfRange: [(Double, String)] = [
        (.nan, "nan"), (.infinity, "inf"), (-.infinity, "-inf"), (1e300, "1e+300"), (-1e300, "-1e+300"),
        (9_223_372_036_854_775_808, "9.223372036854776e+18"), (1_000_001, "1000001.0"), (-1, "-1.0"),
    ]

    @Test(arguments: outOfRange) func aValueOutOfRangeIsAFailureNamingIt(_ value: Double, _ shown: String) {
        do throws(CheckedNumber.Failure) {
            let converted: Int = try CheckedNumber.integer(value, in: 0...1_000_000, field: "\"failures\"")
            Issue.record("\(value) was converted to \(converted)")
        } catch {
            #expect(error.description == "\"failures\" is \(shown), not a whole number from 0 to 1000000")
        }
    }

    @Test(arguments: [(0.0, 0), (1.9, 1), (-0.0, 0), (1_000_000, 1_000_000), (999_999.99, 999_999)])
    func aValueWithinItsRangeIsRoundedTowardZero(_ value: Double, _ expected: Int) throws {
        #expect(try CheckedNumber.integer(value, in: 0...1_000_000, field: "x") == expected)
    }

    @Test func theWholeRangeOfATypeIsItsDefault() throws {
        #expect(try CheckedNumber.integer(-9_223_372_036_854_775_808.0, field: "x") == Int64.min)
        #expect(throws: CheckedNumber.Failure.self) { let _: Int64 = try CheckedNumber.integer(9.3e18, field: "x") }
        #expect(throws: CheckedNumber.Failure.self) { let _: UInt16 = try CheckedNumber.integer(70_000, field: "x") }
        #expect(try CheckedNumber.integer("65535", field: "x") as UInt16 == 65_535)
    }

    @Test(arguments: [nil, "", "12a", "1.5", "99999999999999999999", "-1", "0"])
    func textThatIsNoChangeIDIsAFailure(_ text: String?) {
        #expect(throws: CheckedNumber.Failure.self) {
            let _: Int64 = try CheckedNumber.integer(text, in: 1...Int64.max, field: "changes.id")
        }
    }

    /// PostgreSQL's spellings of a `double precision` that is not finite, and times past years 1 to 9999.
    @Test(arguments: [
        "Infinity", "-Infinity", "NaN", "1e300", "253402300800", "-62135596801", "", "now", nil,
    ])
    func aTimeThatIsNoneIsAFailureNamingTheRow(_ text: String?) {
        do throws(CheckedNumber.Failure) {
            _ = try CheckedNumber.date(secondsSince1970: text, field: "changes.at of change 7")
            Issue.record("\(String(describing: text)) was read as a time")
        } catch {
            #expect(error.field == "changes.at of change 7")
            #expect(error.description.contains("not a time from year 1 to 9999"), "\(error)")
        }
    }

    @Test(arguments: [
        ("0", 0.0), ("1767225600.5", 1_767_225_600.5), ("253402300799", 253_402_300_799),
        ("-62135596800", -62_135_596_800),
    ])
    func aTimeWithinTheYearsIsRead(_ text: String, _ seconds: Double) throws {
        #expect(try CheckedNumber.date(secondsSince1970: text, field: "x").timeIntervalSince1970 == seconds)
    }

    @Test func realsAreFiniteAndWithinTheirRange() throws {
        #expect(try CheckedNumber.real("12.5", in: 0...1_000_000, field: "tokens") == 12.5)
        for text in ["NaN", "Infinity", "-0.5", "1000000.5"] {
            #expect(throws: CheckedNumber.Failure.self) {
                try CheckedNumber.real(text, in: 0...1_000_000, field: "tokens")
            }
        }
        do throws(CheckedNumber.Failure) {
            _ = try CheckedNumber.real("NaN", in: 0...1_000_000, field: "tokens")
            Issue.record("NaN was read as a number")
        } catch {
            #expect(error.description == "tokens is nan, not a number from 0 to 1000000")
        }
    }

    @Test(arguments: [
        (Double.nan, 1), (.infinity, 10), (-.infinity, 1), (1e300, 10), (-5, 1), (4.9, 4), (10, 10),
    ])
    func clampedBoundsEveryValue(_ value: Double, _ expected: Int) {
        #expect(CheckedNumber.clamped(value, to: 1...10) == expected)
    }

    @Test func clampedReachesTheTypesBoundsWithoutATrap() {
        #expect(CheckedNumber.clamped(9.3e18, to: Int.min...Int.max) == Int.max)
        #expect(CheckedNumber.clamped(-9.3e18, to: Int.min...Int.max) == Int.min)
        #expect(CheckedNumber.clamped(9_223_372_036_854_774_784.0, to: Int.min...Int.max) == 9_223_372_036_854_774_784)
        #expect(CheckedNumber.clamped(-1.5, to: UInt16.min...UInt16.max) == 0)
    }
}
