import AASATestSupport
import Foundation
import Testing

@testable import AASACore

/// Files nobody should write but someone will: each gets one clear error (file, line, key path, fix), never a
/// crash or a hang. The time bounds are hang guards for a debug build, not performance goals; they count the
/// test thread's CPU time, so other tests and other builds on a shared machine do not make them fail.
@Suite struct HostileInputTests {
    static let hangGuard = Duration.seconds(5)

    /// Runs `body` and fails the test if it takes more CPU time than the hang guard.
    func withinHangGuard<T>(_ what: String, _ body: () throws -> T) rethrows -> T {
        let start = CPUTime.ofThisThread()
        let result = try body()
        let elapsed = CPUTime.ofThisThread() - start
        #expect(elapsed < Self.hangGuard, "\(what) took \(elapsed) of CPU time")
        return result
    }

    func load(_ bytes: [UInt8]) -> LoadedDomain {
        withinHangGuard("loading \(bytes.count) bytes") {
            SiteConfigLoader().loadDomain(
                domain: "shop.example", source: SourceText(name: "shop.example/site.json", bytes: bytes))
        }
    }

    @Test func aSiteJSONOverTheLimitIsRefusedBeforeItIsRead() throws {
        let folder = TemporaryDirectory("aasa-hostile")
        defer { withExtendedLifetime(folder) {} }
        let file = folder.path + "/site.json"
        // 64 MiB (sparse) after a valid start: a loader that reads and parses it would take seconds and the memory.
        #expect(FileManager.default.createFile(atPath: file, contents: Data("{\"cacheControl\": \"".utf8)))
        let handle = try #require(FileHandle(forWritingAtPath: file))
        try handle.truncate(atOffset: 64 << 20)
        try handle.close()

        let loaded = withinHangGuard("a 64 MiB site.json") {
            SiteConfigLoader().loadDomain(domain: "shop.example", file: file)
        }
        #expect(
            loaded.diagnostics.map(\.description) == [
                "\(file):1:1: error: [file-too-large] site.json is 67108864 bytes; the limit is 1048576 (1 MiB); fix: shrink it: merge rules with wildcards or substitution variables (Apple reads at most 128 KB of the generated file)"
            ])
        #expect(loaded.config == nil)
    }

    @Test func aTenMegabyteStringOrAMillionElementArrayIsOverTheLimit() {
        let string = load(Array("{\"cacheControl\": \"\(String(repeating: "a", count: 10_000_000))\"}".utf8))
        #expect(string.diagnostics.map(\.rule) == [.fileTooLarge])
        let array = load(
            Array("{\"webCredentials\": [\(Array(repeating: "1", count: 1_000_000).joined(separator: ","))]}".utf8))
        #expect(array.diagnostics.map(\.message) == ["site.json is 2000021 bytes; the limit is 1048576 (1 MiB)"])
    }

    @Test func aMegabyteStringJustUnderTheLimitLoads() {
        let loaded = load(Array("{\"cacheControl\": \"\(String(repeating: "a", count: 1_000_000))\"}".utf8))
        // The string is read whole; as a header value it is then over the cap (CacheControlRule.maximumHeaderBytes).
        #expect(loaded.diagnostics.errors.map(\.rule) == [.cacheControl], "\(loaded.diagnostics.prefix(3))")
        #expect(loaded.config?.cacheControl.utf8.count == 1_000_000)
    }

    @Test func aMillionElementArrayInAnAssociationFileIsOneFinding() {
        let text =
            "{\"applinks\": {\"details\": []}, \"extra\": [\(Array(repeating: "1", count: 1_000_000).joined(separator: ","))]}"
        let findings = withinHangGuard("checking a 2 MB association file") {
            AssociationChecker().check(SourceText(name: "aasa.json", bytes: Array(text.utf8)))
        }
        #expect(findings.map(\.rule) == [.fileSize, .unknownKey])
    }

    @Test func wrongTypesInALongMinifiedArrayAreReportedInLinearTime() {
        // One line, as minified files are: each error's column must not rescan the line from its start (10⁵
        // elements took minutes before SourceText kept checkpoints).
        let loaded = load(
            Array("{\"webCredentials\": [\(Array(repeating: "1", count: 100_000).joined(separator: ","))]}".utf8))
        #expect(loaded.diagnostics.count == 100_000)
        #expect(
            loaded.diagnostics.last?.description
                == "shop.example/site.json:1:200019: error: [wrong-type] expected a string, found number (at webCredentials[99999])"
        )
    }

    @Test func tenThousandRulesAreCheckedWithinTheGuard() {
        // Rules sharing literal prefixes make every pair a candidate for the unreachable-rule check.
        let rules = (0..<10_000).map { "{\"path\": \"/a\($0)/*\"}" }.joined(separator: ",")
        let loaded = load(
            Array(
                "{\"universalLinks\": {\"apps\": [{\"appIDs\": [\"ABCDE12345.com.example.shop\"], \"rules\": [\(rules)]}]}}"
                    .utf8))
        #expect(loaded.diagnostics.errors.map(\.rule) == [.fileSize])
    }

    @Test func rulesThatAllShareAnEmptyPrefixStopTheUnreachableCheckWithANote() {
        // Every rule starts with a wildcard, so every earlier rule is a candidate: 10⁷ pairs without the budget.
        let rules = (0..<5_000).map { "{\"path\": \"*\($0)\"}" }.joined(separator: ",")
        let loaded = load(
            Array(
                "{\"legacyFormat\": false, \"universalLinks\": {\"apps\": [{\"appIDs\": [\"ABCDE12345.com.example.shop\"], \"rules\": [\(rules)]}]}}"
                    .utf8))
        let notes = loaded.diagnostics.filter { $0.severity == .note }
        #expect(notes.count == 1)
        #expect(notes.first?.rule == .unreachableRule)
        #expect(notes.first?.message.contains("were not checked") == true)
        #expect(notes.first?.keyPath?.hasPrefix("universalLinks.apps[0].rules[") == true)
    }

    @Test func nestingDeeperThanTheLimitNamesTheLevelKeyPathAndFix() throws {
        let text =
            "{\n  \"universalLinks\": {\"apps\": " + String(repeating: "[", count: 70)
            + String(repeating: "]", count: 70)
            + "}\n}"
        let diagnostic = try #require(load(Array(text.utf8)).diagnostics.first)
        #expect(diagnostic.rule == .jsonTooDeep)
        #expect(diagnostic.message == "nesting is deeper than 64 levels")
        #expect(diagnostic.file == "shop.example/site.json")
        #expect((diagnostic.line, diagnostic.column) == (2, 92))
        #expect(diagnostic.keyPath == "universalLinks.apps" + String(repeating: "[0]", count: 62))
        #expect(diagnostic.hint == "flatten the structure: association files and site.json need fewer than ten levels")
    }

    @Test func aDuplicateKeyInASiteJSONNamesTheKeyBothLinesAndTheFix() {
        let loaded = load(
            Array(
                """
                {
                  "legacyFormat": true,
                  "universalLinks": {"apps": [{"appIDs": ["ABCDE12345.com.example.shop"],
                    "rules": [{"path": "/a/*", "query": {"id": "?*", "id": "*"}}]}]},
                  "legacyFormat": false
                }
                """.utf8))
        #expect(
            loaded.diagnostics.errors.map(\.description) == [
                "shop.example/site.json:4:54: error: [duplicate-key] key \"id\" is repeated in the same object: first at column 42, again at column 54 of line 4 (at universalLinks.apps[0].rules[0].query.id); fix: delete one of them; JSON readers disagree on which one counts, and most drop the other without a word",
                "shop.example/site.json:5:3: error: [duplicate-key] key \"legacyFormat\" is repeated in the same object: first on line 2, again on line 5 (at legacyFormat); fix: delete one of them; JSON readers disagree on which one counts, and most drop the other without a word",
            ])
        // The first one is read, so later findings do not depend on which copy a reader would pick.
        #expect(loaded.config?.legacyFormat == true)
    }

    /// Repeats are found by a scan while an object is small and by a dictionary once it is large; both report
    /// the first occurrence, and every repeat of it.
    @Test(arguments: [3, 15, 16, 40])
    func aRepeatIsFoundInObjectsOfEverySize(members: Int) throws {
        let last = "\"k\(members - 1)\""
        let keys = (0..<members).map { "\"k\($0)\": \($0)" } + ["\"k1\": 0", "\(last): 0", "\"k1\": 1"]
        let text = "{\(keys.joined(separator: ","))}"
        let result = try JSONParser().parse(SourceText(name: "big.json", bytes: Array(text.utf8)))
        let found = result.diagnostics.filter { $0.rule == .duplicateKey }.map(\.message)
        // Columns of each key's first occurrence: the text is one line.
        func column(_ key: String) -> Int {
            (text.range(of: key).map { text.utf8.distance(from: text.startIndex, to: $0.lowerBound) } ?? -1) + 1
        }
        #expect(found.count == 3)
        #expect(
            found.count == 3 && found[0].contains("\"k1\"") && found[0].contains("first at column \(column("\"k1\""))"))
        #expect(found.count == 3 && found[1].contains(last) && found[1].contains("first at column \(column(last))"))
        #expect(
            found.count == 3 && found[2].contains("\"k1\"") && found[2].contains("first at column \(column("\"k1\""))"))
    }

    /// A finding's key path names each key by an excerpt, and the parser reads a key on the path once however many
    /// findings name it: thousands of repeated keys below a long key (the whole within site.json's limit) cost their
    /// number, not their number times the key's length, in time and in the findings' bytes.
    @Test func findingsBelowALongKeyAreBoundedEach() throws {
        let long = String(repeating: "k", count: 100_000)
        let repeats = Array(repeating: "\"x\": 1", count: 2_000).joined(separator: ",")
        let parsed = withinHangGuard("2,000 repeated keys below a key of 100,000 bytes") {
            try? JSONParser().parse(SourceText(name: "t.json", bytes: Array("{\"\(long)\": {\(repeats)}}".utf8)))
        }
        let repeated = try #require(parsed).diagnostics
        #expect(repeated.count == 1_999 && repeated.allSatisfy { $0.rule == .duplicateKey })
        #expect(repeated.allSatisfy { $0.description.utf8.count < 400 })
        #expect(repeated.first?.keyPath == "\"" + String(repeating: "k", count: 77) + "…\".x")
        // A reader's findings below a long key (a substitution variable's name) likewise.
        let values = Array(repeating: "1", count: 2_000).joined(separator: ",")
        let loaded = load(Array(#"{"universalLinks": {"variables": {"\#(long)": [\#(values)]}, "apps": []}}"#.utf8))
        let below = loaded.diagnostics.filter { $0.keyPath?.hasPrefix("universalLinks.variables.") == true }
        #expect(!below.isEmpty)
        #expect(loaded.diagnostics.allSatisfy { ($0.keyPath?.utf8.count ?? 0) < 200 })
    }

    @Test func anAssociationFileWithADuplicateKeyIsNotImportedAndFailsTheCheck() {
        let text = """
            {"applinks": {"details": [{"appID": "ABCDE12345.com.example.a", "paths": ["/a/*"],
                                       "paths": ["/b/*"]}]}}
            """
        let source = SourceText(name: "aasa.json", bytes: Array(text.utf8))
        let imported = ImportPipeline().run(source, domain: "shop.example")
        #expect(imported.config == nil)
        #expect(imported.diagnostics.errors.map(\.rule) == [.duplicateKey])
        #expect(imported.diagnostics.first?.message.contains("first on line 1, again on line 2") == true)
        #expect(imported.diagnostics.first?.keyPath == "applinks.details[0].paths")
        let checked = AssociationChecker().check(source)
        #expect(checked.errors.map(\.rule) == [.duplicateKey])
    }

    @Test func invalidUTF8NamesTheByteItsPlaceAndTheKeyItIsIn() throws {
        let bytes =
            Array("{\n  \"universalLinks\": {\"apps\": [{\"appIDs\": [\"ABCDE12345.com.".utf8) + [0xE9]
            + Array("t\"]}]}\n}".utf8)
        let diagnostic = try #require(load(bytes).diagnostics.first)
        #expect(
            diagnostic.description
                == "shop.example/site.json:2:59: error: [not-utf8] file is not valid UTF-8 (byte 0xE9) (at universalLinks.apps[0].appIDs[0]); fix: save the file as UTF-8 (it may be Latin-1 or Windows-1252)"
        )
    }

    @Test(arguments: [
        [UInt8](), [0x00], [0xFF, 0xFE, 0x7B, 0x00, 0x7D, 0x00], Array("\u{FEFF}".utf8), Array("[".utf8),
        Array("{\"".utf8), Array("\"\\u".utf8), Array("\"\\ud800\\u".utf8), Array("-".utf8), Array("1e".utf8),
    ])
    func truncatedAndBinaryInputGetAnError(bytes: [UInt8]) {
        let loaded = load(bytes)
        #expect(loaded.diagnostics.hasErrors)
        #expect(loaded.diagnostics.allSatisfy { $0.file == "shop.example/site.json" && $0.line >= 1 && $0.column >= 1 })
    }
}
