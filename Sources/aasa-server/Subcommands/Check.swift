import AASACore
import AASAServer
import ArgumentParser
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `aasa-server check`: every mistake in the configs (or in any Apple file) before it is published.
struct Check: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract:
            "Check every domain's site.json and certificate, or lint an Apple-format file, reporting every finding.",
        discussion: """
            Findings are compiler-style, one per line:
              path:line:column: error|warning: [rule-id] message (at key.path); fix: hint
            Exit status 1 when there are errors (or warnings with --strict), else 0.

            Examples:
              aasa-server check
              aasa-server check --config site-config --certs certs --strict
              aasa-server check --aasa apple-app-site-association --format json
              aasa-server check --acme-dns-names '*' --acme-dns-zone acme.provider.example \\
                --acme-dns-server ns1.provider.example:53 --acme-dns-tsig-key-file acme.key
            With the dns-01 options of `serve --acme`, each dns-01 domain's _acme-challenge delegation is looked up: a \
            note says where its record is written, an error names the CNAME its owner must add.
            """)

    /// Output formats.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    @OptionGroup var configOptions: OptionalConfigOptions

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Certificate folder to check with --config (default: certs; env: \(EnvironmentVariable.certs)).",
            valueName: "dir")
    )
    var certs: String?

    @Option(name: .long, help: ArgumentHelp("Lint this Apple-format file instead of the configs.", valueName: "file"))
    var aasa: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Lint this assetlinks.json instead: the dynamic rules Android 15+ would discard.", valueName: "file"))
    var assetlinks: String?

    @Flag(help: "Treat warnings as errors (notes stay notes).")
    var strict = false

    @Flag(help: "Skip the certificate checks.")
    var noCertificates = false

    @Option(help: ArgumentHelp("Output format: text or json.", valueName: "format"))
    var format: Format = .text

    /// With dns-01 options, each dns-01 domain's delegation is looked up and reported.
    @OptionGroup(title: "dns-01") var dnsOptions: ACMEDNSOptions

    func validate() throws {
        if aasa != nil && (configOptions.config != nil || certs != nil) {
            throw ValidationError("--aasa lints one file; it does not take --config or --certs")
        }
        if assetlinks != nil && (aasa != nil || configOptions.config != nil || certs != nil) {
            throw ValidationError("--assetlinks lints one file; it does not take --aasa, --config or --certs")
        }
    }

    func run() throws {
        var diagnostics: [Diagnostic] = []
        var checked = 0
        if let aasa {
            guard let data = FileManager.default.contents(atPath: aasa) else {
                throw failure([Diagnostic(.error, rule: .missingFile, "cannot read '\(aasa)'", file: aasa)])
            }
            diagnostics = AssociationChecker().check(SourceText(name: aasa, bytes: Array(data)))
            checked = 1
        } else if let assetlinks {
            guard let data = FileManager.default.contents(atPath: assetlinks) else {
                throw failure([Diagnostic(.error, rule: .missingFile, "cannot read '\(assetlinks)'", file: assetlinks)])
            }
            diagnostics = AssetLinksChecker().check(SourceText(name: assetlinks, bytes: Array(data)))
            checked = 1
        } else {
            let directory = configOptions.directory
            let loaded: [LoadedDomain]
            do {
                // As the server reads them: no file of the certificate folder is read for a domain.
                loaded = try SiteConfigLoader().loadAll(
                    directory: directory, excluding: [certs ?? Environment.value(.certs, "certs")])
            } catch {
                throw failure([error])
            }
            // Signing identities are checked by signing, as the server would (spec §4).
            diagnostics = AssociationSigner(certificateDirectory: certs ?? Environment.value(.certs, "certs")).sign(
                loaded
            ).flatMap(\.diagnostics)
            if !noCertificates {
                diagnostics += CertificateCheck(directory: certs ?? Environment.value(.certs, "certs")).check(
                    domains: loaded.map(\.domain))
            }
            if let dns = try? dnsOptions.settings() {
                diagnostics += DNSDelegationCheck(settings: dns).check(domains: loaded.map(\.domain))
            }
            checked = loaded.count
        }
        report(diagnostics, checked: checked)
        let failing = diagnostics.hasErrors || (strict && diagnostics.contains { $0.severity != .note })
        if failing { throw ExitCode(1) }
    }

    private func failure(_ diagnostics: [Diagnostic]) -> ExitCode {
        report(diagnostics, checked: 0)
        return ExitCode(1)
    }

    private func report(_ diagnostics: [Diagnostic], checked: Int) {
        switch format {
        case .json:
            print(JSONWriter(style: .pretty).string(.array(Self.capped(diagnostics))), terminator: "")
        case .text:
            let colour = isatty(1) != 0
            for diagnostic in diagnostics { print(DiagnosticPrinter.render(diagnostic, colour: colour)) }
            let errors = diagnostics.errors.count
            let warnings = diagnostics.warnings.count
            let what = aasa == nil && assetlinks == nil ? "\(checked) domain\(checked == 1 ? "" : "s")" : "1 file"
            print("\(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s") in \(what)")
        }
    }
}

extension Check {
    /// The findings of one file `--format json` lists in full; the rest are counted by rule.
    static let maximumListedPerFile = 100

    /// `diagnostics` as `--format json` lists them: per file, the first ``maximumListedPerFile`` in full, then one
    /// object per rule of the rest, whose `more` is how many of them there are (its severity the worst among them),
    /// so the output is bounded by the rule catalogue, not by the file.
    static func capped(_ diagnostics: [Diagnostic]) -> [JSONNode] {
        var files: [String?] = []
        var byFile: [String?: [Diagnostic]] = [:]
        for diagnostic in diagnostics {
            if byFile[diagnostic.file] == nil { files.append(diagnostic.file) }
            byFile[diagnostic.file, default: []].append(diagnostic)
        }
        return files.flatMap { file in
            let capped = CappedFindings(byFile[file] ?? [], shown: maximumListedPerFile)
            return capped.shown.map { JSONNode($0.jsonValue) }
                + capped.more.map { more in
                    var pairs: [(String, JSONValue)] = [
                        ("severity", .string(more.severity.rawValue)), ("rule", .string(more.rule.id)),
                        (
                            "message",
                            .string(
                                "\(more.count) more finding\(more.count == 1 ? "" : "s") of \(more.rule.id), not listed"
                            )
                        ),
                    ]
                    if let file { pairs.append(("file", .string(file))) }
                    pairs.append(("more", .number(Double(more.count))))
                    return JSONNode(.members(pairs))
                }
        }
    }
}

extension Diagnostic {
    /// The finding as a JSON object for `--format json`.
    var jsonValue: JSONValue {
        var pairs: [(String, JSONValue)] = [("severity", .string(severity.rawValue)), ("rule", .string(rule.id))]
        pairs.append(("message", .string(message)))
        if let file { pairs.append(("file", .string(file))) }
        if line > 0 {
            pairs.append(("line", .number(Double(line))))
            pairs.append(("column", .number(Double(column))))
        }
        if let keyPath, !keyPath.isEmpty { pairs.append(("keyPath", .string(keyPath))) }
        if let hint { pairs.append(("hint", .string(hint))) }
        return .members(pairs)
    }
}
