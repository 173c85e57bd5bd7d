public import AASACore
import Foundation

/// One side of `aasa-server diff`: a config folder, one domain's site.json, or an Apple-format file, told apart
/// by what the path is, loaded into what each domain serves.
public struct DiffInput: Sendable {
    /// What the path turned out to be.
    public enum Kind: Sendable {
        case folder
        case siteFile
        case appleFile
    }

    public var kind: Kind
    /// Each domain that loaded, by name; an Apple-format file has one entry named after the file.
    public var sides: [String: DiffSide] = [:]
    /// What did not load, compiler-style (as `check` says it), with the domain it belongs to when known.
    public var failures: [(domain: String?, diagnostics: [Diagnostic])] = []
    /// Domains compared although their link tests fail (the server would not publish them), with the failures.
    public var failingTests: [(domain: String, diagnostics: [Diagnostic])] = []

    /// Loads `path`.
    public static func load(_ path: String) -> DiffInput {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            return DiffInput(
                kind: .appleFile,
                failures: [(nil, [Diagnostic(.error, rule: .missingFile, "no such file or folder", file: path)])])
        }
        if isDirectory.boolValue { return folder(path) }
        guard let data = FileManager.default.contents(atPath: path), data.count <= SiteConfigLoader.maximumConfigBytes
        else {
            return DiffInput(
                kind: .appleFile,
                failures: [
                    (
                        nil,
                        [
                            Diagnostic(
                                .error, rule: .fileUnreadable, "cannot read it, or it is larger than 1 MiB", file: path)
                        ]
                    )
                ])
        }
        let source = SourceText(name: path, bytes: Array(data))
        let root = try? JSONParser().parse(source).root.value
        let siteKeys: Set<String> = [
            "universalLinks", "webCredentials", "appClips", "handoff", "android", "legacyFormat", "$schema",
            "smartAppBanner", "pages", "signing", "tests",
        ]
        let keys: Set<String> = if case .object(let members)? = root { Set(members.map(\.key)) } else { [] }
        if (path as NSString).lastPathComponent == SiteConfigLoader.fileName || !keys.isDisjoint(with: siteKeys) {
            let domain = ((path as NSString).deletingLastPathComponent as NSString).lastPathComponent
            var input = DiffInput(kind: .siteFile)
            input.add(SiteConfigLoader().loadDomain(domain: domain, file: path))
            return input
        }
        guard let root else {
            // Why it is not JSON, as `check --aasa` says it.
            let findings = AssociationChecker().check(source).filter { $0.severity == .error }
            return DiffInput(
                kind: .appleFile,
                failures: [
                    (
                        nil,
                        findings + [
                            Diagnostic(.error, rule: .invalidJSON, "not JSON: iOS ignores the whole file", file: path)
                        ]
                    )
                ])
        }
        var input = DiffInput(kind: .appleFile)
        input.sides[(path as NSString).lastPathComponent] = DiffSide(
            appleFile: AssociationFile.readAsDevice(root).file)
        return input
    }

    /// Every domain folder of `directory`.
    public static func folder(_ directory: String) -> DiffInput {
        var input = DiffInput(kind: .folder)
        do {
            for domain in try SiteConfigLoader().loadAll(directory: directory) { input.add(domain) }
        } catch {
            input.failures.append((nil, [error]))
        }
        return input
    }

    private mutating func add(_ domain: LoadedDomain) {
        if let side = DiffSide(loaded: domain) {
            sides[domain.domain] = side
            let errors = domain.diagnostics.errors
            if !errors.isEmpty { failingTests.append((domain.domain, errors)) }
        } else {
            failures.append((domain.domain, domain.diagnostics.filter { $0.severity == .error }))
        }
    }
}
