import AASACore
import Synchronization
import Testing

@testable import AASAServer

/// A service group starts its services in order, stops what started in reverse when one fails to start, and stops
/// every service in the reverse order of the start, once.
@Suite struct ServiceGroupTests {
    /// What the services of one group did, in order.
    final class Journal: Sendable {
        private let entries = Mutex<[String]>([])

        func add(_ entry: String) { entries.withLock { $0.append(entry) } }
        var all: [String] { entries.withLock { $0 } }
    }

    /// A service that writes its start and stop to the journal, and whose start fails when told.
    final class Recorded: Service {
        let name: String
        let journal: Journal
        let fails: Bool
        /// The grace of the last stop.
        let grace = Mutex<Duration?>(nil)

        init(_ name: String, _ journal: Journal, fails: Bool = false) {
            self.name = name
            self.journal = journal
            self.fails = fails
        }

        func start() throws(Server.StartupError) {
            journal.add("start \(name)")
            if fails {
                throw Server.StartupError(
                    diagnostics: [Diagnostic(.error, rule: .listener, "\(name) fails")], isConfigurationError: false)
            }
        }

        func stop() {
            journal.add("stop \(name)")
        }

        func stop(draining grace: Duration) {
            self.grace.withLock { $0 = grace }
            stop()
        }
    }

    @Test func startsInOrderAndStopsInReverse() throws {
        let journal = Journal()
        let services = ["a", "b", "c"].map { Recorded($0, journal) }
        let group = ServiceGroup(services)
        try group.start()
        group.stop(draining: .seconds(3))
        #expect(journal.all == ["start a", "start b", "start c", "stop c", "stop b", "stop a"])
        #expect(services.allSatisfy { $0.grace.withLock { $0 } == .seconds(3) })
        group.stop(draining: .zero)
        #expect(journal.all.count == 6, "a second stop stops nothing again: \(journal.all)")
    }

    @Test func aServiceThatFailsToStartStopsThoseStartedBeforeItNewestFirst() {
        let journal = Journal()
        let group = ServiceGroup([
            Recorded("a", journal), Recorded("b", journal), Recorded("c", journal, fails: true), Recorded("d", journal),
        ])
        #expect(throws: Server.StartupError.self) { try group.start() }
        #expect(journal.all == ["start a", "start b", "start c", "stop b", "stop a"])
        group.stop(draining: .zero)
        #expect(journal.all.count == 5, "the failed start left nothing to stop: \(journal.all)")
    }

    @Test func aGroupStoppedBeforeItStartsStartsNothing() {
        let journal = Journal()
        let group = ServiceGroup([Recorded("a", journal)])
        group.stop(draining: .zero)
        #expect(throws: Server.StartupError.self) { try group.start() }
        #expect(journal.all.isEmpty)
    }
}
