import AASACore
import AASACurl
import AASAServer
import ArgumentParser
import Foundation

/// `aasa-server cdn [DOMAIN...]`: whether Apple's CDN (and Google) hold what each domain serves.
struct CDN: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cdn",
        abstract: "Say whether Apple's CDN (and, with --google, Google's verifier) holds what each domain serves.",
        discussion: """
            Devices read association files from Apple's CDN, which fetched them earlier and caches them for hours. \
            For each domain (every configured one by default, or the names given, served here or not) the CDN's \
            copy is compared as JSON with what is served (the generated file, or the live site's for names not \
            configured): in-sync, stale (what differs), failed (Apple-Failure-Reason and a hint), absent (never \
            fetched) or unreachable. With --google, Google's Digital Asset Links API is compared with the \
            statements and dynamic rules served, for the domains that serve assetlinks.json. Exit status 0 when \
            everything is in-sync, 1 otherwise, 2 when a name is not a host or there is nothing to check (64 for \
            invalid options): a check to run after a deploy.

            Examples:
              aasa-server cdn
              aasa-server cdn shop.example --google --json
            """)

    @Argument(help: ArgumentHelp("Domains to check (default: every configured domain).", valueName: "domain"))
    var domains: [String] = []

    @OptionGroup var configOptions: OptionalConfigOptions

    @Flag(help: "Also compare Google's Digital Asset Links API with the assetlinks.json served.")
    var google = false

    @Option(help: ArgumentHelp("Apple's CDN base URL (the copy of D is at <url>D).", valueName: "url"))
    var appleCdn: String = AppleCDNCheck.defaultBase

    @Option(help: ArgumentHelp("Google's statements:list URL.", valueName: "url"))
    var googleDal: String = GoogleDALCheck.defaultBase

    @Option(
        help: ArgumentHelp(
            "PEM file of the only CAs to trust for every request (default: the system's).", valueName: "file"))
    var cacert: String?

    @Option(help: ArgumentHelp("Seconds each request may take.", valueName: "seconds"))
    var timeout: Double = 20

    @Flag(help: "One JSON object per domain, one per line.")
    var json = false

    func validate() throws {
        for (option, url) in [("--apple-cdn", appleCdn), ("--google-dal", googleDal)]
        where !(url.hasPrefix("https://") || url.hasPrefix("http://")) {
            throw ValidationError("\(option) '\(url)' is not an http(s) URL")
        }
        try Environment.requireReadableFile(cacert, option: "--cacert")
        if !(timeout > 0 && timeout <= 300) { throw ValidationError("--timeout must be between 0 and 300 seconds") }
    }

    func run() throws {
        // Bad input exits 2, as the command promises for cron and CI.
        for domain in domains where HostName.normalized(domain) == nil || domain.contains("/") {
            DiagnosticPrinter.printError("error: '\(domain)' is not a host name")
            throw ExitCode(2)
        }
        var served: [String: CDNComparison.Served] = [:]
        let directory = configOptions.directory
        let loaded = (try? SiteConfigLoader().loadAll(directory: directory)) ?? []
        for domain in loaded where domain.isPublishable {
            guard let generated = domain.generated else { continue }
            let modified = try? FileManager.default.attributesOfItem(atPath: domain.file)[.modificationDate] as? Date
            served[domain.domain] = CDNComparison.Served(
                association: generated.bytes, assetLinks: domain.assetLinks?.bytes, since: modified)
        }
        let names = domains.isEmpty ? served.keys.sorted() : domains.compactMap(HostName.normalized)
        guard !names.isEmpty else {
            DiagnosticPrinter.printError(
                "error: no domain to check: no publishable domain in '\(directory)' and none given")
            throw ExitCode(2)
        }
        var client = HTTPClient(trustAnchors: cacert)
        client.timeout = .milliseconds(Int64(timeout * 1000))
        client.userAgent = "aasa-server (cdn check)"
        var comparison = CDNComparison(client: client)
        comparison.appleBase = appleCdn
        comparison.googleBase = googleDal
        comparison.google = google
        let formatter = ISO8601DateFormatter()
        func date(_ value: Date?) -> JSONValue { value.map { .string(formatter.string(from: $0)) } ?? .null }
        var allInSync = true
        for name in names {
            let result = comparison.compare(name, served: served[name])
            allInSync = allInSync && result.inSync
            if json {
                var members: [(String, JSONValue)] = [
                    ("domain", .string(name)), ("apple", result.apple.jsonValue(date: date)),
                ]
                if let google = result.google { members.append(("google", google.jsonValue(date: date))) }
                print(JSONWriter(style: .compact).string(.members(members)))
            } else {
                print(result.apple.summary)
                if let google = result.google { print(google.summary) }
            }
        }
        if !allInSync { throw ExitCode(1) }
    }
}
