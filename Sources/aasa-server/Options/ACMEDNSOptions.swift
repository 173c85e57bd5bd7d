import AASADNS
import AASAServer
import ArgumentParser
import Foundation

/// The dns-01 options of `serve --acme` and `certs acme`: which names, how the TXT records are written (RFC 2136 with
/// TSIG, or a hook), where lookups go, and wildcard certificates.
struct ACMEDNSOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The certificates obtained with dns-01, comma-separated: names, *.suffix for every name below a suffix, "
                + "* for all; the others use http-01 (env: \(EnvironmentVariable.acmeDnsNames)).", valueName: "list"))
    var acmeDnsNames: String?

    @Option(
        help: ArgumentHelp(
            "The primary DNS server that takes RFC 2136 dynamic updates of the challenge records "
                + "(env: \(EnvironmentVariable.acmeDnsServer)).", valueName: "host:port"))
    var acmeDnsServer: String?

    @Option(
        help: ArgumentHelp(
            "The TSIG key that signs the updates, in BIND's key-file format (tsig-keygen's output) "
                + "(env: \(EnvironmentVariable.acmeDnsTsigKeyFile)).", valueName: "file"))
    var acmeDnsTsigKeyFile: String?

    @Option(
        help: ArgumentHelp(
            "The zone the challenge records are written in, and tenants' CNAMEs point into "
                + "(_acme-challenge.<domain> CNAME <domain>.<zone>); default each name's zone from an SOA lookup "
                + "(env: \(EnvironmentVariable.acmeDnsZone)).", valueName: "zone"))
    var acmeDnsZone: String?

    @Option(
        help: ArgumentHelp(
            "A program run as 'PATH present|cleanup FQDN VALUE' to write and remove each challenge record, for any "
                + "other DNS provider (env: \(EnvironmentVariable.acmeDnsHook)).", valueName: "path"))
    var acmeDnsHook: String?

    @Option(
        help: ArgumentHelp(
            "Seconds the hook may run; default 120 (env: \(EnvironmentVariable.acmeDnsHookTimeout)).",
            valueName: "seconds"))
    var acmeDnsHookTimeout: Double = Environment.value(.acmeDnsHookTimeout, 120.0)

    @Option(
        help: ArgumentHelp(
            "The resolver for SOA, CNAME and TXT lookups; default the system's "
                + "(env: \(EnvironmentVariable.acmeDnsResolver)).", valueName: "host:port"))
    var acmeDnsResolver: String?

    @Option(
        help: ArgumentHelp(
            "Where a record must be seen before the CA is asked to look: all (the resolver and every authoritative "
                + "name server of the zone, on port 53) or resolver; default all "
                + "(env: \(EnvironmentVariable.acmeDnsPropagation)).", valueName: "all|resolver"))
    var acmeDnsPropagation: String?

    @Option(
        help: ArgumentHelp(
            "Seconds to wait for a record to be seen; default 180 (env: \(EnvironmentVariable.acmeDnsPropagationTimeout)).",
            valueName: "seconds"))
    var acmeDnsPropagationTimeout: Double = Environment.value(.acmeDnsPropagationTimeout, 180.0)

    @Option(
        help: ArgumentHelp(
            "One certificate for DOMAIN and *.DOMAIN, obtained with dns-01, serving every configured name it covers; "
                + "repeatable (env: \(EnvironmentVariable.acmeWildcard), comma-separated).", valueName: "domain"))
    var acmeWildcard: [String] = []

    mutating func validate() throws {
        try Environment.naming { try checkValues() }
    }

    private mutating func checkValues() throws {
        if acmeDnsNames == nil { acmeDnsNames = Environment.optional(.acmeDnsNames) }
        if acmeDnsServer == nil { acmeDnsServer = Environment.optional(.acmeDnsServer) }
        if acmeDnsTsigKeyFile == nil { acmeDnsTsigKeyFile = Environment.optional(.acmeDnsTsigKeyFile) }
        if acmeDnsZone == nil { acmeDnsZone = Environment.optional(.acmeDnsZone) }
        if acmeDnsHook == nil { acmeDnsHook = Environment.optional(.acmeDnsHook) }
        if acmeDnsResolver == nil { acmeDnsResolver = Environment.optional(.acmeDnsResolver) }
        if acmeDnsPropagation == nil { acmeDnsPropagation = Environment.optional(.acmeDnsPropagation) }
        if acmeWildcard.isEmpty { acmeWildcard = Environment.list(.acmeWildcard) }
        if let invalid = Environment.invalidValues.first { throw ValidationError(invalid) }
        _ = try settings()
    }

    /// Whether any dns-01 option is given.
    private var isUsed: Bool {
        acmeDnsNames != nil || acmeDnsServer != nil || acmeDnsTsigKeyFile != nil || acmeDnsZone != nil
            || acmeDnsHook != nil || acmeDnsResolver != nil || acmeDnsPropagation != nil || !acmeWildcard.isEmpty
    }

    /// The settings these options describe, `nil` when none is given; the error names the option and the fix.
    func settings() throws(ValidationError) -> DNSChallengeSettings? {
        guard isUsed else { return nil }
        let names: DNSNamePatterns
        do {
            names = try DNSNamePatterns(parsing: acmeDnsNames ?? "")
        } catch {
            throw ValidationError("--acme-dns-names: \(error.description)")
        }
        var wildcards: [String] = []
        for domain in acmeWildcard.flatMap({ $0.split(separator: ",") }).map({ String($0).lowercased() }) {
            let base = domain.hasPrefix("*.") ? String(domain.dropFirst(2)) : domain
            guard DNSName.isValid(base), !base.contains("*"), base.contains(".") else {
                throw ValidationError(
                    "--acme-wildcard '\(domain)' is not a domain: give the name below which every subdomain is covered "
                        + "(shop.example for shop.example and *.shop.example)")
            }
            if !wildcards.contains(base) { wildcards.append(base) }
        }
        if names.isEmpty && wildcards.isEmpty {
            throw ValidationError(
                "the dns-01 options need --acme-dns-names (names, *.suffix or *) or --acme-wildcard to say which "
                    + "certificates use dns-01")
        }
        let publisher: DNSChallengeSettings.Publisher
        switch (acmeDnsServer, acmeDnsHook) {
        case (let server?, nil):
            let address: DNSServerAddress
            do {
                address = try DNSServerAddress(parsing: server)
            } catch {
                throw ValidationError("--acme-dns-server: \(error.description)")
            }
            var key: TSIGKey?
            if let file = acmeDnsTsigKeyFile {
                do {
                    key = try TSIGKey(contentsOf: file)
                } catch {
                    throw ValidationError("--acme-dns-tsig-key-file \(error.description)")
                }
            }
            publisher = .update(server: address, key: key)
        case (nil, let hook?):
            guard acmeDnsTsigKeyFile == nil else {
                throw ValidationError("--acme-dns-tsig-key-file signs RFC 2136 updates: give --acme-dns-server with it")
            }
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: hook, isDirectory: &isFolder), !isFolder.boolValue,
                FileManager.default.isExecutableFile(atPath: hook)
            else {
                throw ValidationError("--acme-dns-hook '\(hook)' is not an executable file: give its path (chmod +x)")
            }
            guard (1...3600).contains(acmeDnsHookTimeout) else {
                throw ValidationError("--acme-dns-hook-timeout must be between 1 and 3600 seconds")
            }
            publisher = .hook(path: hook, timeout: .milliseconds(Int64(acmeDnsHookTimeout * 1000)))
        case (_?, _?):
            throw ValidationError("--acme-dns-server and --acme-dns-hook are two ways to write the records: give one")
        case (nil, nil):
            throw ValidationError(
                "dns-01 needs a way to write the challenge records: --acme-dns-server HOST:PORT with "
                    + "--acme-dns-tsig-key-file (RFC 2136), or --acme-dns-hook PATH")
        }
        var settings = DNSChallengeSettings(names: names, publisher: publisher)
        settings.wildcards = Set(wildcards)
        if let zone = acmeDnsZone {
            guard DNSName.isValid(zone), !zone.contains("*") else {
                throw ValidationError(
                    "--acme-dns-zone '\(zone)' is not a zone name: give its apex, e.g. acme.provider.example")
            }
            settings.zone = DNSName.relative(zone)
        }
        if let resolver = acmeDnsResolver {
            do {
                settings.resolver = try DNSServerAddress(parsing: resolver)
            } catch {
                throw ValidationError("--acme-dns-resolver: \(error.description)")
            }
        }
        if let propagation = acmeDnsPropagation {
            guard let value = DNSChallengeSettings.Propagation(rawValue: propagation) else {
                throw ValidationError("--acme-dns-propagation '\(propagation)' is not all or resolver")
            }
            settings.propagation = value
        }
        guard (1...3600).contains(acmeDnsPropagationTimeout) else {
            throw ValidationError("--acme-dns-propagation-timeout must be between 1 and 3600 seconds")
        }
        settings.propagationTimeout = .milliseconds(Int64(acmeDnsPropagationTimeout * 1000))
        return settings
    }
}

/// The variables of the dns-01 options.
extension EnvironmentVariable {
    static let acmeDnsNames: Self = "AASA_SERVER_ACME_DNS_NAMES"
    static let acmeDnsServer: Self = "AASA_SERVER_ACME_DNS_SERVER"
    static let acmeDnsTsigKeyFile: Self = "AASA_SERVER_ACME_DNS_TSIG_KEY_FILE"
    static let acmeDnsZone: Self = "AASA_SERVER_ACME_DNS_ZONE"
    static let acmeDnsHook: Self = "AASA_SERVER_ACME_DNS_HOOK"
    static let acmeDnsHookTimeout: Self = "AASA_SERVER_ACME_DNS_HOOK_TIMEOUT"
    static let acmeDnsResolver: Self = "AASA_SERVER_ACME_DNS_RESOLVER"
    static let acmeDnsPropagation: Self = "AASA_SERVER_ACME_DNS_PROPAGATION"
    static let acmeDnsPropagationTimeout: Self = "AASA_SERVER_ACME_DNS_PROPAGATION_TIMEOUT"
    static let acmeWildcard: Self = "AASA_SERVER_ACME_WILDCARD"
}
