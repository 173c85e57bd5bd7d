import AASACore
import AASAServer
import ArgumentParser
import Foundation

/// `aasa-server diff OLD NEW` / `aasa-server diff --git REV`: what a config change does to real URLs.
struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Say which URLs move between the app and the web when a config changes.",
        discussion: """
            OLD and NEW are each a config folder, a domain's site.json or an Apple-format file (told apart by what \
            they are). With --git REV, the config folder at that git revision (read from the repository, no \
            checkout) is compared with the working tree. For each domain and platform (iOS 13+; iOS 9-12 with \
            --legacy; Android 15+ when a package has dynamic rules on both sides) the classes of URLs whose answer \
            changes are listed, each with its kind (web-to-app, app-to-web, app-to-app), a description, example URLs \
            checked with the matcher against both versions, and the rules that decide it before and after. Changes \
            to webcredentials, appclips, activitycontinuation, authsrv, Android packages and fingerprints, and to \
            the legacy form, signing and cacheControl are listed too. The comparison is exact: "no URL changes its \
            answer" holds for every URL, not a sample.

            Exit status: 0, or 1 when a change of a kind named by --fail-on exists; 2 on bad input (a side that \
            does not load, reported as `check` reports it, naming the side).

            Examples:
              aasa-server diff site-config.old site-config
              aasa-server diff old/shop.example/site.json site-config/shop.example/site.json --json
              aasa-server diff --git origin/main --fail-on app-to-web,app-to-app
            """)

    @Argument(help: ArgumentHelp("The old and new config folder, site.json or Apple-format file.", valueName: "path"))
    var paths: [String] = []

    @Option(
        name: .customLong("git"),
        help: ArgumentHelp(
            "Compare the config folder at this git revision with the working tree.", valueName: "rev"))
    var revision: String?

    @OptionGroup var configOptions: OptionalConfigOptions

    @Flag(help: "One JSON object per domain, one per line.")
    var json = false

    @Flag(help: "Also compare iOS 9-12's answers (legacy appID and paths).")
    var legacy = false

    @Option(
        name: .customLong("fail-on"),
        help: ArgumentHelp(
            "Exit 1 when a change of these kinds exists (web-to-app, app-to-web, app-to-app; comma-separated).",
            valueName: "kinds"))
    var failOn: String?

    func validate() throws {
        if revision != nil {
            if !paths.isEmpty { throw ValidationError("--git compares the working tree; give no paths with it") }
        } else {
            if paths.count != 2 { throw ValidationError("give OLD and NEW, or --git REV") }
            if configOptions.config != nil { throw ValidationError("--config goes with --git") }
        }
        _ = try failingKinds()
    }

    private func failingKinds() throws -> Set<URLChange.Kind> {
        guard let failOn else { return [] }
        var kinds: Set<URLChange.Kind> = []
        for name in failOn.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            guard let kind = URLChange.Kind(rawValue: name) else {
                throw ValidationError(
                    "--fail-on: '\(name)' is not a kind of change (web-to-app, app-to-web, app-to-app)")
            }
            kinds.insert(kind)
        }
        return kinds
    }

    func run() throws {
        let (old, new, labels) = try inputs()
        var badInput = false
        for (label, input) in [(labels.old, old), (labels.new, new)] {
            for failure in input.failures {
                let domain = failure.domain.map { " (\($0))" } ?? ""
                DiagnosticPrinter.printError("error: the \(label) side\(domain) does not load:")
                DiagnosticPrinter.print(failure.diagnostics)
                badInput = true
            }
            for failing in input.failingTests {
                DiagnosticPrinter.printError(
                    "warning: the \(label) side's link tests fail for \(failing.domain) (the server would not publish it):"
                )
                DiagnosticPrinter.print(failing.diagnostics)
            }
        }
        // A side that did not load at all (a missing folder) is not a side whose domains were all removed.
        if (old.failures + new.failures).contains(where: { $0.domain == nil }) { throw ExitCode(2) }
        let pairs = Self.pair(old, new)
        // Two Apple-format files name no domain: their examples use example.com.
        let host = old.kind == .appleFile && new.kind == .appleFile ? "example.com" : nil
        var diffs: [DomainDiff] = []
        for (domain, sides) in pairs {
            switch sides {
            case (let before?, let after?):
                diffs.append(DomainDiff(domain: domain, old: before, new: after, legacy: legacy, host: host))
            case (nil, _?):
                if !old.failures.contains(where: { $0.domain == domain }) { print(added(domain, true)) }
            case (_?, nil):
                if !new.failures.contains(where: { $0.domain == domain }) { print(added(domain, false)) }
            case (nil, nil):
                break
            }
        }
        for diff in diffs { print(json ? diff.json : diff.report) }
        if badInput { throw ExitCode(2) }
        let failing = try failingKinds()
        let gated = diffs.flatMap(\.changes).filter { failing.contains($0.kind) }
        if !gated.isEmpty {
            let kinds = Set(gated.map(\.kind.rawValue)).sorted().joined(separator: ", ")
            DiagnosticPrinter.printError(
                "diff: \(gated.count) change\(gated.count == 1 ? "" : "s") of a kind --fail-on names (\(kinds))")
            throw ExitCode(1)
        }
        // A comparison its budget stopped cannot show that no such change exists.
        let unsure = diffs.filter { !$0.isComplete }.map(\.domain)
        if !failing.isEmpty && !unsure.isEmpty {
            DiagnosticPrinter.printError(
                "diff: \(unsure.joined(separator: ", ")) \(DomainDiff.tooComplex): a change of a kind --fail-on names may exist (the comparison's limits are in docs/configuration.md#the-comparisons-budget)"
            )
            throw ExitCode(1)
        }
    }

    private func added(_ domain: String, _ isNew: Bool) -> String {
        if json {
            return "{\"domain\":\(JSONText.quote(domain)),\"status\":\"\(isNew ? "added" : "removed")\"}"
        }
        return "\(domain): \(isNew ? "added" : "removed") (every URL's answer is the new config's)"
    }

    /// The two sides, with how to name them.
    private func inputs() throws -> (DiffInput, DiffInput, (old: String, new: String)) {
        guard let revision else {
            return (DiffInput.load(paths[0]), DiffInput.load(paths[1]), ("old (\(paths[0]))", "new (\(paths[1]))"))
        }
        let directory = configOptions.directory
        let snapshot: GitRevisionFolder
        do {
            snapshot = try GitRevisionFolder(revision: revision, directory: directory)
        } catch {
            DiagnosticPrinter.printError("error: \(error.description)")
            throw ExitCode(2)
        }
        defer { snapshot.remove() }
        return (
            DiffInput.folder(snapshot.path), DiffInput.folder(directory),
            ("old (\(directory) at \(revision))", "new (\(directory))")
        )
    }

    /// Domains side by side. Two single files compare with each other whatever their names; otherwise by domain.
    static func pair(_ old: DiffInput, _ new: DiffInput) -> [(String, (DiffSide?, DiffSide?))] {
        if old.kind != .folder, new.kind != .folder, old.sides.count == 1, new.sides.count == 1 {
            let name = new.kind == .siteFile ? new.sides.keys.first! : old.sides.keys.first!
            return [(name, (old.sides.values.first, new.sides.values.first))]
        }
        let names = Set(old.sides.keys).union(new.sides.keys).union(
            (old.failures + new.failures).compactMap(\.domain))
        return names.sorted().map { ($0, (old.sides[$0], new.sides[$0])) }
    }
}
