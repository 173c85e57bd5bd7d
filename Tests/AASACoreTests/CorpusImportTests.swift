import Foundation
import Testing

@testable import AASACore

/// Every real-world file in `../shared/corpus/aasa/` either imports and regenerates with the same apps
/// and rules, or is refused with a precise error. None may crash or hang the importer.
@Suite struct CorpusImportTests {
    static let files: [String] = {
        let folder = Repo.corpus + "/aasa"
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".json") }.sorted()
            .map { folder + "/" + $0 }
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
                #expect(!error.message.isEmpty && !error.rule.isEmpty)
                #expect(error.line > 0, "no line for \(error)")
            }
            return
        }
        // Same app IDs for every service.
        let regenerated = generated.file
        #expect(Set(regenerated.webCredentials ?? []) == Set(original.webCredentials ?? []))
        #expect(Set(regenerated.appClips ?? []) == Set(original.appClips ?? []))
        #expect(Set(regenerated.activityContinuation ?? []) == Set(original.activityContinuation ?? []))
        let originalApps = Set((original.applinks?.details ?? []).filter { Self.claimsSomething($0) }.flatMap(\.modernAppIDs))
        let regeneratedApps = Set((regenerated.applinks?.details ?? []).flatMap(\.modernAppIDs))
        #expect(originalApps == regeneratedApps)
        // Same rules, in order, for every entry that claims something.
        let originalRules = (original.applinks?.details ?? []).filter { Self.claimsSomething($0) }.map { details in
            details.components ?? (details.paths ?? []).map(AssociationImporter.rule(fromLegacyPath:))
        }
        let regeneratedRules = (regenerated.applinks?.details ?? []).compactMap(\.components)
        #expect(originalRules.map { $0.map(Self.withoutComment) } == regeneratedRules.map { $0.map(Self.withoutComment) })
        #expect((config.universalLinks?.apps.count ?? 0) == regeneratedRules.count)
    }

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
                refused[output.diagnostics.errors.first?.rule ?? "?", default: 0] += 1
                if ProcessInfo.processInfo.environment["AASA_VERBOSE"] == "1" {
                    print(output.diagnostics.errors.first?.description ?? "?")
                }
            }
        }
        print("corpus import: \(imported) imported, \(Self.files.count - imported) refused; by first error: \(refused.sorted { $0.key < $1.key })")
        #expect(imported + refused.values.reduce(0, +) == Self.files.count)
        #expect(imported > 60)
    }
}
