import AASATestSupport
import Foundation
import Testing

@testable import AASACore

/// The 40 real-world assetlinks.json files of the corpus: each either imports and regenerates with the
/// same packages, fingerprints and relations, or is refused with a located, precise message.
@Suite struct AssetLinksCorpusTests {
    static let folder = RepositoryPaths.corpus + "/assetlinks"
    static let files = RepositoryPaths.files(in: folder, endingWith: ".json")

    /// What Android would take from a statement list: package → (fingerprint, relation) pairs, for the
    /// relations and targets the android section supports, plus the dynamic rules per package.
    static func delegations(_ root: JSONNode) -> [String: Set<String>] {
        var result: [String: Set<String>] = [:]
        let statements: [JSONNode] =
            switch root.value {
            case .array(let elements): elements
            case .object: [root]
            default: []
            }
        for statement in statements {
            guard case .object(let members) = statement.value,
                let target = members.first(where: { $0.key == "target" }),
                case .object(let fields) = target.value.value,
                case .string(let package)? = fields.first(where: { $0.key == "package_name" })?.value.value,
                case .array(let prints)? = fields.first(where: { $0.key == "sha256_cert_fingerprints" })?.value.value,
                case .array(let relations)? = members.first(where: { $0.key == "relation" })?.value.value
            else { continue }
            for relation in relations {
                guard case .string(let name) = relation.value,
                    [AssetLinksGenerator.handleAllURLs, AssetLinksGenerator.getLoginCredentials].contains(name)
                else { continue }
                for print in prints {
                    guard case .string(let text) = print.value else { continue }
                    result[package, default: []].insert((CertificateFingerprint.normalized(text) ?? text) + " " + name)
                }
            }
            if let extensions = members.first(where: { $0.key == "relation_extensions" }) {
                result[package, default: []].insert("extensions " + JSONWriter().string(extensions.value.value))
            }
        }
        return result
    }

    enum Outcome: String { case imported, importedWithWarnings, refused }

    static func run(_ name: String) throws -> (Outcome, ImportPipeline.Output, SourceText) {
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)))
        let source = SourceText(name: "assetlinks/" + name, bytes: bytes)
        let output = AssetLinksImportPipeline().run(source, domain: "example.com", existing: nil)
        let outcome: Outcome =
            output.config == nil ? .refused : output.diagnostics.isEmpty ? .imported : .importedWithWarnings
        return (outcome, output, source)
    }

    @Test func theCorpusHasFortyFilesAllDetectedAsAssetLinks() throws {
        #expect(Self.files.count == 40)
        for name in Self.files {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.folder + "/" + name)))
            #expect(AssetLinksImporter.looksLikeAssetLinks(SourceText(name: name, bytes: bytes)), "\(name)")
        }
    }

    @Test(arguments: files)
    func eachFileRoundTripsOrIsRefusedPrecisely(name: String) throws {
        let (outcome, output, source) = try Self.run(name)
        switch outcome {
        case .refused:
            let errors = output.diagnostics.errors
            #expect(!errors.isEmpty, "\(name): refused without an error")
            for error in errors {
                #expect(error.file == source.name, "\(name): \(error)")
                #expect(error.line > 0, "\(name): \(error)")
            }
        case .imported, .importedWithWarnings:
            let config = try #require(output.config)
            let original = try JSONParser().parse(source).root
            let regenerated = try #require(
                SiteConfigLoader().loadDomain(
                    domain: "example.com",
                    source: SourceText(name: "site.json", bytes: JSONWriter().bytes(config.jsonValue(schema: nil)))
                ).assetLinks)
            let again = try JSONParser().parse(SourceText(name: "out", bytes: regenerated.bytes)).root
            #expect(Self.delegations(again) == Self.delegations(original), "\(name)")
            for warning in output.diagnostics {
                #expect(warning.severity == .warning && warning.line > 0, "\(name): \(warning)")
            }
        }
    }

    /// The counts reported for the issue; a change here means the importer's behaviour changed.
    @Test func corpusOutcomeCounts() throws {
        var counts: [Outcome: Int] = [:]
        var rules: [String: Int] = [:]
        for name in Self.files {
            let (outcome, output, _) = try Self.run(name)
            counts[outcome, default: 0] += 1
            for diagnostic in output.diagnostics { rules[diagnostic.rule.id, default: 0] += 1 }
        }
        print(
            "assetlinks corpus: \(counts[.imported] ?? 0) imported cleanly, \(counts[.importedWithWarnings] ?? 0) with warnings, "
                + "\(counts[.refused] ?? 0) refused; findings by rule: \(rules.sorted { $0.key < $1.key })")
        let total: Int = counts.values.reduce(0, +)
        #expect(total == 40)
        // 039.json's dynamic rules become the app's own `rules`, written for Android: no Apple rule reads them, so
        // no `android-wildcard-differs` warning.
        #expect(counts[.imported] == 12 && counts[.importedWithWarnings] == 16 && counts[.refused] == 12, "\(counts)")
        #expect(rules["android-wildcard-differs"] == nil)
    }
}
