import AASATestSupport
import Foundation
import Testing

@testable import AASACore

/// Every real-world file in `Tests/Corpus/aasa/` either imports and regenerates with the same apps
/// and rules, or is refused with a precise error. None may crash or hang the importer.
@Suite struct CorpusImportTests {
    static let files: [String] = {
        let folder = RepositoryPaths.corpus + "/aasa"
        return RepositoryPaths.files(in: folder, endingWith: ".json").map { folder + "/" + $0 }
    }()

    static func run(_ path: String) -> (ImportPipeline.Output, SourceText) {
        let bytes = (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))) ?? []
        let source = SourceText(name: path, bytes: bytes)
        return (ImportPipeline().run(source, domain: "imported.example"), source)
    }

    @Test func corpusIsPresent() {
        #expect(Self.files.count == 150)
    }

    @Test(arguments: files)
    func importsFaithfullyOrRefusesPrecisely(path: String) throws {
        let (output, _) = Self.run(path)
        guard let config = output.config, let generated = output.generated, let original = output.original else {
            let errors = output.diagnostics.errors
            #expect(!errors.isEmpty, "refused without an error")
            for error in errors {
                #expect(error.file == path)
                #expect(!error.message.isEmpty && !error.rule.id.isEmpty)
                #expect(error.line > 0, "no line for \(error)")
            }
            return
        }
        // Same app IDs for every service.
        let regenerated = generated.file
        #expect(Set(regenerated.webCredentials ?? []) == Set(original.webCredentials ?? []))
        #expect(Set(regenerated.appClips ?? []) == Set(original.appClips ?? []))
        #expect(Set(regenerated.activityContinuation ?? []) == Set(original.activityContinuation ?? []))
        let originalApps = Set(
            (original.applinks?.details ?? []).filter { Self.claimsSomething($0) }.flatMap(\.modernAppIDs))
        let regeneratedApps = Set((regenerated.applinks?.details ?? []).flatMap(\.modernAppIDs))
        #expect(originalApps == regeneratedApps)
        // Same rules, in order, for every entry that claims something.
        let originalRules = (original.applinks?.details ?? []).filter { Self.claimsSomething($0) }.map { details in
            details.components ?? (details.paths ?? []).map(AssociationImporter.rule(fromLegacyPath:))
        }
        let importedRules = (config.universalLinks?.apps ?? []).map(\.rules)
        #expect(originalRules.map { $0.map(Self.withoutComment) } == importedRules.map { $0.map(Self.withoutComment) })
        // The first entries of the generated file are the imported rules, in order.
        let regeneratedRules = (regenerated.applinks?.details ?? []).prefix(importedRules.count).map {
            $0.components ?? []
        }
        #expect(importedRules == Array(regeneratedRules))
    }

    /// The semantic diff between the original and the imported config finds no URL whose answer changes: the
    /// claim above, for every URL rather than a sample (iOS 12 and earlier too, unless the import widened them).
    @Test(arguments: files)
    func semanticDiffFindsNoURLWhoseAnswerChanges(path: String) throws {
        let (output, _) = Self.run(path)
        guard let original = output.original, let regenerated = output.generated?.file else { return }
        let legacy = !output.diagnostics.contains { $0.rule == .legacyAppIDs }
        let diff = DomainDiff(
            domain: "imported.example", old: DiffSide(appleFile: original), new: DiffSide(appleFile: regenerated),
            legacy: legacy)
        #expect(diff.changes.isEmpty, "\(diff.report)")
        #expect(diff.services.isEmpty, "\(diff.report)")
        #expect(diff.notes.isEmpty, "\(diff.report)")
    }

    /// On real files, an edit (the first rule of the first entry removed): every sampled URL whose answer the
    /// edit changes falls in a class the diff lists with the same deciding rules, and every class has an example
    /// the matcher confirms.
    @Test(arguments: files)
    func semanticDiffAccountsForEverySampledChange(path: String) throws {
        let (output, _) = Self.run(path)
        guard let original = output.original, var edited = output.original,
            var first = edited.applinks?.details.first
        else { return }
        if first.components?.isEmpty == false {
            first.components!.removeFirst()
        } else if first.paths?.isEmpty == false {
            first.paths!.removeFirst()
        } else {
            return
        }
        edited.applinks!.details[0] = first
        let diff = DomainDiff(
            domain: "imported.example", old: DiffSide(appleFile: original), new: DiffSide(appleFile: edited))
        #expect(diff.notes.isEmpty, "\(diff.report)")
        let before = URLMatcher(file: original)
        let after = URLMatcher(file: edited)
        func decided(_ result: MatchResult) -> String? {
            guard let details = result.detailsIndex, let index = result.componentIndex, let kind = result.ruleKind
            else { return nil }
            return "applinks.details[\(details)].\(kind.rawValue)[\(index)]"
        }
        for url in URLSampler.urls(for: original) {
            let was = before.match(url, nearMissLimit: 0)
            let now = after.match(url, nearMissLimit: 0)
            guard was.verdict == .match || now.verdict == .match,
                was.verdict != now.verdict || Set(was.appIDs) != Set(now.appIDs)
            else { continue }
            let covered = diff.changes.contains {
                $0.oldRule?.location == decided(was) && $0.newRule?.location == decided(now)
            }
            #expect(covered, "\(url): \(decided(was) ?? "-") -> \(decided(now) ?? "-") not in\n\(diff.report)")
        }
    }

    /// Serving the imported config gives the same answer as the original for every sampled URL, for
    /// iOS 13+ and for iOS 12 and earlier.
    @Test(arguments: files)
    func importedConfigAnswersEveryURLAsTheOriginal(path: String) throws {
        let (output, _) = Self.run(path)
        guard let original = output.original, let regenerated = output.generated?.file else { return }
        let urls = URLSampler.urls(for: original)
        for mode in [MatchMode.modern, .legacy] {
            let before = URLMatcher(file: original, mode: mode)
            let after = URLMatcher(file: regenerated, mode: mode)
            for url in urls {
                let expected = before.match(url, nearMissLimit: 0)
                let actual = after.match(url, nearMissLimit: 0)
                let legacyWidened = mode == .legacy && output.diagnostics.contains { $0.rule == .legacyAppIDs }
                if legacyWidened { continue }
                #expect(
                    expected.verdict == actual.verdict,
                    "\(mode) \(url): \(expected.explanation) vs \(actual.explanation)")
                #expect(Set(expected.appIDs) == Set(actual.appIDs), "\(mode) \(url)")
            }
        }
    }

    /// `check --aasa` on every corpus file: it always finishes, and a file the INDEX marks as invalid JSON
    /// always gets an error.
    @Test(arguments: files)
    func checkFinishesAndFlagsInvalidFiles(path: String) throws {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let diagnostics = AssociationChecker().check(SourceText(name: path, bytes: bytes))
        let name = "aasa/" + (path as NSString).lastPathComponent
        if Self.invalidJSON.contains(name) {
            #expect(diagnostics.hasErrors)
        }
        #expect(diagnostics.allSatisfy { $0.file == path })
    }

    @Test func theCorpusAndItsIndexAreRead() {
        #expect(Self.files.count >= 100, "\(Self.files.prefix(1))")
        // The index marks the files that are not JSON at all; without it the check above them would pass vacuously.
        #expect(!Self.invalidJSON.isEmpty, "no file of \(RepositoryPaths.corpus)/INDEX.tsv is marked as invalid JSON")
    }

    static let invalidJSON: Set<String> = {
        let index = (try? String(contentsOfFile: RepositoryPaths.corpus + "/INDEX.tsv", encoding: .utf8)) ?? ""
        return Set(
            index.split(separator: "\n").compactMap { line in
                let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
                return fields.count > 4 && fields[4] == "no" ? String(fields[0]) : nil
            })
    }()

    static func claimsSomething(_ details: AppLinkDetails) -> Bool {
        !details.modernAppIDs.isEmpty && (details.components.map { !$0.isEmpty } ?? !(details.paths ?? []).isEmpty)
    }

    static func withoutComment(_ rule: ComponentPattern) -> ComponentPattern {
        var copy = rule
        copy.comment = nil
        return copy
    }

    @Test func reportsTheCounts() {
        var imported = 0
        var refused: [String: Int] = [:]
        for path in Self.files {
            let (output, _) = Self.run(path)
            if output.config != nil {
                imported += 1
            } else {
                refused[output.diagnostics.errors.first?.rule.id ?? "?", default: 0] += 1
                if ProcessInfo.processInfo.environment["AASA_VERBOSE"] == "1" {
                    print(output.diagnostics.errors.first?.description ?? "?")
                }
            }
        }
        print(
            "corpus import: \(imported) imported, \(Self.files.count - imported) refused; by first error: \(refused.sorted { $0.key < $1.key })"
        )
        #expect(imported + refused.values.reduce(0, +) == Self.files.count)
        #expect(imported > 60)
    }
}

/// URLs that exercise a file's rules: each pattern instantiated with empty, short and multi-segment
/// wildcards, with and without its query items and fragment, plus a few fixed URLs.
enum URLSampler {
    static func urls(for file: AssociationFile) -> [String] {
        var variables: [String: String] = [
            "alpha": "a", "upper": "A", "lower": "a", "alnum": "a", "digit": "1", "xdigit": "f",
            "region": "US", "lang": "en",
        ]
        for variable in file.applinks?.substitutionVariables ?? [] {
            variables[variable.name] = variable.values.first ?? ""
        }
        var urls = ["/", "/x", "/index.html", "/a/b/c?x=1#f", "/.well-known/apple-app-site-association"]
        for details in file.applinks?.details ?? [] {
            var patterns: [(path: String?, query: QueryPattern?, fragment: String?)] = []
            for component in details.components ?? [] {
                patterns.append((component.path, component.query, component.fragment))
            }
            for path in details.paths ?? [] {
                patterns.append((path.hasPrefix("NOT ") ? String(path.dropFirst(4)) : path, nil, nil))
            }
            for pattern in patterns {
                for filler in ["", "item", "a/b"] {
                    var path = instantiate(pattern.path ?? "/*", filler: filler, variables: variables)
                    if !path.hasPrefix("/") { path = "/" + path }
                    path = path.replacingOccurrences(of: "#", with: "%23").replacingOccurrences(of: "?", with: "%3F")
                    urls.append(path)
                    switch pattern.query {
                    case .whole(let query):
                        urls.append(path + "?" + instantiate(query, filler: filler, variables: variables))
                    case .items(let items):
                        let query = items.map {
                            "\($0.name)=\(instantiate($0.pattern, filler: filler, variables: variables))"
                        }
                        urls.append(path + "?" + query.joined(separator: "&"))
                    case nil: break
                    }
                    if let fragment = pattern.fragment {
                        urls.append(path + "#" + instantiate(fragment, filler: filler, variables: variables))
                    }
                    urls.append(path.uppercased())
                }
            }
        }
        var seen: Set<String> = []
        return urls.filter { seen.insert($0).inserted }.map { "https://imported.example" + $0 }
    }

    static func instantiate(_ pattern: String, filler: String, variables: [String: String]) -> String {
        var out = ""
        var index = pattern.startIndex
        while index < pattern.endIndex {
            let character = pattern[index]
            if character == "$", pattern[index...].hasPrefix("$("), let close = pattern[index...].firstIndex(of: ")") {
                let name = String(pattern[pattern.index(index, offsetBy: 2)..<close])
                out += variables[name] ?? name
                index = pattern.index(after: close)
                continue
            }
            switch character {
            case "*": out += filler
            case "?": out += "q"
            default: out.append(character)
            }
            index = pattern.index(after: index)
        }
        return out.replacingOccurrences(of: " ", with: "%20")
    }
}
