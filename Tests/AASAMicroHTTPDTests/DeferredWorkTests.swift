import AASACore
import AASATestSupport
import Foundation
import Synchronization
import Testing

@testable import AASAMicroHTTPD

/// Deferred answers (``RouteDecision/deferred(_:)``) are built on the listener's pool of workers, never on the thread
/// that answers the other requests: a deferred answer that waits leaves `/healthz` answering at once, a request that
/// finds the pool full is answered 503 with `Retry-After` at once, and a stop waits for the work in progress.
@Suite(.serialized) struct DeferredWorkTests {
    /// `/slow` is deferred and waits until ``release()``; `/healthz` is prepared; anything else is answered inline.
    final class Routes: RouteTable {
        let health = PreparedResponse(Response(status: 200, body: Array("ok\n".utf8)))
        var preparedResponses: [PreparedResponse] { [health] }
        private let gate = DispatchSemaphore(value: 0)
        let started = Atomic<Int>(0)
        let threads = Mutex<Set<String>>([])

        func route(_ request: some HTTPRequest) -> RouteDecision {
            let path = request.withPath { String(decoding: $0, as: UTF8.self) }
            switch path {
            case "/healthz": return .prepared(health)
            case "/slow":
                return .deferred(
                    DeferredWork { [self] in
                        started.add(1, ordering: .relaxed)
                        threads.withLock { _ = $0.insert(Self.threadName()) }
                        gate.wait()
                        return Response(status: 200, body: Array("built off the listener\n".utf8))
                    })
            default: return .dynamic(Response(status: 200, body: Array("inline \(path)\n".utf8)))
            }
        }

        func release(_ count: Int) { for _ in 0..<count { gate.signal() } }

        static func threadName() -> String {
            (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
        }
    }

    static func listener(workers: Int, queue: Int, routes: Routes) throws -> HTTPListener {
        var configuration = testConfiguration()
        configuration.threadPoolSize = 1
        configuration.deferredWorkers = workers
        configuration.deferredQueueLimit = queue
        return try HTTPListener(configuration: configuration, routes: routes)
    }

    /// Seconds `request` takes to be answered on a new connection, with the answer.
    static func timed(_ port: UInt16, _ path: String) throws -> (seconds: Double, answer: String) {
        let start = Date()
        let client = try RawClient(port: port)
        client.send("GET \(path) HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        let answer = client.readAll()
        return (Date().timeIntervalSince(start), answer)
    }

    @Test func aWaitingAnswerHoldsNoThreadOfTheListenerAndAFullPoolIsBusyAtOnce() throws {
        let routes = Routes()
        let listener = try Self.listener(workers: 2, queue: 1, routes: routes)
        // Two workers and one queue place: three slow requests are taken, the fourth is refused.
        let slow = try (0..<3).map { _ in
            let client = try RawClient(port: listener.port)
            client.send("GET /slow HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
            return client
        }
        Wait.until("both workers to take a slow request", seconds: 10) {
            routes.started.load(ordering: .relaxed) == 2 ? nil : "\(routes.started.load(ordering: .relaxed)) started"
        }
        // The listener's one thread answers the probe and inline routes at once, while both workers wait.
        for _ in 0..<20 {
            let (seconds, answer) = try Self.timed(listener.port, "/healthz")
            #expect(answer.hasPrefix("HTTP/1.1 200 ") && answer.hasSuffix("ok\n"), "\(answer)")
            #expect(seconds < TestTime.seconds(0.1), "/healthz took \(seconds) s while the workers wait")
        }
        #expect(try Self.timed(listener.port, "/other").answer.hasSuffix("inline /other\n"))
        let (seconds, busy) = try Self.timed(listener.port, "/slow")
        #expect(busy.hasPrefix("HTTP/1.1 503 "), "\(busy)")
        #expect(busy.contains("Retry-After: 1\r\n") && busy.contains("2 workers and 1 queue places"), "\(busy)")
        #expect(seconds < TestTime.seconds(0.1), "the refusal took \(seconds) s")
        let threads = routes.threads.withLock { $0 }
        #expect(threads.allSatisfy { $0.hasPrefix("deferred-") }, "\(threads)")

        routes.release(3)
        for client in slow {
            let answer = client.readAll()
            #expect(answer.hasPrefix("HTTP/1.1 200 ") && answer.hasSuffix("built off the listener\n"), "\(answer)")
        }
        listener.stop()
    }

    @Test func aStopWaitsForTheWorkInProgressAndAnswersIt() throws {
        let routes = Routes()
        let listener = try Self.listener(workers: 1, queue: 0, routes: routes)
        let client = try RawClient(port: listener.port)
        client.send("GET /slow HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n")
        Wait.until("the worker to take the request", seconds: 10) {
            routes.started.load(ordering: .relaxed) == 1 ? nil : "not started"
        }
        let stopped = Atomic<Bool>(false)
        Thread {
            listener.stop(timeout: .milliseconds(100))
            stopped.store(true, ordering: .relaxed)
        }.start()
        usleep(300_000)
        let stoppedEarly = stopped.load(ordering: .relaxed)
        #expect(!stoppedEarly, "the stop waits for the deferred answer")
        routes.release(1)
        #expect(client.readAll().hasSuffix("built off the listener\n"))
        Wait.until("the stop to end", seconds: 10) { stopped.load(ordering: .relaxed) ? nil : "still stopping" }
    }

    @Test func withoutWorkersADeferredAnswerIsBuiltInline() throws {
        let routes = Routes()
        let listener = try Self.listener(workers: 0, queue: 0, routes: routes)
        routes.release(1)
        let (_, answer) = try Self.timed(listener.port, "/slow")
        #expect(answer.hasSuffix("built off the listener\n"))
        #expect(routes.threads.withLock { $0 }.allSatisfy { !$0.hasPrefix("deferred-") })
        listener.stop()
    }
}
