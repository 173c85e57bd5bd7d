import AASATestSupport
import Foundation
import Testing

@testable import AASACore

/// The structures a reload updates instead of rebuilding: what a copy shares, and that updating gives exactly
/// what building afresh would.
@Suite struct IncrementalRoutesTests {
    /// Random insertions, replacements and removals, checked against `Dictionary` after each step, with a copy
    /// taken halfway that must not see any change made after it.
    @Test func persistentDictionaryBehavesLikeADictionaryAndCopiesAreIndependent() {
        var random = SeededRandomNumberGenerator(seed: 24)
        var persistent = PersistentDictionary<String, Int>()
        var reference: [String: Int] = [:]
        var snapshot: (PersistentDictionary<String, Int>, [String: Int])?
        for step in 0..<20_000 {
            let key = "k\(Int.random(in: 0..<5_000, using: &random))"
            if Int.random(in: 0..<4, using: &random) == 0 {
                #expect(persistent.removeValue(forKey: key) == reference.removeValue(forKey: key))
            } else {
                persistent[key] = step
                reference[key] = step
            }
            if step == 10_000 { snapshot = (persistent, reference) }
            // Room reserved ahead of the entries, as a start does, changes nothing that can be seen.
            if step == 5_000 { persistent.reserveCapacity(40_000) }
        }
        #expect(persistent.count == reference.count)
        for index in 0..<5_000 {
            let key = "k\(index)"
            #expect(persistent[key] == reference[key] && persistent.contains(key) == (reference[key] != nil))
        }
        let built = PersistentDictionary(reference.map { ($0.key, $0.value) })
        #expect(built.dictionary == reference && built.count == reference.count)
        #expect(persistent.dictionary == reference)
        #expect(Set(persistent.keys) == Set(reference.keys))
        #expect(Dictionary(uniqueKeysWithValues: persistent.map { ($0.key, $0.value) }) == reference)
        let (copy, copied) = try! #require(snapshot)
        #expect(copy.dictionary == copied && copy.count == copied.count)
        // Walked entry by entry, every key once with its value, in the map and in the copy taken halfway.
        for (walked, expected) in [(persistent, reference), (copy, copied)] {
            var seen: [String: Int] = [:]
            var visits = 0
            walked.forEachEntry { key, value in
                seen[key] = value
                visits += 1
            }
            #expect(seen == expected && visits == expected.count)
        }
    }

    /// Keys whose hashes share their high bits probe from the same slot of their bucket: long runs of slots, which
    /// removals must close up without losing any key after them; built whole, reserved by key or grown one by one.
    @Test func persistentDictionaryKeepsEveryKeyWhenManyProbeFromOneSlot() {
        struct Clustered: Hashable, Sendable {
            var number: Int
            func hash(into hasher: inout Hasher) { hasher.combine(number % 3) }
        }
        var random = SeededRandomNumberGenerator(seed: 5)
        var persistent = PersistentDictionary<Clustered, Int>()
        persistent.reserveCapacity(forKeys: (0..<100).map { Clustered(number: $0) })
        var reference: [Clustered: Int] = [:]
        for step in 0..<6_000 {
            let key = Clustered(number: Int.random(in: 0..<300, using: &random))
            if Int.random(in: 0..<3, using: &random) == 0 {
                #expect(persistent.removeValue(forKey: key) == reference.removeValue(forKey: key))
            } else {
                persistent[key] = step
                reference[key] = step
            }
        }
        #expect(persistent.count == reference.count)
        for number in 0..<300 {
            let key = Clustered(number: number)
            #expect(persistent[key] == reference[key] && persistent.contains(key) == (reference[key] != nil))
        }
        let built = PersistentDictionary(reference.map { ($0.key, $0.value) })
        #expect(built.dictionary == reference)
    }

    /// Built from values and the key each gives, as a start builds its map of every domain's load result: what the
    /// same pairs give, a key given twice keeping its last value; `withValue` reads what the subscript reads.
    @Test func persistentDictionaryBuiltFromKeyedValuesIsTheOneBuiltFromPairs() {
        struct Result: Equatable, Sendable {
            var domain: String
            var findings: [String]
        }
        var random = SeededRandomNumberGenerator(seed: 11)
        let values = (0..<3_000).map { step in
            Result(domain: "d\(Int.random(in: 0..<2_000, using: &random)).example", findings: ["f\(step)"])
        }
        let keyed = PersistentDictionary(values, keyedBy: \.domain)
        let paired = PersistentDictionary(values.map { ($0.domain, $0) })
        var reference: [String: Result] = [:]
        for value in values { reference[value.domain] = value }
        #expect(keyed.count == reference.count && keyed.dictionary == reference && paired.dictionary == reference)
        for index in 0..<2_100 {
            let name = "d\(index).example"
            #expect(keyed.withValue(for: name) { $0.findings } == reference[name]?.findings, "\(name)")
            #expect(keyed[name] == reference[name])
        }
        #expect(PersistentDictionary([Result](), keyedBy: \.domain).isEmpty)
    }

    @Test func hostDirectoryUpdatesGiveWhatBuildingAfreshGives() {
        var random = SeededRandomNumberGenerator(seed: 7)
        var directory = HostDirectory<Int>([])
        var reference: [String: Int] = [:]
        // Grows from empty past several bucket counts, one batch of changes at a time.
        for batch in 0..<200 {
            var changes: [(name: String, value: Int?)] = []
            for _ in 0..<Int.random(in: 1..<40, using: &random) {
                let name = "d\(Int.random(in: 0..<3_000, using: &random)).example"
                let value: Int? = Int.random(in: 0..<5, using: &random) == 0 ? nil : batch
                changes.append((name, value))
                reference[name] = value
            }
            directory = directory.updating(changes)
        }
        #expect(directory.count == reference.count)
        for index in 0..<3_000 {
            let name = "d\(index).example"
            #expect(directory[name] == reference[name], "\(name)")
        }
        #expect(Dictionary(uniqueKeysWithValues: directory.entries.map { ($0.name, $0.value) }) == reference)
    }

    /// The routes after an edit of one domain among many: the others answer with the very responses they had
    /// (and so keep the transport's native forms of them), and only the edited domain's are new.
    @Test func updatingRoutesRebuildsOnlyTheChangedDomains() throws {
        func published(_ domain: String, _ version: Int) throws -> PublishedDomain {
            try #require(
                loadSite(#"{"webCredentials": ["ABCDE12345.com.example.v\#(version)"]}"#, domain: domain).published)
        }
        let ids = DomainIDs()
        let names = (0..<300).map { "d\($0).example" }
        let first = SiteRoutes(try names.map { try published($0, 0) }, domainIDs: ids)
        func answer(_ routes: SiteRoutes, _ host: String) -> PreparedResponse? {
            let request = FakeRequest(path: "/.well-known/apple-app-site-association", headers: ["Host": host])
            guard case .prepared(let prepared) = routes.route(request) else { return nil }
            return prepared
        }
        let next = first.updating([
            ("d7.example", try published("d7.example", 1)), ("d8.example", nil),
            ("new.example", try published("new.example", 0)),
        ])
        for name in names where !["d7.example", "d8.example"].contains(name) {
            #expect(answer(next, name) === answer(first, name), "\(name) kept its response")
        }
        let edited = try #require(answer(next, "d7.example"))
        #expect(edited !== answer(first, "d7.example"))
        #expect(edited.response.body == (try published("d7.example", 1)).associationFile)
        #expect(answer(next, "d8.example")?.status == 404 && answer(next, "d8.example")?.domainID == 0)
        #expect(answer(next, "new.example")?.status == 200)
        // Only the new versions' responses are new: what the transport builds native forms for.
        let newIDs = Set(next.preparedResponses.map(\.domainID))
        #expect(newIDs == [ids.existingID(for: "d7.example"), ids.existingID(for: "new.example")])
        #expect(next.domainCount == 300)
        // The routes it was made from still serve what they served.
        #expect(answer(first, "d8.example")?.status == 200)
    }
}
