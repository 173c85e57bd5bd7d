import Testing

@testable import AASACore

/// The semantic diff against the matcher on generated rule lists: whenever the matcher answers a URL differently
/// before and after, the diff lists a class with exactly that URL's deciding rules; every example it prints
/// changes as claimed; and when it lists nothing, no URL changes.
@Suite struct SemanticDiffPropertyTests {
    /// A small deterministic generator (SplitMix64), so a failure replays.
    struct Random {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
        mutating func pick<T>(_ values: [T]) -> T { values[below(values.count)] }
    }

    static let paths = ["/a", "/a/*", "/a/?", "/a/b", "/A/*", "*", "/b*", "/a/*/c", "/?*", "/b/", "/a//*", "/$(x)/*"]
    static let items = ["?", "*", "x", "?*", "", "x*"]
    static let fragments = ["f", "*", "?", "g*"]

    static func rule(_ random: inout Random) -> String {
        var members: [String] = []
        if random.below(5) > 0 { members.append(#""/": "\#(random.pick(paths))""#) }
        if random.below(3) == 0 { members.append(#""?": {"q": "\#(random.pick(items))"}"#) }
        if random.below(4) == 0 { members.append(##""#": "\##(random.pick(fragments))""##) }
        if random.below(4) == 0 { members.append(#""exclude": true"#) }
        if random.below(5) == 0 { members.append(#""caseSensitive": false"#) }
        if random.below(5) == 0 { members.append(#""percentEncoded": false"#) }
        return "{" + members.joined(separator: ", ") + "}"
    }

    static func file(_ entries: [[String]]) -> AssociationFile {
        let details = entries.enumerated().map { index, rules in
            #"{"appIDs": ["ABCDE12345.app\#(index)"], "components": [\#(rules.joined(separator: ", "))]}"#
        }
        let text =
            #"{"applinks": {"substitutionVariables": {"x": ["a", "bc"]}, "details": [\#(details.joined(separator: ", "))]}}"#
        return AssociationFile.parse(SourceText(name: "aasa", bytes: Array(text.utf8))).file!
    }

    static func url(_ random: inout Random) -> String {
        let segments = ["a", "b", "c", "A", "bc", "", "x", "%61", "%41", "%2F"]
        var path = ""
        for _ in 0..<random.below(4) { path += "/" + random.pick(segments) }
        if random.below(3) == 0 { path += "/" }
        var url = "https://example.com" + (path.isEmpty ? "/" : path)
        switch random.below(5) {
        case 0: url += "?q=" + random.pick(["", "x", "xy", "z"])
        case 1: url += "?q=x&q=" + random.pick(["x", "y", ""])
        case 2: url += "?Q=" + random.pick(["", "x", "xy"]) + random.pick(["", "&q=x", "&q="])
        default: break
        }
        if random.below(3) == 0 { url += "#" + random.pick(["f", "g", "gh", ""]) }
        return url
    }

    static func answer(_ result: MatchResult) -> (String, String?) {
        let location = result.detailsIndex.map { "applinks.details[\($0)].components[\(result.componentIndex!)]" }
        return (result.verdict == .match ? result.appIDs.joined(separator: ",") : "web", location)
    }

    @Test(arguments: 0..<12)
    func everyURLWhoseAnswerChangesIsInAClass(seed: UInt64) {
        var random = Random(state: seed &* 7919 &+ 1)
        for _ in 0..<40 {
            var entries = (0..<(1 + random.below(2))).map { _ in
                (0..<(1 + random.below(5))).map { _ in Self.rule(&random) }
            }
            let old = Self.file(entries)
            let oldEntries = entries
            // An edit: reorder, replace, insert or delete a rule, or swap the entries.
            switch random.below(5) {
            case 0:
                let entry = random.below(entries.count)
                entries[entry].swapAt(random.below(entries[entry].count), random.below(entries[entry].count))
            case 1: entries[random.below(entries.count)][0] = Self.rule(&random)
            case 2: entries[random.below(entries.count)].insert(Self.rule(&random), at: 0)
            case 3:
                let entry = random.below(entries.count)
                if entries[entry].count > 1 { entries[entry].removeLast() }
            default: entries.reverse()
            }
            let new = Self.file(entries)
            let diff = DomainDiff(domain: "example.com", old: DiffSide(appleFile: old), new: DiffSide(appleFile: new))
            #expect(diff.notes.isEmpty, "\(diff.notes) \(oldEntries) -> \(entries)")
            let before = URLMatcher(file: old)
            let after = URLMatcher(file: new)
            for change in diff.changes {
                for example in change.examples {
                    #expect(
                        Self.answer(before.match(example)).0
                            == (change.from.isEmpty ? "web" : change.from.joined(separator: ",")))
                    #expect(
                        Self.answer(after.match(example)).0
                            == (change.to.isEmpty ? "web" : change.to.joined(separator: ",")))
                }
            }
            for _ in 0..<60 {
                let url = Self.url(&random)
                let (was, oldRule) = Self.answer(before.match(url))
                let (now, newRule) = Self.answer(after.match(url))
                guard was != now else { continue }
                let covered = diff.changes.contains {
                    $0.oldRule?.location == oldRule && $0.newRule?.location == newRule
                }
                #expect(
                    covered,
                    "\(url): \(was) by \(oldRule ?? "-") → \(now) by \(newRule ?? "-"), not in \(diff.changes.map { "\($0.oldRule?.location ?? "-")→\($0.newRule?.location ?? "-")" }); \(oldEntries) -> \(entries)"
                )
                if !covered { return }
            }
        }
    }
}
