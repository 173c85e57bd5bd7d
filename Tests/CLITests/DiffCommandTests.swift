import AASATestSupport
import Foundation
import Testing

/// `aasa-server diff` as a reviewer and a CI step use it: the README's edit of the sample (the fragment exclusion
/// of shop.example moved below `/buy/*`), compared as two folders, as a git revision, and gated by --fail-on.
@Suite struct DiffCommandTests {
    func aasa(_ arguments: [String], in directory: String) throws -> Command.Output {
        try Command.run(RepositoryPaths.executable, arguments, currentDirectory: directory, timeout: 60)
    }

    func git(_ arguments: [String], in directory: String) throws {
        let output = try Command.run(
            "git", ["-c", "user.name=t", "-c", "user.email=t@example.com"] + arguments, currentDirectory: directory)
        #expect(output.status == 0, "git \(arguments): \(output.stderr)")
    }

    /// The reviewer's edit of `site.json`: the exclusion below `/buy/*`, and the link test that pinned it gone.
    static func moveExclusion(_ file: String) throws {
        var lines = try String(contentsOfFile: file, encoding: .utf8).split(
            separator: "\n", omittingEmptySubsequences: false
        ).map(String.init)
        let rule = lines.remove(
            at: try #require(lines.firstIndex { $0.contains(#""fragment": "no_universal_links""#) }))
        lines.insert(rule, at: try #require(lines.firstIndex { $0.contains(#"{ "path": "/buy/*" }"#) }) + 1)
        lines.removeAll { $0.contains("red-shoes#no_universal_links") }
        try Data(lines.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: file))
    }

    @Test func gitRevisionAgainstTheWorkingTreeGatesURLsEnteringTheApp() throws {
        let directory = TemporaryDirectory("aasa-diff-git")
        try directory.copy(RepositoryPaths.root + "/site-config", to: "site-config")
        try git(["init", "-q"], in: directory.path)
        try git(["add", "."], in: directory.path)
        try git(["commit", "-qm", "sample"], in: directory.path)
        try Self.moveExclusion(directory.path + "/site-config/shop.example/site.json")
        try git(["commit", "-qam", "move the exclusion"], in: directory.path)

        // HEAD~1 against the working tree (= HEAD): the class, its examples and both rules.
        let human = try aasa(["diff", "--git", "HEAD~1"], in: directory.path)
        #expect(human.status == 0, "\(human.stderr)")
        #expect(human.stdout.contains("links.example: no URL changes its answer"), "\(human.stdout)")
        #expect(human.stdout.contains("web-to-app  iOS 13+  `/buy/*` with fragment `no_universal_links`"))
        #expect(human.stdout.contains("old rule: universalLinks.apps[0].rules[0]"))
        #expect(
            human.stdout.contains(
                #"new rule: universalLinks.apps[0].rules[1] (applinks.details[0].components[1]) {"/": "/buy/*"}"#))
        #expect(human.stdout.contains("https://shop.example/buy#no_universal_links"))
        // No checkout: the working tree is as it was.
        let status = try Command.run("git", ["status", "--porcelain"], currentDirectory: directory.path)
        #expect(status.stdout.isEmpty)

        let gated = try aasa(["diff", "--git", "HEAD~1", "--fail-on", "web-to-app"], in: directory.path)
        #expect(gated.status == 1)
        #expect(gated.stderr.contains("1 change of a kind --fail-on names (web-to-app)"))
        #expect(
            try aasa(["diff", "--git", "HEAD~1", "--fail-on", "app-to-web,app-to-app"], in: directory.path).status == 0)
        #expect(
            try aasa(["diff", "--git", "HEAD"], in: directory.path).stdout.contains(
                "shop.example: no URL changes its answer"))

        let json = try aasa(["diff", "--git", "HEAD~1", "--json"], in: directory.path)
        let shop = try #require(
            json.stdout.split(separator: "\n").compactMap {
                try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
            }.first { $0["domain"] as? String == "shop.example" })
        #expect(shop["status"] as? String == "changed")
        let change = try #require((shop["changes"] as? [[String: Any]])?.first)
        #expect(change["kind"] as? String == "web-to-app")
        #expect(change["to"] as? [String] == ["ABCDE12345.com.example.shop"])
        #expect(
            (change["newRule"] as? [String: Any])?["location"] as? String
                == "universalLinks.apps[0].rules[1] (applinks.details[0].components[1])")

        let unknown = try aasa(["diff", "--git", "no-such-branch"], in: directory.path)
        #expect(unknown.status == 2)
        #expect(unknown.stderr.contains("'no-such-branch' names no commit"))
    }

    /// A revision holding a 512 MiB blob of zeros (half a megabyte in `.git`): git is asked for its size, never
    /// its contents, so `diff --git` runs within a data limit of 256 MiB (reading the blob took over 1 GB) and
    /// the loader names the file as over its cap.
    @Test func aBlobOverTheCapIsNeverRead() throws {
        let directory = TemporaryDirectory("aasa-diff-git-blob")
        try directory.copy(RepositoryPaths.root + "/site-config", to: "site-config")
        try git(["init", "-q"], in: directory.path)
        let blob = try Command.run(
            "/bin/sh", ["-c", "head -c 536870912 /dev/zero | git hash-object -w --stdin"],
            currentDirectory: directory.path, timeout: 120)
        #expect(blob.status == 0, "\(blob.stderr)")
        let object = blob.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try git(["add", "."], in: directory.path)
        try git(
            ["update-index", "--add", "--cacheinfo", "100644,\(object),site-config/shop.example/pages/zeros.html"],
            in: directory.path)
        try git(["commit", "-qm", "a page of zeros"], in: directory.path)
        try git(["rm", "-q", "--cached", "site-config/shop.example/pages/zeros.html"], in: directory.path)
        try git(["commit", "-qm", "no page of zeros"], in: directory.path)

        let limited = try Command.run(
            "/bin/sh", ["-c", "ulimit -d 262144 && exec \"$0\" diff --git HEAD~1", RepositoryPaths.executable],
            currentDirectory: directory.path, timeout: 120)
        #expect(limited.status == 0 || limited.status == 2, "\(limited.status): \(limited.stderr)")
        #expect(
            limited.stdout.contains("shop.example") || limited.stderr.contains("shop.example"),
            "\(limited.stdout)\n\(limited.stderr)")
        #expect(limited.stderr.contains("zeros.html"), "\(limited.stderr)")
        #expect(limited.stderr.contains("536870912 bytes"), "\(limited.stderr)")
    }

    /// A comparison its budget stops says so, in the report and in JSON, and fails a --fail-on gate, which it cannot
    /// show is clear.
    @Test func aComparisonTooComplexSaysSoAndFailsTheGate() throws {
        let directory = TemporaryDirectory("aasa-diff-complex")
        let old = try directory.write(
            "old.json",
            #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.app"], "components": [{"/": "/a/*"}]}]}}"#)
        let rules = (1...20).map { #"{"/": "*a\#(String(repeating: "?", count: $0))"}"# }.joined(separator: ", ")
        let new = try directory.write(
            "new.json",
            #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.app"], "components": [\#(rules)]}]}}"#)
        let report = try aasa(["diff", old, new], in: directory.path)
        #expect(report.status == 0)
        #expect(report.stdout.hasPrefix("old.json: not compared: too complex"), "\(report.stdout)")
        #expect(report.stdout.contains("note: iOS 13+: not compared: too complex (the comparison reached the limit of"))
        let json = try aasa(["diff", old, new, "--json"], in: directory.path)
        #expect(json.stdout.contains(#""complete":false"#), "\(json.stdout)")
        let gated = try aasa(["diff", old, new, "--fail-on", "app-to-web"], in: directory.path)
        #expect(gated.status == 1)
        #expect(gated.stderr.contains("not compared: too complex: a change of a kind --fail-on names may exist"))
    }

    /// A passkey page moved, a change-password page added and one removed between two site.json versions: each is a
    /// settings change, named by its site.json key, in the report and in JSON; no URL class changes, and no
    /// `--fail-on` gate fires for them.
    @Test func aMovedPasskeyURLIsASettingsChange() throws {
        let directory = TemporaryDirectory("aasa-diff-passkeys")
        let apps = #""webCredentials": ["ABCDE12345.com.example.app"]"#
        let old = try directory.write(
            "old/site-config/shop.example/site.json",
            #"{\#(apps), "passkeys": {"enroll": "https://shop.example/passkeys/new", "manage": "https://shop.example/passkeys"}}"#
        )
        let new = try directory.write(
            "new/site-config/shop.example/site.json",
            #"{\#(apps), "passkeys": {"enroll": "https://shop.example/account/passkeys/add"}, "changePassword": "https://shop.example/password"}"#
        )
        let report = try aasa(["diff", old, new, "--fail-on", "web-to-app,app-to-web,app-to-app"], in: directory.path)
        #expect(report.status == 0, "\(report.stderr)")
        #expect(
            report.stdout == """
                shop.example: no URL changes its answer
                  changePassword: (none) -> https://shop.example/password
                  passkeys.enroll: https://shop.example/passkeys/new -> https://shop.example/account/passkeys/add
                  passkeys.manage: https://shop.example/passkeys -> (none)

                """, "\(report.stdout)")
        let json = try aasa(["diff", old, new, "--json"], in: directory.path)
        #expect(json.stdout.contains(#""status":"changed""#), "\(json.stdout)")
        #expect(
            json.stdout.contains(
                #"{"setting":"passkeys.manage","old":"https://shop.example/passkeys","new":null}"#), "\(json.stdout)")
        #expect(
            try aasa(["diff", old, old], in: directory.path).stdout == "shop.example: no URL changes its answer\n")
    }

    @Test func filesOfEachKindAndBadInput() throws {
        let directory = TemporaryDirectory("aasa-diff-files")
        let old = try directory.write(
            "old.json",
            #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.app"], "components": [{"/": "/p/*"}]}]}, "webcredentials": {"apps": ["ABCDE12345.com.example.app"]}}"#
        )
        let new = try directory.write(
            "new.json",
            #"{"applinks": {"details": [{"appIDs": ["ABCDE12345.com.example.app"], "components": [{"/": "/p/?*"}]}]}}"#)
        let output = try aasa(["diff", old, new, "--fail-on", "app-to-web"], in: directory.path)
        #expect(output.status == 1)
        #expect(output.stdout.contains("app-to-web  iOS 13+  `/p/*`, which no rule matches now"), "\(output.stdout)")
        #expect(output.stdout.contains("e.g.      https://example.com/p\n"))
        #expect(output.stdout.contains("webcredentials: - ABCDE12345.com.example.app"))

        // A site.json against the Apple file it should replace.
        let site = try directory.write(
            "site-config/example.com/site.json",
            #"{"legacyFormat": false, "universalLinks": {"apps": [{"appIDs": ["ABCDE12345.com.example.app"], "rules": [{"path": "/p/*"}]}]}, "webCredentials": ["ABCDE12345.com.example.app"]}"#
        )
        let same = try aasa(["diff", old, site], in: directory.path)
        #expect(same.status == 0, "\(same.stderr)")
        #expect(same.stdout == "example.com: no URL changes its answer\n", "\(same.stdout)")

        let broken = try directory.write("broken.json", "{ nope")
        let bad = try aasa(["diff", old, broken], in: directory.path)
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("the new (\(broken)) side does not load"), "\(bad.stderr)")
        #expect(bad.stderr.contains("[invalid-json]"))
    }
}
