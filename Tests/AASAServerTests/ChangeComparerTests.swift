import AASACore
import AASATestSupport
import Foundation
import Synchronization
import Testing

@testable import AASAServer

/// The reload's comparisons run after it, one at a time, the newest version of a domain winning over one still
/// waiting.
@Suite struct ChangeComparerTests {
    static func version(_ domain: String, _ path: String) -> PublishedDomain {
        PublishedDomain(
            domain: domain,
            associationFile: Array(
                #"{"applinks":{"details":[{"appIDs":["ABCDE12345.com.example.app"],"components":[{"/":"\#(path)"}]}]}}"#
                    .utf8), cacheControl: "max-age=3600")
    }

    @Test func theNewestVersionOfAWaitingDomainWins() throws {
        let recorded = Mutex<[(String, String)]>([])
        let firstTaken = DispatchSemaphore(value: 0)
        let goOn = DispatchSemaphore(value: 0)
        let comparer = ChangeComparer { job, diff in
            let first = recorded.withLock { $0.isEmpty }
            recorded.withLock { $0.append((job.new.domain, diff.summary)) }
            if first {
                firstTaken.signal()
                goOn.wait()
            }
        }
        defer { comparer.stop() }
        let now = Date()
        comparer.enqueue([
            ChangeComparer.Job(
                old: Self.version("a.example", "/a/*"), new: Self.version("a.example", "/b/*"), time: now)
        ])
        #expect(firstTaken.wait(timeout: .now() + 30) == .success)
        // While the first is being recorded, two versions of b.example come; only the newest is compared.
        comparer.enqueue([
            ChangeComparer.Job(
                old: Self.version("b.example", "/a/*"), new: Self.version("b.example", "/a/*", ), time: now)
        ])
        comparer.enqueue([
            ChangeComparer.Job(
                old: Self.version("b.example", "/a/*"), new: Self.version("b.example", "/c/*"), time: now)
        ])
        goOn.signal()
        let deadline = TestTime.deadline(30)
        while recorded.withLock({ $0.count }) < 2 && Date() < deadline { usleep(10_000) }
        usleep(200_000)
        let results = recorded.withLock { $0 }
        #expect(results.map(\.0) == ["a.example", "b.example"], "\(results)")
        #expect(results.last?.1.contains("`/c/*`") == true, "\(results)")
    }
}
