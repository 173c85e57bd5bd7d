import AASACore
import AASATestSupport
import Foundation
import Logging
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

/// A server whose start fails partway (its admin port is taken, so the first load's listeners cannot all start) holds
/// no port afterwards and runs no watcher: end to end, what `ServiceGroupTests` shows of the group's rollback.
@Suite struct FailedStartTests {
    @Test func aStartThatFailsReleasesEveryPortItOpened() throws {
        let directory = TemporaryDirectory("aasa-failed-start")
        try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        let domains = try SiteConfigLoader().loadAll(directory: directory.path + "/site-config").map(\.domain)
        _ = try DevCertificates(certificateDirectory: directory.path + "/certs").ensure(names: domains)
        let (https, http, admin) = (freePort(), freePort(), freePort())
        let taken = try #require(boundLoopbackSocket(port: admin), "port \(admin) is free")
        defer { close(taken) }
        var configuration = ServerConfiguration()
        configuration.configDirectory = directory.path + "/site-config"
        configuration.certificateDirectory = directory.path + "/certs"
        configuration.httpsPort = https
        configuration.httpPort = http
        configuration.adminPort = admin
        configuration.watchForChanges = true
        configuration.threadPoolSize = 2
        let server = Server(configuration: configuration, logger: Logger(label: "test"))
        #expect {
            try server.start()
        } throws: { error in
            (error as? Server.StartupError)?.diagnostics.first?.rule == .listener
        }
        for port in [https, http] {
            let socket = boundLoopbackSocket(port: port)
            #expect(socket != nil, "port \(port) is still held after the failed start")
            if let socket { close(socket) }
        }
        #expect(server.httpsPort == nil && server.httpPort == nil && server.adminPort == nil)
        #expect(server.watcher?.threadID ?? 0 == 0, "the watcher runs after a failed start")
        #expect(server.status == nil)
        server.stop()
    }
}
