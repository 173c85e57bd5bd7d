import AASACore
import ArgumentParser
import Foundation

/// `aasa-server match URL...`: what each URL does on iOS and on Android, which rule decided, and why not.
struct Match: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Say what each URL does on iOS and Android, which rule decided, and why.",
        discussion: """
            With --config, each URL's host picks the domain and its generated file is evaluated, exactly as \
            served. With --aasa, any Apple-format file that is JSON is evaluated the way iOS reads it (unknown keys \
            ignored), and everything `check` says about it is printed beside the verdicts. With --assetlinks (or \
            --android and --config) the verdict is Android 15's, from the dynamic rules of each package; \
            --all-platforms puts iOS 13+, iOS 9-12 and Android 15+ side by side. Exit status is 0 whatever the \
            verdict, and 2 on bad input (a file that is not JSON, a URL that cannot be parsed or is over 2,048 bytes, \
            which no rule is tried against).

            Examples:
              aasa-server match https://shop.example/buy/shoes https://shop.example/help/x
              aasa-server match --aasa apple-app-site-association --legacy https://example.com/videos/wwdc/2015/x
              aasa-server match --assetlinks assetlinks.json --package com.example.app https://example.com/p/1
              aasa-server match --all-platforms https://shop.example/buy/shoes
              aasa-server match --json https://links.example/r/abc
            """)

    @Argument(help: ArgumentHelp("URLs to evaluate, e.g. https://shop.example/buy/1.", valueName: "url"))
    var urls: [String]

    @OptionGroup var configOptions: OptionalConfigOptions

    @Option(
        name: .long,
        help: ArgumentHelp(
            "An Apple-format apple-app-site-association file to evaluate instead, read as iOS reads it.",
            valueName: "file"))
    var aasa: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "An assetlinks.json to evaluate instead, as Android 15+ does with its dynamic rules.", valueName: "file"))
    var assetlinks: String?

    @Option(
        name: .customLong("package"),
        help: ArgumentHelp(
            "The Android package to evaluate (repeatable; default: every package the file verifies).",
            valueName: "package"))
    var packages: [String] = []

    @Flag(help: "With the configs: Android 15+'s verdict from each domain's served assetlinks.json.")
    var android = false

    @Flag(help: "With the configs: the iOS 13+, iOS 9-12 and Android 15+ verdicts of each URL side by side.")
    var allPlatforms = false

    @Flag(help: "Evaluate as iOS 12 and earlier do: legacy appID and paths only.")
    var legacy = false

    @Flag(help: "One JSON object per URL, one per line.")
    var json = false

    func validate() throws {
        if [configOptions.config != nil, aasa != nil, assetlinks != nil].filter({ $0 }).count > 1 {
            throw ValidationError("use one of --config, --aasa and --assetlinks")
        }
        if (android || allPlatforms) && (aasa != nil || assetlinks != nil) {
            throw ValidationError(
                "--android and --all-platforms evaluate the configs; they do not take --aasa or --assetlinks")
        }
        if android && allPlatforms { throw ValidationError("use either --android or --all-platforms") }
        if !packages.isEmpty && assetlinks == nil && !android {
            throw ValidationError("--package goes with --assetlinks or --android")
        }
        if legacy && (assetlinks != nil || android || allPlatforms) {
            throw ValidationError("--legacy is for iOS verdicts; --all-platforms shows iOS 9-12 beside the others")
        }
        if urls.isEmpty { throw ValidationError("give at least one URL") }
    }

    func run() throws {
        if let aasa { return try matchAppleFile(aasa) }
        if let assetlinks { return try matchAssetLinks(assetlinks) }
        let sites = try loadSites()
        var badInput = false
        for url in urls {
            guard let site = site(for: url, in: sites) else {
                badInput = true
                continue
            }
            if allPlatforms {
                print(Self.sideBySide(url, site: site, json: json, packages: packages))
            } else if android {
                guard let assetLinks = site.assetLinks else {
                    DiagnosticPrinter.printError(
                        "error: \(url): \(site.domain) serves no assetlinks.json (its site.json has no android section)"
                    )
                    badInput = true
                    continue
                }
                let result = AndroidMatcher(assetLinks: assetLinks, packages: packages.isEmpty ? nil : packages)
                    .match(url)
                if result.verdict == .invalidURL { badInput = true }
                print(json ? result.json() : Self.humanReport(result))
            } else {
                let result = URLMatcher(file: site.file, mode: legacy ? .legacy : .modern).match(url)
                if result.verdict == .invalidURL { badInput = true }
                print(
                    json
                        ? result.json(detailsSource: site.detailsSource)
                        : Self.humanReport(result, detailsSource: site.detailsSource))
            }
        }
        if badInput { throw ExitCode(2) }
    }

    // MARK: Files

    /// `--aasa`: the file as iOS reads it, with everything `check` says about it.
    private func matchAppleFile(_ path: String) throws {
        let source = try Self.read(path, platform: "iOS")
        let findings = AssociationChecker().check(source)
        guard let root = try? JSONParser().parse(source).root.value else {
            // Why it is not JSON (invalid JSON, a CMS-signed file), as `check` says it.
            DiagnosticPrinter.print(findings.errors)
            DiagnosticPrinter.printError("error: '\(path)' is not JSON: iOS ignores the whole file")
            throw ExitCode(2)
        }
        let (file, notes) = AssociationFile.readAsDevice(root)
        let matcher = URLMatcher(file: file, mode: legacy ? .legacy : .modern)
        var badInput = false
        for url in urls {
            var result = matcher.match(url)
            if result.verdict == .invalidURL { badInput = true }
            result.notes = notes + result.notes
            print(
                json ? result.json(findings: findings.map(\.description)) : Self.humanReport(result, detailsSource: nil)
            )
        }
        if !json && !findings.isEmpty {
            print("\nwhat `check` says about \(path) (iOS reads the file anyway, as above):")
            for finding in findings { print("  " + finding.description) }
        }
        if badInput { throw ExitCode(2) }
    }

    /// `--assetlinks`: Android 15+'s verdict.
    private func matchAssetLinks(_ path: String) throws {
        let source = try Self.read(path, platform: "Android")
        let root: JSONValue
        do {
            root = try JSONParser().parse(source).root.value
        } catch {
            DiagnosticPrinter.print([error])
            DiagnosticPrinter.printError("error: '\(path)' is not JSON: Android ignores the whole file")
            throw ExitCode(2)
        }
        let matcher = AndroidMatcher(assetLinks: root, packages: packages.isEmpty ? nil : packages)
        var badInput = false
        for url in urls {
            let result = matcher.match(url)
            if result.verdict == .invalidURL { badInput = true }
            print(json ? result.json() : Self.humanReport(result))
        }
        if badInput { throw ExitCode(2) }
    }

    private static func read(_ path: String, platform: String) throws -> SourceText {
        guard let data = FileManager.default.contents(atPath: path) else {
            DiagnosticPrinter.printError("error: cannot read '\(path)'")
            throw ExitCode(2)
        }
        return SourceText(name: path, bytes: Array(data))
    }

    // MARK: Configs

    /// What one domain serves, for matching.
    struct Site {
        var domain: String
        var file: AssociationFile
        var detailsSource: [Int?]
        var assetLinks: JSONValue?
    }

    private func loadSites() throws -> [String: Site] {
        let directory = configOptions.directory
        let loaded: [LoadedDomain]
        do {
            loaded = try SiteConfigLoader().loadAll(directory: directory)
        } catch {
            DiagnosticPrinter.print([error])
            throw ExitCode(2)
        }
        var sites: [String: Site] = [:]
        for domain in loaded {
            guard domain.isPublishable, let generated = domain.generated else { continue }
            let assetLinks = domain.assetLinks.flatMap { JSONValue.parse($0.bytes) }
            sites[domain.domain] = Site(
                domain: domain.domain, file: generated.file, detailsSource: generated.detailsSource,
                assetLinks: assetLinks)
        }
        return sites
    }

    private func site(for url: String, in sites: [String: Site]) -> Site? {
        let parsed: MatchURL
        do {
            parsed = try MatchURL(parsing: url)
        } catch {
            DiagnosticPrinter.printError("error: \(url): \(error.description)")
            return nil
        }
        let host = parsed.host.flatMap(HostName.normalized)
        guard let host, let site = sites[host] else {
            DiagnosticPrinter.printError(
                "error: \(url): no domain folder for '\(host ?? url)' in \(configOptions.directory) (or its site.json has errors)"
            )
            return nil
        }
        return site
    }

    // MARK: Reports

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
        return report(
            lines, reason: result.reason, notes: result.notes,
            closest: result.nearMisses.map { "\($0.location) \($0.rule): \($0.reason)" })
    }

    /// Android's verdict, in the same shape as iOS's.
    static func humanReport(_ result: AndroidMatchResult) -> String {
        let platforms = result.verdict == .invalidURL ? "" : " (Android 15+; Android 14 and earlier: manifest)"
        var lines = ["\(result.url)", "  verdict: \(result.verdict.rawValue)\(platforms)"]
        if result.verdict == .match { lines.append("  opens:   \(result.packages.joined(separator: ", "))") }
        if let rule = result.rule, let index = result.ruleIndex {
            lines.append("  rule:    dynamic_app_link_components[\(index)] \(rule)")
        }
        return report(
            lines, reason: result.reason, notes: result.notes,
            closest: result.nearMisses.map { "dynamic_app_link_components[\($0.index)] \($0.rule): \($0.reason)" })
    }

    /// The end every platform's report shares: why, the notes, and the closest rules with what failed.
    private static func report(_ head: [String], reason: String, notes: [String], closest: [String]) -> String {
        var lines = head + ["  why:     \(reason)"] + notes.map { "  note:    \($0)" }
        if !closest.isEmpty { lines += ["  closest rules:"] + closest.map { "    " + $0 } }
        return lines.joined(separator: "\n")
    }

    /// One URL on every platform: iOS 13+, iOS 9-12 and Android 15+, marked when they disagree.
    static func sideBySide(_ url: String, site: Site, json: Bool, packages: [String]) -> String {
        let verdicts = PlatformVerdicts(
            url: url, file: site.file, assetLinks: site.assetLinks, packages: packages.isEmpty ? nil : packages)
        if json { return verdicts.json(detailsSource: site.detailsSource) }
        func ios(_ result: MatchResult) -> String {
            result.verdict.rawValue + (result.appIDs.isEmpty ? "" : " (\(result.appIDs.joined(separator: ", ")))")
        }
        let (modern, legacy, android) = (verdicts.modern, verdicts.legacy, verdicts.android)
        let androidText =
            android.map {
                $0.verdict.rawValue + ($0.verdict == .match ? " (\($0.packages.joined(separator: ", ")))" : "")
            } ?? "no assetlinks.json"
        var lines = [
            url + (verdicts.disagree ? "   <- the platforms disagree" : ""),
            "  iOS 13+:     \(ios(modern))  \(modern.reason)",
            "  iOS 9-12:    \(ios(legacy))  \(legacy.reason)",
            "  Android 15+: \(androidText)" + (android.map { "  \($0.reason)" } ?? ""),
        ]
        if android != nil { lines.append("  Android 14-: manifest  the app's intent filters decide") }
        return lines.joined(separator: "\n")
    }
}
