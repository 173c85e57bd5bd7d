import AASACore
import AASAServer
import Foundation
import Testing

@testable import AASAServer

@Suite struct OrderRateTests {
    @Test(arguments: [
        ("300/3h", 300, 10_800.0), ("10/1m", 10, 60), ("10/m", 10, 60), ("50/90s", 50, 90), ("5000/1d", 5000, 86_400),
        (" 20/2h ", 20, 7200), ("1/0.5h", 1, 1800),
    ])
    func aRateIsOrdersPerPeriod(text: String, orders: Int, seconds: Double) throws {
        let rate = try #require(try OrderRate.parse(text))
        #expect(rate.orders == orders && rate.seconds == seconds)
    }

    @Test func zeroTurnsPacingOffAndTheDefaultIsLetsEncrypts() throws {
        #expect(try OrderRate.parse("0") == nil)
        #expect(try OrderRate.parse("0/3h") == nil)
        #expect(ACMESettings().orderRate == OrderRate(orders: 300, seconds: 10_800))
        #expect(OrderRate.letsEncrypt.perHour == 100)
        #expect(OrderRate.letsEncrypt.description == "300/3h")
    }

    @Test(arguments: ["", "300", "300/", "300/3", "300/3w", "x/3h", "-1/3h", "300/0h", "300/3h/1", "1/400d", "1/0.1s"])
    func anythingElseIsRefusedWithTheForm(text: String) {
        #expect(throws: OrderRate.ParseError.self) { try OrderRate.parse(text) }
        do {
            _ = try OrderRate.parse(text)
        } catch {
            #expect(error.description.contains("N/PERIOD") && error.description.contains("300/3h"))
        }
    }
}

@Suite struct OrderPacerTests {
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aFullBucketPlacesItsCapacityAtOnceThenOneOrderPerInterval() {
        let pacer = OrderPacer(rate: OrderRate(orders: 10, seconds: 60))
        var state = PacingState(rate: pacer.rate, now: start)
        for _ in 0..<10 { #expect(pacer.take(&state, now: start) == nil) }
        // The eleventh waits for the next token: 6 s.
        #expect(pacer.take(&state, now: start) == start.addingTimeInterval(6))
        #expect(pacer.take(&state, now: start.addingTimeInterval(6)) == nil)
        // Thirty orders in all take about three minutes' worth of tokens: 10 now, 20 more at one per 6 s.
        var placed = 11
        var now = start.addingTimeInterval(6)
        while placed < 30 {
            if let next = pacer.take(&state, now: now) { now = next } else { placed += 1 }
        }
        #expect(now.timeIntervalSince(start) == 120)
    }

    @Test func theQueueSlotsFollowTheBucketAndThePause() {
        let pacer = OrderPacer(rate: OrderRate(orders: 300, seconds: 10_800))
        var state = PacingState(tokens: 2, refilledAt: start, pausedUntil: nil, pauseReason: nil)
        #expect(pacer.slot(1, state, now: start) == start)
        #expect(pacer.slot(2, state, now: start) == start)
        #expect(pacer.slot(3, state, now: start) == start.addingTimeInterval(36))
        // 10,000 new domains behind a drained bucket: the last in about four days (9,998 × 36 s).
        state.tokens = 0
        let last = pacer.slot(10_000, state, now: start).timeIntervalSince(start)
        #expect(last == 360_000)
        // A pause holds every slot until it ends; the bucket keeps filling meanwhile.
        pacer.pause(&state, until: start.addingTimeInterval(3600), reason: "rateLimited", now: start)
        #expect(pacer.slot(1, state, now: start) == start.addingTimeInterval(3600))
        #expect(pacer.slot(101, state, now: start) == start.addingTimeInterval(3636))
        #expect(pacer.take(&state, now: start.addingTimeInterval(60)) == start.addingTimeInterval(3600))
        // An earlier pause does not shorten a later one; a pause that ended is cleared.
        pacer.pause(&state, until: start.addingTimeInterval(600), reason: "other", now: start)
        #expect(state.pausedUntil == start.addingTimeInterval(3600) && state.pauseReason == "rateLimited")
        #expect(pacer.take(&state, now: start.addingTimeInterval(3600)) == nil)
        #expect(state.pausedUntil == nil && state.pauseReason == nil)
    }

    @Test func withoutARateOnlyAPauseHoldsOrders() {
        let pacer = OrderPacer(rate: nil)
        var state = PacingState(rate: nil, now: start)
        for _ in 0..<1000 { #expect(pacer.take(&state, now: start) == nil) }
        #expect(pacer.slot(1000, state, now: start) == start)
        pacer.pause(&state, until: start.addingTimeInterval(30), reason: "429", now: start)
        #expect(pacer.take(&state, now: start) == start.addingTimeInterval(30))
    }
}

@Suite struct ACMEHistoryTests {
    @Test func atMostFiveFailedValidationsPerNameWithinAnHour() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        var history = ACMEHistory()
        history.failedValidations = (0..<4).map { now.addingTimeInterval(Double(-3000 + $0 * 600)) }
        #expect(history.validationAllowed(now: now) == now)
        history.failedValidations.append(now.addingTimeInterval(-10))
        // The fifth within the hour: the next is allowed an hour after the oldest of the five.
        #expect(history.validationAllowed(now: now) == now.addingTimeInterval(600))
        #expect(history.recentValidations(now: now.addingTimeInterval(700)).count == 4)
        let stored = try ACMEHistory(json: history.json)
        #expect(
            stored.failedValidations.count == 5 && stored.validationAllowed(now: now) == now.addingTimeInterval(600))
    }

    /// What `orders.json` or an `acme_orders` row may hold that no history can: each is a failure naming the member.
    @Test(arguments: [
        (#"{"failures": 1e300}"#, #""failures" is 1e+300, not a whole number from 0 to 1000000"#),
        (#"{"failures": -1}"#, #""failures" is -1.0, not a whole number from 0 to 1000000"#),
        (#"{"failures": "3"}"#, #""failures" is a string, not a whole number from 0 to 1000000"#),
        (#"{"nextAttempt": "99999-01-01T00:00:00Z"}"#, #""nextAttempt" is 3093496444800.0, not a time"#),
        (#"[1]"#, "the history is an array, not an object"),
    ])
    func aHistoryOutOfRangeIsAFailureNamingTheMember(_ text: String, _ message: String) throws {
        let json = try #require(JSONValue.parse(Array(text.utf8)))
        do throws(CheckedNumber.Failure) {
            let history = try ACMEHistory(json: json)
            Issue.record("read as \(history)")
        } catch {
            #expect(error.description.hasPrefix(message), "\(error)")
        }
    }

    @Test func aPacingStateOutOfRangeIsAFailureNamingTheMemberOrColumn() throws {
        let file = try #require(
            JSONValue.parse(Array(#"{"tokens": -1e300, "refilledAt": "2026-01-01T00:00:00Z"}"#.utf8)))
        #expect(throws: CheckedNumber.Failure.self) { try PacingState(json: file) }
        do throws(CheckedNumber.Failure) {
            _ = try PacingState(tokens: "NaN", refilledAt: "Infinity", pausedUntil: nil, pauseReason: nil)
        } catch {
            #expect(error.description == "tokens is nan, not a number from 0 to 1000000")
        }
        let row = try PacingState(tokens: "12.5", refilledAt: "1767225600", pausedUntil: nil, pauseReason: "x")
        #expect(
            row
                == PacingState(
                    tokens: 12.5, refilledAt: Date(timeIntervalSince1970: 1_767_225_600), pausedUntil: nil,
                    pauseReason: "x"))
        #expect(try PacingState(json: row.json) == row)
    }
}
