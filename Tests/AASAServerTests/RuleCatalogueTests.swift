import AASACore
import AASAServer
import AASATestSupport
import Foundation
import Testing

/// The catalogue of rules (`Rule.all`), the rules declared beside their checks, and the table in
/// docs/configuration.md#errors-and-warnings agree.
@Suite struct RuleCatalogueTests {
    /// One `static let <name> = Rule("<id>", …)` in `Sources/`.
    struct Declaration: CustomStringConvertible {
        var name: String
        var id: String
        /// The path from the repository root.
        var file: String

        var description: String { "\(file): \(name) (\(id))" }
    }

    /// Every rule declaration in `Sources/`, found by reading the files, not through the catalogue.
    static func declarations() throws -> [Declaration] {
        let pattern = try Regex(#"static let (\w+) = Rule\(\s*"([^"]*)""#)
        var found: [Declaration] = []
        for file in try swiftFiles() {
            let text = try String(contentsOfFile: RepositoryPaths.root + "/" + file, encoding: .utf8)
            for match in text.matches(of: pattern) {
                guard let name = match.output[1].substring, let id = match.output[2].substring else { continue }
                found.append(Declaration(name: String(name), id: String(id), file: file))
            }
        }
        return found
    }

    /// The Swift files under `Sources/`, relative to the repository root.
    static func swiftFiles() throws -> [String] {
        let sources = RepositoryPaths.root + "/Sources"
        let names = try #require(FileManager.default.enumerator(atPath: sources)?.allObjects as? [String])
        return names.filter { $0.hasSuffix(".swift") }.map { "Sources/" + $0 }.sorted()
    }

    /// Whether `text` uses the rule `name` other than in its declaration and in an area's list of rules.
    static func uses(_ name: String, in text: String) throws -> Bool {
        let lists = try Regex(#"static let \w+: \[Rule\] = \[[^\]]*\]"#)
        let use = try Regex(#"(rule: |Rule\.|[\s(\[,:]\.)"# + name + #"\b"#)
        return text.replacing(lists, with: "").split(separator: "\n").contains { line in
            !line.contains("static let \(name) =") && line.contains(use)
        }
    }

    /// The rule ids of the docs table's first column, in order.
    static func documentedIDs() throws -> [String] {
        let text = try String(contentsOfFile: RepositoryPaths.root + "/docs/configuration.md", encoding: .utf8)
        let section = try #require(text.range(of: "\n## Errors and warnings\n"))
        let rest = text[section.upperBound...]
        let body = rest.range(of: "\n## ").map { rest[..<$0.lowerBound] } ?? rest
        var ids: [String] = []
        for line in body.split(separator: "\n") where line.hasPrefix("| `") {
            let firstCell = line.dropFirst(2).prefix { $0 != "|" }
            for part in firstCell.split(separator: "`", omittingEmptySubsequences: false).enumerated()
            where part.offset % 2 == 1 {
                ids.append(String(part.element))
            }
        }
        return ids
    }

    @Test func everyRuleIsDocumentedAndEveryDocumentedRuleExists() throws {
        let documented = try Self.documentedIDs()
        #expect(documented.count > 90, "the table was not found or not read: \(documented)")
        let catalogue = Rule.all.map(\.id)
        #expect(Set(catalogue).subtracting(documented).sorted() == [], "rules missing from the docs table")
        #expect(Set(documented).subtracting(catalogue).sorted() == [], "documented rules that do not exist")
        #expect(catalogue == documented, "the catalogue lists the rules in the docs' order")
    }

    @Test func everyDeclaredRuleIsInTheCatalogueOnce() throws {
        let declared = try Self.declarations()
        #expect(declared.count > 90, "the declarations were not found: \(declared)")
        let catalogue = Rule.all.map(\.id)
        let unlisted = declared.filter { !catalogue.contains($0.id) }
        #expect(unlisted.isEmpty, "declared but in no area's list of Rule.all: \(unlisted)")
        #expect(Set(catalogue).subtracting(declared.map(\.id)).sorted() == [], "listed but not declared")
        #expect(declared.count == catalogue.count, "a rule declared twice, or listed twice: \(declared)")
    }

    /// A rule is declared in the file of a check that reports it; the rules a type reports only from files that
    /// others are splitting (`Server`) are declared in `Rule+<Type>.swift` beside that type's files.
    @Test func everyRuleIsDeclaredBesideACheckThatReportsIt() throws {
        let files = try Self.swiftFiles()
        for declaration in try Self.declarations() {
            let name = (declaration.file as NSString).lastPathComponent
            var candidates = [declaration.file]
            if name.hasPrefix("Rule+") {
                let folder = (declaration.file as NSString).deletingLastPathComponent
                let type = String(name.dropFirst("Rule+".count).dropLast(".swift".count))
                candidates = files.filter {
                    let other = ($0 as NSString).lastPathComponent
                    return ($0 as NSString).deletingLastPathComponent == folder
                        && (other == type + ".swift" || other.hasPrefix(type + "+"))
                }
            }
            let reported = try candidates.contains {
                try Self.uses(
                    declaration.name, in: String(contentsOfFile: RepositoryPaths.root + "/" + $0, encoding: .utf8))
            }
            #expect(reported, "\(declaration): no check in \(candidates) reports it")
        }
    }

    @Test func idsAreUniqueAndWellFormedAndEachRuleSaysWhatItMeans() {
        let ids = Rule.all.map(\.id)
        #expect(Set(ids).count == ids.count)
        for rule in Rule.all {
            #expect(rule.id.allSatisfy { $0.isLowercase || $0.isNumber || $0 == "-" }, "\(rule.id)")
            #expect(!rule.summary.isEmpty && !rule.summary.contains("\n"), "\(rule.id)")
            #expect(Rule.named(rule.id) == rule)
            let page = String(rule.documentation.prefix { $0 != "#" })
            #expect(FileManager.default.fileExists(atPath: RepositoryPaths.root + "/docs/" + page), "\(rule.id)")
        }
        #expect(Rule.named("no-such-rule") == nil)
    }

    @Test func aFindingPrintsItsRuleID() {
        let finding = Diagnostic(.error, rule: .appIDFormat, "bad", file: "site.json", line: 2, column: 3)
        #expect(finding.description == "site.json:2:3: error: [app-id-format] bad")
    }
}
