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
        /// Where each shard is when no --upstream is given: the per-pod Services of deploy/kubernetes/sharded/. nginx
        /// resolves an upstream's name once, when it starts; a Service's name resolves whether or not its pod is
        /// ready, where a headless Service's pod names do not, and nginx would refuse to start.
        static let defaultUpstream = "aasa-server-shard-{index}:8443"

        static let configuration = CommandConfiguration(
            abstract: "Print the nginx stream configuration of a router that passes each TLS connection to its shard.",
            discussion: """
                The router reads the server name of each connection's ClientHello (ssl_preread) and passes the \
                connection, still encrypted, to the shard serving that domain: a map lists every domain folder of \
                --config with its shard, and any other name goes to a split_clients block that computes the same \
                hash as `serve --shard`, so a domain added later reaches the right shard before the file is \
                generated again. Include the output at the top level of nginx.conf, outside http {} (Debian: \
                apt install libnginx-mod-stream). Every shard must see the same config and certificate folders; \
                each serves only its own domains. See docs/operations.md, "Sharding".

                --upstream is either a template holding {index}, given once, or one address per shard, given \
                --count times in shard order.

                Examples:
                  aasa-server shards nginx --count 2 > /etc/nginx/aasa-shards.conf
                  aasa-server shards nginx --count 4 --config /srv/site-config --listen 443 \\
                    --upstream 'aasa-server-shard-{index}.prod.svc.cluster.local:8443'
                  aasa-server shards nginx --count 2 --upstream 10.0.0.11:8443 --upstream 10.0.0.12:8443
                """)

        @Option(help: ArgumentHelp("How many shards (1 to 100).", valueName: "n"))
        var count: Int

        @Option(
            name: .customLong("upstream"),
            help: ArgumentHelp(
                "Where the shards listen: a template with {index} (default: \(Nginx.defaultUpstream)), or one "
                    + "address per shard, in order (repeatable).", valueName: "address"))
        var upstreams: [String] = []

        @Option(
            help: ArgumentHelp("The router's nginx listen value: a port or address:port.", valueName: "address"))
        var listen = "8443"

        @OptionGroup var configOptions: ConfigOptions

        func validate() throws {
            guard count >= 1 && count <= Shard.maximumCount else {
                throw ValidationError("the shard count must be 1...\(Shard.maximumCount); got --count \(count)")
            }
            _ = try expandedUpstreams()
            guard ShardRouterConfig.isSafeValue(listen) else {
                throw ValidationError(
                    "--listen '\(listen)' is not a port or address:port (letters, digits and . - _ : / [ ] only)")
            }
        }

        func run() throws {
            let folders: [DomainFolder]
            do {
                folders = try DomainFolder.list(configOptions.config, excluding: [])
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

        /// One address per shard: the template with `{index}` replaced, or the addresses as given.
        func expandedUpstreams() throws(ValidationError) -> [String] {
            let addresses: [String]
            if upstreams.count == count {
                addresses = count == 1 ? [Self.expand(upstreams[0], index: 0)] : upstreams
            } else if upstreams.count <= 1, (upstreams.first ?? Self.defaultUpstream).contains("{index}") {
                let template = upstreams.first ?? Self.defaultUpstream
                addresses = (0..<count).map { Self.expand(template, index: $0) }
            } else {
                throw ValidationError(
                    "give --upstream once as a template holding {index} (e.g. \(Self.defaultUpstream)), or "
                        + "--count times, one address per shard in order; got \(upstreams.count) for \(count) shards"
                        + (upstreams.count == 1 ? " and no {index}" : ""))
            }
            for address in addresses where !ShardRouterConfig.isSafeValue(address) {
                throw ValidationError(
                    "--upstream '\(address)' is not a host:port (letters, digits and . - _ : / [ ] only)")
            }
            return addresses
        }

        private static func expand(_ template: String, index: Int) -> String {
            template.replacingOccurrences(of: "{index}", with: String(index))
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
