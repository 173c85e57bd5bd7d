import AASACore
import ArgumentParser
import Foundation

/// `aasa-server match URL...`: which app opens each URL, which rule decided, and why not.
struct Match: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Say which app opens each URL, which rule decided, and why.",
        discussion: """
            With --config, each URL's host picks the domain and its generated file is evaluated, exactly as \
            served. With --aasa, any Apple-format file is evaluated, whatever its origin. Exit status is 0 \
            whatever the verdict, and 2 on bad input.

            Examples:
              aasa-server match https://shop.example/buy/shoes https://shop.example/help/x
              aasa-server match --aasa apple-app-site-association --legacy https://example.com/videos/wwdc/2015/x
              aasa-server match --json https://links.example/r/abc
            """)

    @Argument(help: ArgumentHelp("URLs to evaluate, e.g. https://shop.example/buy/1.", valueName: "url"))
    var urls: [String]

    @OptionGroup var configOptions: OptionalConfigOptions

    @Option(
        name: .long,
        help: ArgumentHelp("An Apple-format apple-app-site-association file to evaluate instead.", valueName: "file"))
    var aasa: String?

    @Flag(help: "Evaluate as iOS 12 and earlier do: legacy appID and paths only.")
    var legacy = false

    @Flag(help: "One JSON object per URL, one per line.")
    var json = false

    func validate() throws {
        if configOptions.config != nil && aasa != nil {
            throw ValidationError("use either --config or --aasa, not both")
        }
        if urls.isEmpty { throw ValidationError("give at least one URL") }
    }

    func run() throws {
        let mode: MatchMode = legacy ? .legacy : .modern
        var badInput = false
        var fileMatcher: URLMatcher?
        var sites: [String: (matcher: URLMatcher, detailsSource: [Int?])] = [:]
        if let aasa {
            guard let data = FileManager.default.contents(atPath: aasa) else {
                DiagnosticPrinter.printError("error: cannot read '\(aasa)'")
                throw ExitCode(2)
            }
            let (file, _, diagnostics) = AssociationFile.parse(SourceText(name: aasa, bytes: Array(data)))
            DiagnosticPrinter.print(diagnostics)
            guard let file else { throw ExitCode(2) }
            fileMatcher = URLMatcher(file: file, mode: mode)
            DiagnosticPrinter.print(
                fileMatcher?.compileDiagnostics.map {
                    Diagnostic(.warning, rule: $0.code.rule, $0.message, file: aasa, keyPath: $0.path)
                } ?? [])
        } else {
            let directory = configOptions.directory
            let loaded: [LoadedDomain]
            do {
                loaded = try SiteConfigLoader().loadAll(directory: directory)
            } catch {
                DiagnosticPrinter.print([error])
                throw ExitCode(2)
            }
            for domain in loaded {
                guard domain.isPublishable, let generated = domain.generated else { continue }
                sites[domain.domain] = (URLMatcher(file: generated.file, mode: mode), generated.detailsSource)
            }
        }
        for url in urls {
            let matcher: URLMatcher
            var detailsSource: [Int?]?
            if let fileMatcher {
                matcher = fileMatcher
            } else {
                let host = (try? MatchURL(parsing: url))?.host.flatMap(HostName.normalized)
                guard let host, let site = sites[host] else {
                    DiagnosticPrinter.printError(
                        "error: \(url): no domain folder for '\(host ?? url)' in \(configOptions.directory) (or its site.json has errors)"
                    )
                    badInput = true
                    continue
                }
                matcher = site.matcher
                detailsSource = site.detailsSource
            }
            let result = matcher.match(url)
            if result.verdict == .invalidURL { badInput = true }
            if json {
                print(result.json())
            } else {
                print(Self.humanReport(result, detailsSource: detailsSource))
            }
        }
        if badInput { throw ExitCode(2) }
    }

    /// The verdict, the apps, the deciding rule with its position (in site.json terms with --config), and
    /// for a miss the closest rules and why each failed.
    static func humanReport(_ result: MatchResult, detailsSource: [Int?]?) -> String {
        var lines = ["\(result.url)", "  verdict: \(result.verdict.rawValue)"]
        if !result.appIDs.isEmpty { lines.append("  opens:   \(result.appIDs.joined(separator: ", "))") }
        if let rule = result.rule, let details = result.detailsIndex, let component = result.componentIndex {
            let kind = result.ruleKind?.rawValue ?? "components"
            var location = "applinks.details[\(details)].\(kind)[\(component)]"
            if let detailsSource, result.ruleKind == .component,
                let name = LinkTestChecker.siteRuleName(
                    details: details, component: component, detailsSource: detailsSource)
            {
                location = "\(name) (\(location))"
            }
            lines.append("  rule:    \(location) \(rule)")
        }
        lines.append("  why:     \(result.reason)")
        lines += result.notes.map { "  note:    \($0)" }
        if !result.nearMisses.isEmpty {
            lines.append("  closest rules:")
            lines += result.nearMisses.map { "    \($0.location) \($0.rule): \($0.reason)" }
        }
        return lines.joined(separator: "\n")
    }
}
