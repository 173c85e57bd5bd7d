import AASACore
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// Every reload that publishes a new version of a domain says what it does to URLs: `/status` shows the domain's
/// last change with its classes and examples, and an edit that changes nothing for any URL says so.
@Suite(.serialized) struct ReloadChangeLiveTests {
    static let exclusion =
        #"{ "fragment": "no_universal_links", "exclude": true, "comment": "escape hatch for links that must stay in Safari" },"#

    /// The domain's `lastChange` once the comparison of the load of `after` is in (it runs after the reload has
    /// published), within 30 s.
    static func change(_ live: LiveServer, after reload: Date) throws -> [String: Any] {
        let formatter = ServerStatus.makeFormatter()
        let deadline = TestTime.deadline(30)
        while Date() < deadline {
            if let change = try status(live)["lastChange"] as? [String: Any],
                let time = (change["time"] as? String).flatMap(formatter.date(from:)),
                time >= reload.addingTimeInterval(-0.001)
            {
                return change
            }
            usleep(20_000)
        }
        throw ChangeNotCompared()
    }

    struct ChangeNotCompared: Error {}

    static func status(_ live: LiveServer) throws -> [String: Any] {
        let response = try Curl.request("http://127.0.0.1:\(live.admin)/status")
        let object = try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any]
        let domains = object?["domains"] as? [String: Any]
        return try #require(domains?["shop.example"] as? [String: Any])
    }

    @Test func statusShowsWhatTheLastReloadDidToURLs() throws {
        let live = try LiveServer()
        #expect(try Self.status(live)["lastChange"] == nil)
        let file = live.configDirectory + "/shop.example/site.json"
        var text = try String(contentsOfFile: file, encoding: .utf8)
        // The reviewer's edit: the fragment exclusion moves below `/buy/*` (and its link test goes).
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let excluded = try #require(lines.firstIndex { $0.contains(#""fragment": "no_universal_links""#) })
        var edited = lines
        let rule = edited.remove(at: excluded)
        let buy = try #require(edited.firstIndex { $0.contains(#"{ "path": "/buy/*" }"#) })
        edited.insert(rule, at: buy + 1)
        edited.removeAll { $0.contains(#"red-shoes#no_universal_links"#) }
        text = edited.joined(separator: "\n")
        try Data(text.utf8).write(to: URL(fileURLWithPath: file))
        var reloaded = Date()
        #expect(live.server.reload().errors.isEmpty)

        let change = try Self.change(live, after: reloaded)
        #expect((change["summary"] as? String)?.hasPrefix("1 class of URLs change (1 web-to-app)") == true)
        let classes = try #require(change["changes"] as? [[String: Any]])
        #expect(classes.count == 1)
        #expect(classes.first?["kind"] as? String == "web-to-app")
        #expect(classes.first?["description"] as? String == "`/buy/*` with fragment `no_universal_links`")
        let examples = classes.first?["examples"] as? [String] ?? []
        #expect(!examples.isEmpty)
        // Each example really opens the app now, on the live server's own matcher.
        for example in examples {
            let encoded = example.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? example
            let answer = try Curl.request("http://127.0.0.1:\(live.admin)/match?url=\(encoded)")
            #expect(answer.text.contains(#""verdict":"match""#), "\(example): \(answer.text)")
        }
        let oldRule = (classes.first?["oldRule"] as? [String: Any])?["location"] as? String
        #expect(oldRule == "universalLinks.apps[0].rules[0] (applinks.details[0].components[0])")

        // A comment changes the served file but no URL's answer.
        try Data(
            text.replacingOccurrences(of: #"{ "path": "/buy/*" }"#, with: #"{ "path": "/buy/*", "comment": "shop" }"#)
                .utf8
        )
        .write(to: URL(fileURLWithPath: file))
        reloaded = Date()
        #expect(live.server.reload().errors.isEmpty)
        let unchanged = try Self.change(live, after: reloaded)
        #expect(unchanged["summary"] as? String == "no URL changes its answer")
        #expect((unchanged["changes"] as? [Any])?.isEmpty == true)
    }
}
