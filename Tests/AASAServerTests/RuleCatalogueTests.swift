import AASACore
import AASAServer
import AASATestSupport
import Foundation
import Testing

/// The catalogue of rules (``Rule``) and the table in docs/configuration.md#errors-and-warnings agree.
@Suite struct RuleCatalogueTests {
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
