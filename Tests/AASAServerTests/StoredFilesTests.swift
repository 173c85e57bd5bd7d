import Testing

@testable import AASAServer

/// What a replica keeps of the stored domains' files is bounded: a domain whose files do not fit beside the others'
/// is not kept (and is fetched whole when read again), a domain kept again replaces its own bytes, and listings
/// drop the domains they no longer find.
@Suite struct StoredFilesTests {
    static func files(_ sizes: [String: Int]) -> [String: StoredFiles.File] {
        sizes.mapValues { StoredFiles.File(digest: [UInt8($0 % 256)], bytes: [UInt8](repeating: 1, count: $0)) }
    }

    @Test func theBytesKeptStayWithinTheBound() {
        let stored = StoredFiles(maximumBytes: 100)
        stored.keep("a.example", Self.files(["pages/a": 60]), fetchedBytes: 60)
        #expect(stored.keptBytes == 60)
        #expect(stored.bytes("a.example", "pages/a", digest: [60])?.count == 60)
        // 50 more do not fit beside a.example's 60: b.example is not kept, a.example is untouched.
        stored.keep("b.example", Self.files(["pages/b": 50]), fetchedBytes: 50)
        #expect(stored.keptBytes == 60)
        #expect(stored.bytes("b.example", "pages/b", digest: [50]) == nil)
        // A domain kept again replaces its own bytes: 90 fit once its 60 are let go.
        stored.keep("a.example", Self.files(["pages/a": 90]), fetchedBytes: 90)
        #expect(stored.keptBytes == 90)
        #expect(stored.bytes("a.example", "pages/a", digest: [60]) == nil, "an old digest gives nothing")
        // Over the bound alone: not kept, and its old files are gone too.
        stored.keep("a.example", Self.files(["pages/a": 101]), fetchedBytes: 101)
        #expect(stored.keptBytes == 0)
        #expect(stored.fetchedBytes == 301)
    }

    @Test func listingsAndEmptyDomainsLetGo() {
        let stored = StoredFiles(maximumBytes: 1_000)
        for name in ["a.example", "b.example", "c.example"] {
            stored.keep(name, Self.files(["pages/x": 10]), fetchedBytes: 10)
        }
        stored.retain(["a.example", "b.example"])
        #expect(stored.keptBytes == 20)
        stored.forget(["a.example"])
        #expect(stored.keptBytes == 10)
        stored.keep("b.example", [:], fetchedBytes: 0)
        #expect(stored.keptBytes == 0)
        #expect(stored.bytes("b.example", "pages/x", digest: [10]) == nil)
    }
}
