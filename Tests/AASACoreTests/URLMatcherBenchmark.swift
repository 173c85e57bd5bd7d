import AASACore
import Foundation
import Testing

/// A throughput figure for the matcher, not a timed test: it runs only with `AASA_BENCH=1` and prints
/// matches per second, e.g. `AASA_BENCH=1 swift test -c release --filter URLMatcherBenchmark`.
enum URLMatcherBenchmark {
    /// Builds a file of `rules` components in one details entry (literals, prefixes, `?`, variables, query
    /// dictionaries, exclusions), matches `urls` URLs (a mix of hits late in the list and misses, which also
    /// compute near misses) and returns matches per second.
    static func run(rules: Int, urls: Int) -> (matchesPerSecond: Double, verdicts: [MatchResult.Verdict: Int]) {
        var components: [ComponentPattern] = []
        for index in 0..<rules {
            switch index % 5 {
            case 0: components.append(ComponentPattern(path: "/section\(index)/*"))
            case 1: components.append(ComponentPattern(path: "/items/\(index)/????"))
            case 2: components.append(ComponentPattern(path: "/$(lang)_$(region)/p\(index)/*"))
            case 3:
                components.append(
                    ComponentPattern(
                        path: "/help/\(index)/*", query: .items([QueryItemPattern(name: "id", pattern: "?*")])))
            default: components.append(ComponentPattern(path: "/private/\(index)/*a*b", exclude: true))
            }
        }
        let file = AssociationFile(
            applinks: AppLinks(details: [AppLinkDetails(appIDs: ["ABCDE12345.com.example.app"], components: components)]
            ))
        let matcher = URLMatcher(file: file)
        let inputs = (0..<urls).map { index -> String in
            let rule = rules - 1 - (index * 7) % rules
            switch index % 6 {
            case 0: return "https://example.com/section\(rule - rule % 5)/a/b"
            case 1: return "https://example.com/items/\(rule - rule % 5 + 1)/abcd"
            case 2: return "https://example.com/en_US/p\(rule - rule % 5 + 2)/x"
            case 3: return "https://example.com/help/\(rule - rule % 5 + 3)/x?id=7"
            case 4: return "https://example.com/private/\(rule - rule % 5 + 4)/xxaxxb"
            default: return "https://example.com/nothing/\(index)?q=1#f"
            }
        }
        var verdicts: [MatchResult.Verdict: Int] = [:]
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            for input in inputs { verdicts[matcher.match(input).verdict, default: 0] += 1 }
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return (Double(urls) / seconds, verdicts)
    }
}

@Suite struct URLMatcherBenchmarkTests {
    @Test(.enabled(if: ProcessInfo.processInfo.environment["AASA_BENCH"] == "1"))
    func printThroughput() {
        let result = URLMatcherBenchmark.run(rules: 500, urls: 20_000)
        print("URLMatcherBenchmark: 500 rules, \(Int(result.matchesPerSecond)) matches/s, verdicts \(result.verdicts)")
        // The workload is built so every kind of outcome occurs; this checks the harness, not the timing.
        #expect(result.verdicts[.match, default: 0] > 0)
        #expect(result.verdicts[.excluded, default: 0] > 0)
        #expect(result.verdicts[.noMatch, default: 0] > 0)
    }
}
