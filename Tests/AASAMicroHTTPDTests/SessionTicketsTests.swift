import Foundation
import Testing

@testable import AASAMicroHTTPD

@Suite struct SessionTicketsTests {
    /// A key serves one period, then a new random key replaces it; the lifetime stays within a minute and RFC 8446's
    /// seven days.
    @Test func aKeyServesOnePeriodAndIsThenReplaced() throws {
        let tickets = SessionTickets(lifetime: .seconds(3600))
        let start = ContinuousClock.now
        let first = try #require(tickets.key(at: start))
        #expect(tickets.key(at: start + .seconds(3599)) === first)
        let next = try #require(tickets.key(at: start + .seconds(3600)))
        #expect(next !== first)
        let bytes = { (key: SessionTickets.Key) in Array(UnsafeBufferPointer(start: key.bytes, count: 64)) }
        #expect(bytes(next) != bytes(first))
        #expect(bytes(next) != [UInt8](repeating: 0, count: 64))
        #expect(tickets.key(at: start + .seconds(3601)) === next)
        #expect(SessionTickets(lifetime: .seconds(1)).lifetime == .seconds(60))
        #expect(SessionTickets(lifetime: .seconds(30 * 86_400)).lifetime == .seconds(7 * 86_400))
    }
}
