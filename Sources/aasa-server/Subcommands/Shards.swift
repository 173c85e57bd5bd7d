import AASACore
import AASAServer
import ArgumentParser
import Foundation

/// `aasa-server shards`: tools for serving the domains from several processes, each a shard.
struct Shards: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Tools for serving the domains from several processes, each one shard (serve --shard I/N).",
        subcommands: [Nginx.self])

    /// `aasa-server shards nginx`: the configuration of an nginx router in front of the shards.
    struct Nginx: ParsableCommand {
        /// Where each shard is when no --upstream is given: the per-shard Services of deploy/kubernetes/sharded/.
        /// nginx resolves an upstream's name once, when it starts; a Service's name resolves whether or not its pods
        /// are ready, where a headless Service's pod names do not, and nginx would refuse to start.
        static let defaultUpstream = "aasa-server-shard-{index}:8443"

        static let configuration = CommandConfiguration(
            abstract: "Print the nginx stream configuration of a router that passes each TLS connection to its shard.",
            discussion: """
                The router reads the server name of each connection's ClientHello (ssl_preread) and passes the \
                connection, still encrypted, to the shard serving that domain: a map lists every domain folder of \
                --config (or every domain of --store) with its shard, and any other name goes to a split_clients \
                block that computes the same hash as `serve --shard`, so a domain added later reaches the right \
                shard before the file is generated again. Include the output at the top level of nginx.conf, outside \
                http {} (Debian: apt install libnginx-mod-stream). Every shard must see the same config and \
                certificate folders, or the same store; each serves only its own domains. See docs/operations.md, \
                "Sharding".

                --upstream is either a template holding {index} (and {replica} when --replicas is 2 or more), given \
                once, or one address per replica, given --count x --replicas times in shard order: shard 0's \
                replicas, then shard 1's. With two or more replicas per shard, nginx passes a new connection to the \
                next replica when one refuses it or does not accept it in 1 s, and sends no new connection for 5 s to \
                a replica that failed.

                Examples:
                  aasa-server shards nginx --count 2 > /etc/nginx/aasa-shards.conf
                  aasa-server shards nginx --count 4 --config /srv/site-config --listen 443 \\
                    --upstream 'aasa-server-shard-{index}.prod.svc.cluster.local:8443'
                  aasa-server shards nginx --count 2 --upstream 10.0.0.11:8443 --upstream 10.0.0.12:8443
                  aasa-server shards nginx --count 2 --replicas 2 --store postgresql://aasa@db/aasa \\
                    --upstream 'shard-{index}-{replica}.internal:8443'
                """)

        /// The most replicas a shard may have: a client whose shard has every replica on a host that answers
        /// nothing waits one connect timeout (1 s) per replica before nginx gives up.
        static let maximumReplicas = 10

        @Option(help: ArgumentHelp("How many shards (1 to 100).", valueName: "n"))
        var count: Int

        @Option(
            help: ArgumentHelp(
                "How many replicas serve each shard (1 to \(Nginx.maximumReplicas)); each shard's upstream lists "
                    + "them all.", valueName: "n"))
        var replicas = 1

        @Option(
            name: .customLong("upstream"),
            help: ArgumentHelp(
                "Where the shards listen: a template with {index} and, with --replicas, {replica} (default: "
                    + "\(Nginx.defaultUpstream)), or one address per replica, shard by shard (repeatable).",
                valueName: "address"))
        var upstreams: [String] = []

        @Option(
            help: ArgumentHelp("The router's nginx listen value: a port or address:port.", valueName: "address"))
        var listen = "8443"

        @OptionGroup var configOptions: OptionalConfigOptions

        @Option(
            name: .long,
            help: ArgumentHelp(
                "Read the domain names from this store (a libpq connection URI) instead of --config "
                    + "(env: \(EnvironmentVariable.store)).", valueName: "uri"))
        var store: String?

        /// The store to read the names from: `--store`, else its variable unless `--config` is given (a flag wins
        /// over a variable); `nil` reads the config folder.
        var storeURI: String? {
            if let store { return store }
            return configOptions.config == nil ? Environment.optional(.store) : nil
        }

        func validate() throws {
            guard count >= 1 && count <= Shard.maximumCount else {
                throw ValidationError("the shard count must be 1...\(Shard.maximumCount); got --count \(count)")
            }
            guard replicas >= 1 && replicas <= Self.maximumReplicas else {
                throw ValidationError(
                    "the replicas per shard must be 1...\(Self.maximumReplicas); got --replicas \(replicas)")
            }
            if store != nil && configOptions.config != nil {
                throw ValidationError("give --config or --store, not both: the domain names come from one of them")
            }
            _ = try expandedUpstreams()
            guard ShardRouterConfig.isSafeValue(listen) else {
                throw ValidationError(
                    "--listen '\(listen)' is not a port or address:port (letters, digits and . - _ : / [ ] only)")
            }
        }

        func run() throws {
            var (domains, skipped) = try storeURI.map(Self.storedDomains) ?? folderDomains()
            let addresses = try expandedUpstreams()
            let router = ShardRouterConfig(
                domains: domains, count: count, upstreams: addresses, listen: listen, commandLine: Self.commandLine)
            for name in router.skippedDomains {
                skipped.append(
                    Diagnostic(
                        .warning, rule: .domainName, "'\(name)' is not a host name; it is left out of the map"))
            }
            DiagnosticPrinter.print(skipped)
            print(router.render(), terminator: "")
        }

        /// The domains of the config folder the loader accepts, and a warning for each other folder.
        func folderDomains() throws -> (domains: [String], skipped: [Diagnostic]) {
            let folders: [DomainFolder]
            do {
                folders = try DomainFolder.list(configOptions.directory, excluding: [])
            } catch {
                DiagnosticPrinter.print([error])
                throw ExitCode(2)
            }
            var domains: [String] = []
            var skipped: [Diagnostic] = []
            for folder in folders {
                // Only the folders the loader accepts: the others are served by no shard.
                if let problem = SiteConfigLoader.domainNameProblem(folder.domain) {
                    skipped.append(
                        Diagnostic(
                            .warning, rule: .domainName, problem.message + "; it is left out of the map",
                            file: folder.path, hint: problem.hint))
                } else if var problem = folder.problem {
                    problem.severity = .warning
                    problem.message += "; it is left out of the map"
                    skipped.append(problem)
                } else {
                    domains.append(folder.domain)
                }
            }
            return (domains, skipped)
        }

        /// The names of the domains stored at `uri` the loader accepts, and a warning for each other one; a store
        /// that cannot be read is exit 1, naming host:port/database (never the password).
        static func storedDomains(_ uri: String) throws -> (domains: [String], skipped: [Diagnostic]) {
            let names = try Store.reporting { try AASAServer.Store(uri: uri, migrating: false).domainNames() }
            var domains: [String] = []
            var skipped: [Diagnostic] = []
            for name in names {
                if let problem = SiteConfigLoader.domainNameProblem(name) {
                    skipped.append(
                        Diagnostic(
                            .warning, rule: .domainName,
                            "stored domain '\(name)': " + problem.message + "; it is left out of the map",
                            hint: problem.hint))
                } else {
                    domains.append(name)
                }
            }
            return (domains, skipped)
        }

        /// Each shard's replicas' addresses: the template with `{index}` and `{replica}` replaced, or the
        /// addresses as given, shard by shard.
        func expandedUpstreams() throws(ValidationError) -> [[String]] {
            let total = count * replicas
            let template = upstreams.count <= 1 ? upstreams.first ?? Self.defaultUpstream : nil
            let flat: [String]
            if let template, total == 1 || template.contains("{index}") || template.contains("{replica}") {
                guard total == 1 || count == 1 || template.contains("{index}") else {
                    throw ValidationError(
                        "--upstream '\(template)' has no {index}: every shard would be at the same address; give "
                            + "a template holding {index} or \(total) addresses")
                }
                guard replicas == 1 || template.contains("{replica}") else {
                    throw ValidationError(
                        "with --replicas \(replicas), --upstream needs {replica} as well as {index} (e.g. "
                            + "shard-{index}-{replica}:8443), or --count x --replicas = \(total) addresses, shard by "
                            + "shard; got '\(template)'")
                }
                flat = (0..<count).flatMap { index in
                    (0..<replicas).map { Self.expand(template, index: index, replica: $0) }
                }
            } else if upstreams.count == total {
                flat = upstreams
            } else if replicas == 1 {
                throw ValidationError(
                    "give --upstream once as a template holding {index} (e.g. \(Self.defaultUpstream)), or "
                        + "--count times, one address per shard in order; got \(upstreams.count) for \(count) shards"
                        + (upstreams.count == 1 ? " and no {index}" : ""))
            } else {
                throw ValidationError(
                    "give --upstream once as a template holding {index} and {replica}, or --count x --replicas = "
                        + "\(count) x \(replicas) = \(total) times, one address per replica: shard 0's \(replicas), "
                        + "then shard 1's...; got \(upstreams.count)")
            }
            var seen: [String: Int] = [:]
            for (position, address) in flat.enumerated() {
                guard ShardRouterConfig.isSafeValue(address) else {
                    throw ValidationError(
                        "--upstream '\(address)' is not a host:port (letters, digits and . - _ : / [ ] only)")
                }
                if let first = seen[address] {
                    throw ValidationError(
                        "--upstream '\(address)' is given for \(place(first)) and \(place(position)): "
                            + "each replica of each shard is its own server, at its own address")
                }
                seen[address] = position
            }
            return (0..<count).map { Array(flat[$0 * replicas..<($0 + 1) * replicas]) }
        }

        /// `shard 1, replica 0` for the address at `position` of the shard-major list.
        private func place(_ position: Int) -> String {
            replicas == 1 ? "shard \(position)" : "shard \(position / replicas), replica \(position % replicas)"
        }

        private static func expand(_ template: String, index: Int, replica: Int) -> String {
            template.replacingOccurrences(of: "{index}", with: String(index))
                .replacingOccurrences(of: "{replica}", with: String(replica))
        }

        /// The command as typed, for the file's first comment; arguments a shell would split or expand are quoted.
        private static var commandLine: String {
            let arguments = CommandLine.arguments.dropFirst().map { argument in
                let plain =
                    !argument.isEmpty
                    && argument.utf8.allSatisfy { byte in
                        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
                            || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                            || "-_.:/=@%+,".utf8.contains(byte)
                    }
                return plain ? argument : "'" + argument.replacingOccurrences(of: "'", with: "'\\''") + "'"
            }
            return (["aasa-server"] + arguments).joined(separator: " ")
        }
    }
}
