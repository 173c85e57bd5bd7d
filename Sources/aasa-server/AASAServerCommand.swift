import AASACore
import AASAOpenSSL
import ArgumentParser

/// The `aasa-server` command: serves apple-app-site-association files for many domains.
@main
struct AASAServerCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "aasa-server",
        abstract: "Generate and serve apple-app-site-association files for many domains over HTTPS.",
        discussion: """
            Each domain is a folder site-config/<domain>/site.json; certificates live in \
            certs/<domain>/fullchain.pem and privkey.pem. See docs/configuration.md.
            """,
        subcommands: [
            Serve.self, Check.self, Match.self, Diff.self, CDN.self, Import.self, Sign.self, Certs.self,
            Shards.self, Store.self, Healthcheck.self,
        ],
        defaultSubcommand: nil
    )

    /// Runs the command named on the command line, its heap on huge pages where the kernel gives them only on
    /// request (``HugePageHeap``), SHA-256 (ETags, folder stamps) made by OpenSSL's code.
    static func main() {
        HugePageHeap.restartIfAdvised()
        SHA256.install(SHA256Digest.bytes(of:))
        main(nil)
    }
}
