import Foundation

/// How many new orders the fleet places per period at most (`--acme-order-rate N/PERIOD`): the capacity and refill of
/// the token bucket every new order takes a token from (``OrderPacer``). Let's Encrypt allows 300 new orders per
/// account per 3 hours, refilled continuously (one every 36 s), which is the default.
public struct OrderRate: Sendable, Equatable, CustomStringConvertible {
    /// Orders per ``period``: the bucket's capacity.
    public var orders: Int
    /// The period, in seconds.
    public var seconds: Double

    /// Let's Encrypt's new-orders limit per account: 300 per 3 hours.
    public static let letsEncrypt = OrderRate(orders: 300, seconds: 3 * 3600)

    /// A rate of `orders` per `seconds`.
    public init(orders: Int, seconds: Double) {
        self.orders = orders
        self.seconds = seconds
    }

    /// Orders per hour.
    public var perHour: Double { Double(orders) * 3600 / seconds }

    /// `N/PERIOD`, as the option takes it.
    public var description: String {
        for (unit, size) in [("d", 86_400.0), ("h", 3600), ("m", 60)] where seconds >= size {
            let count = seconds / size
            if count == count.rounded() { return "\(orders)/\(Int(count))\(unit)" }
        }
        return "\(orders)/\(Int(seconds))s"
    }

    /// Why a rate does not parse.
    public struct ParseError: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Parses `N/PERIOD` (`300/3h`, `10/1m`, `50/90s`, `5000/1d`; a period without a number is one unit: `10/m`), or
    /// `0` (or `0/…`): no pacing, for a private CA without limits (`nil`).
    public static func parse(_ text: String) throws(ParseError) -> OrderRate? {
        let fix =
            "give N/PERIOD with PERIOD a number and a unit s, m, h or d (e.g. 300/3h, Let's Encrypt's), or 0 for no pacing"
        let parts = text.trimmingCharacters(in: .whitespaces).split(separator: "/", omittingEmptySubsequences: false)
        guard let orders = parts.first.flatMap({ Int($0) }), orders >= 0, parts.count <= 2 else {
            throw ParseError(description: "'\(text)' is not an order rate: \(fix)")
        }
        if orders == 0 { return nil }
        guard parts.count == 2, let unit = parts[1].last,
            let size = ["s": 1.0, "m": 60, "h": 3600, "d": 86_400][String(unit)]
        else {
            throw ParseError(description: "'\(text)' has no period: \(fix)")
        }
        let number = parts[1].dropLast()
        guard let count = number.isEmpty ? 1 : Double(number), count > 0, count.isFinite else {
            throw ParseError(description: "'\(text)' has no valid period: \(fix)")
        }
        let seconds = count * size
        guard seconds >= 1, seconds <= 366 * 86_400, orders <= 1_000_000 else {
            throw ParseError(description: "'\(text)' is out of range (1 s to 366 d, at most 1000000 orders): \(fix)")
        }
        return OrderRate(orders: orders, seconds: seconds)
    }
}
