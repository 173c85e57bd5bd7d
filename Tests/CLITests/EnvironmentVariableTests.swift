import AASATestSupport
import Foundation
import Testing

/// Each `AASA_SERVER_*` variable is declared once in the executable's sources, as `static let name: Self =
/// "AASA_SERVER_…"` in an `extension EnvironmentVariable` beside its option, and everything that names it takes the
/// name from there: the help of its option, the errors about its value, the docs.
@Suite struct EnvironmentVariableTests {
    /// A variable as its declaration gives it.
    struct Declared: CustomTestStringConvertible, Sendable {
        /// The full name, e.g. `AASA_SERVER_HTTPS_PORT`.
        var name: String
        /// Where it is declared, `Sources/…/File.swift:12`.
        var place: String

        /// The `serve` option it backs: `AASA_SERVER_HTTPS_PORT` backs `--https-port`.
        var option: String {
            "--" + String(name.dropFirst("AASA_SERVER_".count).lowercased().map { $0 == "_" ? "-" : $0 })
        }
        var testDescription: String { name }
    }

    /// What a scan of `Sources/` finds: the declarations, and every other line of code that spells a variable's name.
    struct Scan: Sendable {
        var declared: [Declared] = []
        var strays: [String] = []
    }

    /// Scans every Swift file under `Sources/`; comments may mention variables, code names them only by declaration.
    static func scanSources() -> Scan {
        let sources = RepositoryPaths.root + "/Sources"
        var scan = Scan()
        let files = (FileManager.default.subpaths(atPath: sources) ?? []).filter { $0.hasSuffix(".swift") }.sorted()
        for file in files {
            guard let text = try? String(contentsOfFile: sources + "/" + file, encoding: .utf8) else { continue }
            for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let code = line.trimmingCharacters(in: .whitespaces)
                guard code.contains("AASA_SERVER_"), !code.hasPrefix("//") else { continue }
                let place = "Sources/\(file):\(index + 1)"
                if file.hasSuffix("EnvironmentVariable.swift") && code == #"static let prefix = "AASA_SERVER_""# {
                    continue
                }
                if let name = declaredName(code) {
                    scan.declared.append(Declared(name: name, place: place))
                } else {
                    scan.strays.append("\(place): \(code)")
                }
            }
        }
        return scan
    }

    /// The name in `static let identifier: Self = "AASA_SERVER_NAME"`, or `nil` when `line` is not such a declaration.
    static func declaredName(_ line: String) -> String? {
        guard line.hasPrefix("static let "), let equals = line.range(of: #": Self = ""#) else { return nil }
        let identifier = line[line.index(line.startIndex, offsetBy: 11)..<equals.lowerBound]
        let literal = line[equals.upperBound...]
        guard !identifier.isEmpty, identifier.allSatisfy({ $0.isLetter || $0.isNumber }), literal.hasSuffix("\""),
            literal.hasPrefix("AASA_SERVER_")
        else { return nil }
        let name = String(literal.dropLast())
        let suffix = name.dropFirst("AASA_SERVER_".count)
        guard !suffix.isEmpty, suffix.allSatisfy({ $0 == "_" || $0.isNumber || ($0.isUppercase && $0.isLetter) })
        else { return nil }
        return name
    }

    static let declared = scanSources().declared

    /// Whether `text` holds `name` as a whole name (not as the start of a longer one, `AASA_SERVER_ACME_EMAIL`).
    static func holds(_ text: some StringProtocol, _ name: String) -> Bool {
        var rest = text[...]
        while let range = rest.range(of: name) {
            let next = rest[range.upperBound...].first
            if !(next.map { $0 == "_" || $0.isLetter || $0.isNumber } ?? false) { return true }
            rest = rest[range.upperBound...]
        }
        return false
    }

    /// The commands whose options may read a variable.
    static let commands: [[String]] = [
        ["serve"], ["check"], ["match"], ["import"], ["sign"], ["certs", "dev"], ["certs", "acme"], ["cdn"],
        ["healthcheck"], ["shards", "nginx"], ["diff"], ["store", "init"], ["store", "push"], ["store", "pull"],
    ]

    /// Each option's entries in the commands' help (its line and the lines of its help below it), by the option's
    /// name: `--https-port` → [`serve`'s entry].
    static let helpEntries: [String: [String]] = {
        var entries: [String: [String]] = [:]
        for command in commands {
            let help = try? Command.run(
                RepositoryPaths.executable, command + ["--help"], environment: ["COLUMNS": "2000"])
            var current: (option: String, text: String)?
            for line in (help?.stdout ?? "").split(separator: "\n").map(String.init) + [""] {
                if let entry = current, line.hasPrefix("      ") {
                    current = (entry.option, entry.text + "\n" + line)
                    continue
                }
                if let entry = current { entries[entry.option, default: []].append(entry.text) }
                current = nil
                if line.hasPrefix("  -") {
                    let option = line.drop { $0 == " " }.prefix { $0 != " " && $0 != "," }
                    current = (String(option), String(line))
                }
            }
        }
        return entries
    }()

    @Test func theSourcesNameEachVariableOnlyInItsOneDeclaration() {
        let scan = Self.scanSources()
        #expect(
            scan.strays.isEmpty, "name these through their EnvironmentVariable:\n\(scan.strays.joined(separator: "\n"))"
        )
        #expect(scan.declared.count >= 40, "the scan found \(scan.declared.count) declarations")
        for (name, places) in Dictionary(grouping: scan.declared, by: \.name) where places.count > 1 {
            Issue.record("\(name) is declared \(places.count) times: \(places.map(\.place).joined(separator: ", "))")
        }
    }

    /// The help of the option a variable backs names it, `(env: AASA_SERVER_HTTPS_PORT)` (`=1)` for a flag), in
    /// every command whose option takes a variable (`certs acme --http-port` is its listener's, and takes none).
    @Test(arguments: declared)
    func theHelpOfItsOptionNamesTheVariable(variable: Declared) throws {
        let entries = Self.helpEntries[variable.option] ?? []
        #expect(
            entries.contains { Self.holds($0, "env: \(variable.name)") },
            "no command's \(variable.option) names \(variable.name) (declared at \(variable.place)): \(entries)")
        for entry in entries where entry.contains("env: ") {
            #expect(Self.holds(entry, "env: \(variable.name)"), "\(entry)")
        }
    }

    /// docs/operations.md names every variable: in full, as `_NAME` in the list of variables, or as (`NAME`) in an
    /// options table whose header says the names begin with `AASA_SERVER_`.
    @Test(arguments: declared)
    func theOperationsGuideNamesTheVariable(variable: Declared) throws {
        let guide = try String(contentsOfFile: RepositoryPaths.root + "/docs/operations.md", encoding: .utf8)
        let suffix = variable.name.dropFirst("AASA_SERVER_".count)
        let forms = ["`_\(suffix)`", "`_\(suffix)=", "(`\(suffix)`)", "(`\(suffix)=1`)"]
        #expect(
            Self.holds(guide, variable.name) || forms.contains { guide.contains($0) },
            "docs/operations.md does not name \(variable.name) (declared at \(variable.place))")
    }

    /// The docs, the container file and the manifests name only variables that exist.
    @Test func theDocsAndManifestsNameOnlyDeclaredVariables() throws {
        let root = RepositoryPaths.root
        let declared = Set(Self.declared.map(\.name))
        var files = ["README.md", "CONTRIBUTING.md", "Dockerfile"]
        files += (FileManager.default.subpaths(atPath: root + "/docs") ?? []).filter { $0.hasSuffix(".md") }
            .map { "docs/" + $0 }
        files += (FileManager.default.subpaths(atPath: root + "/deploy") ?? []).filter { $0.hasSuffix(".yaml") }
            .map { "deploy/" + $0 }
        var named = 0
        for file in files {
            let text = try String(contentsOfFile: root + "/" + file, encoding: .utf8)
            var rest = text[...]
            while let range = rest.range(of: "AASA_SERVER_") {
                let name =
                    "AASA_SERVER_" + rest[range.upperBound...].prefix { $0 == "_" || $0.isUppercase || $0.isNumber }
                rest = rest[range.upperBound...]
                let trimmed = String(name.reversed().drop { $0 == "_" }.reversed())
                guard trimmed.count > "AASA_SERVER".count else { continue }  // `AASA_SERVER_*`, `AASA_SERVER_…`
                named += 1
                #expect(declared.contains(trimmed), "\(file) names \(trimmed), which no option reads")
            }
        }
        #expect(named > 20, "the docs name \(named) variables")
    }

    /// An error about a value names the variable it came from, whichever way the option reads it (a default, an
    /// optional value, a list, a flag); a flag on the command line wins over the variable and is not blamed on it.
    @Test(arguments: [
        (
            ["AASA_SERVER_MAX_REQUEST_HEAD": "1"], ["serve"],
            "--max-request-head must be between 4096 and 1048576 bytes (the value comes from AASA_SERVER_MAX_REQUEST_HEAD)"
        ),
        (
            ["AASA_SERVER_THREADS": "0"], ["serve"],
            "--threads must be at least 1 (the value comes from AASA_SERVER_THREADS)"
        ),
        (
            ["AASA_SERVER_CERTIFICATE_CACHE": "-1"], ["serve"],
            "--certificate-cache must be between 0 and 100000000 certificates (the value comes from "
                + "AASA_SERVER_CERTIFICATE_CACHE)"
        ),
        (
            ["AASA_SERVER_RESPONSE_CACHE": "-1"], ["serve"],
            "--response-cache must be between 0 and 100000000 responses (the value comes from "
                + "AASA_SERVER_RESPONSE_CACHE)"
        ),
        (
            ["AASA_SERVER_ADMIN_HOST": "ok.example, bad host"], ["serve"],
            "--admin-host 'bad host' is not a host name (the value comes from AASA_SERVER_ADMIN_HOST)"
        ),
        (
            ["AASA_SERVER_ACME": "yes"], ["serve"],
            "or validate every name with dns-01 (--acme-dns-names '*') (the value comes from AASA_SERVER_ACME)"
        ),
        (
            ["AASA_SERVER_ACME": "1", "AASA_SERVER_HTTP_PORT": "8080", "AASA_SERVER_ACME_EMAIL": "ops"], ["serve"],
            "--acme-email 'ops' is not an email address (name@example.com) (the value comes from AASA_SERVER_ACME_EMAIL)"
        ),
        (
            ["AASA_SERVER_ACME_RENEW_BEFORE": "-1"], ["certs", "acme", "a.example"],
            "--acme-renew-before must be a positive number of days (the value comes from AASA_SERVER_ACME_RENEW_BEFORE)"
        ),
        (["AASA_SERVER_THREADS": "4"], ["serve", "--threads", "0"], "Error: --threads must be at least 1\n"),
        (["AASA_SERVER_IDLE_TIMEOUT": "soon"], ["serve"], "AASA_SERVER_IDLE_TIMEOUT=soon is not a valid Int"),
        (["AASA_SERVER_ADMIN_PORT": "x"], ["healthcheck"], "AASA_SERVER_ADMIN_PORT=x is not a valid UInt16"),
    ])
    func anErrorNamesTheVariableItsValueCameFrom(environment: [String: String], arguments: [String], message: String)
        throws
    {
        let directory = TemporaryDirectory()
        let output = try Command.run(
            RepositoryPaths.executable, arguments, currentDirectory: directory.path, environment: environment)
        #expect(output.status == 64, "\(output.stderr)")
        #expect(output.stderr.contains(message), "\(output.stderr)")
    }
}
