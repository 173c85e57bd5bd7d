import AASACore
import AASATestSupport
import Foundation
import Synchronization
import Testing

@testable import AASAMicroHTTPD

/// What ``HTTPListener/stop(timeout:)`` does to connections that reached the server just before it: in a fleet
/// behind a TCP router a replica is stopped while connections keep arriving, and one the kernel has already
/// completed must be served, not reset.
@Suite(.serialized) struct ListenerStopTests {
    /// `/hold` keeps its daemon's thread until ``release()``, so that every connection arriving meanwhile waits in
    /// the listening socket's queue; every path answers `served <path>`.
    final class HoldingRoutes: RouteTable {
        let preparedResponses: [PreparedResponse] = []
        private let isHolding = Atomic<Bool>(false)
        private let gate = DispatchSemaphore(value: 0)

        func route(_ request: some HTTPRequest) -> RouteDecision {
            let path = request.withPath { String(decoding: $0, as: UTF8.self) }
            if path == "/hold" {
                isHolding.store(true, ordering: .relaxed)
                gate.wait()
            }
            return .dynamic(Response(status: 200, body: Array("served \(path)\n".utf8)))
        }

        /// Whether a `/hold` request has reached the router.
        var holding: Bool { isHolding.load(ordering: .relaxed) }

        func release() { gate.signal() }
    }

    /// Whether 127.0.0.1:`port` refuses a new connection (its listening socket is closed).
    static func refuses(_ port: UInt16) -> Bool { (try? RawClient(port: port)) == nil }

    @Test(arguments: [1, 8])
    func connectionsQueuedWhenTheStopBeginsAreServed(queued: Int) throws {
        var configuration = testConfiguration()
        configuration.threadPoolSize = 1
        let routes = HoldingRoutes()
        let listener = try HTTPListener(configuration: configuration, routes: routes)
        let port = listener.port

        // The daemon's only thread is busy with /hold: the connections after it are completed by the kernel and
        // wait in the queue, their requests sent.
        let holder = try RawClient(port: port)
        holder.send("GET /hold HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        for _ in 0..<TestTime.tries(500) where !routes.holding { usleep(10_000) }
        #expect(routes.holding)
        let waiting = try (0..<queued).map { index in
            let client = try RawClient(port: port)
            client.send("GET /queued-\(index) HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            return client
        }

        // The stop begins; once the listening socket is closed (a new connection is refused), /hold is answered.
        let stopped = Atomic<Bool>(false)
        Thread {
            listener.stop(timeout: .seconds(10))
            stopped.store(true, ordering: .relaxed)
        }.start()
        for _ in 0..<TestTime.tries(500) where !Self.refuses(port) { usleep(10_000) }
        #expect(Self.refuses(port), "the listening socket is closed")
        routes.release()

        #expect(holder.readAll().hasPrefix("HTTP/1.1 200 "))
        for (index, client) in waiting.enumerated() {
            let answer = client.readAll()
            #expect(answer.hasPrefix("HTTP/1.1 200 "), "queued connection \(index): \(answer.prefix(80))")
            #expect(answer.hasSuffix("served /queued-\(index)\n"), "\(answer.suffix(40))")
        }
        for _ in 0..<TestTime.tries(1000) where !stopped.load(ordering: .relaxed) { usleep(10_000) }
        let ended = stopped.load(ordering: .relaxed)
        #expect(ended, "the stop ends once they are served")
        #expect(listener.openConnections == 0)
    }

    /// Clients that keep opening connections to whichever listener runs, while listeners are started and stopped
    /// under them: a connection whose connect succeeded must get its answer. A refused connect is what a router
    /// takes as "try the next server"; a reset after the connect succeeded is a lost request.
    @Test func aConnectionThatWasAcceptedByTheKernelIsNeverResetByAStop() throws {
        let current = Atomic<UInt16>(0)
        let finished = Atomic<Bool>(false)
        let tally = Mutex((served: 0, refused: 0, lost: [String]()))
        let threads = 6
        let running = Atomic<Int>(threads)
        for _ in 0..<threads {
            Thread {
                while !finished.load(ordering: .relaxed) {
                    let port = current.load(ordering: .relaxed)
                    guard port != 0, let client = try? RawClient(port: port) else {
                        tally.withLock { $0.refused += 1 }
                        usleep(200)
                        continue
                    }
                    client.send("GET /served HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
                    let answer = client.readAll(timeout: 10)
                    tally.withLock {
                        if answer.hasPrefix("HTTP/1.1 200 ") { $0.served += 1 } else { $0.lost.append(answer) }
                    }
                }
                running.subtract(1, ordering: .relaxed)
            }.start()
        }
        defer {
            finished.store(true, ordering: .relaxed)
            while running.load(ordering: .relaxed) > 0 { usleep(10_000) }
        }
        let stops = 30
        for _ in 0..<stops {
            let listener = try HTTPListener(configuration: testConfiguration(), routes: HoldingRoutes())
            current.store(listener.port, ordering: .relaxed)
            usleep(100_000)
            listener.stop(timeout: .seconds(5))
        }
        finished.store(true, ordering: .relaxed)
        while running.load(ordering: .relaxed) > 0 { usleep(10_000) }
        let (served, refused, lost) = tally.withLock { ($0.served, $0.refused, $0.lost) }
        print("\(stops) stops: \(served) served, \(refused) refused, \(lost.count) lost")
        #expect(served > stops * 10, "the clients kept the listeners busy (\(served) served)")
        #expect(lost.isEmpty, "\(lost.count) connections lost: \(lost.prefix(3))")
    }
}
