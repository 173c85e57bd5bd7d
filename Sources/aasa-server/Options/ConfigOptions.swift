import ArgumentParser

/// `--config`: the folder of per-domain configs.
struct ConfigOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp("Folder holding <domain>/site.json (env: \(EnvironmentVariable.config)).", valueName: "dir"))
    var config = Environment.value(.config, "site-config")
}

/// `--certs`: the folder of per-domain certificates.
struct CertsOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Folder holding <domain>/fullchain.pem and privkey.pem (env: \(EnvironmentVariable.certs)).",
            valueName: "dir"))
    var certs = Environment.value(.certs, "certs")
}

/// The variables of `--config` and `--certs`, in the order of the options.
extension EnvironmentVariable {
    static let config: Self = "AASA_SERVER_CONFIG"
    static let certs: Self = "AASA_SERVER_CERTS"
}

/// `--config` for commands that can also work on a single file instead (`check --aasa`, `match --aasa`):
/// optional, so the command can tell whether it was given.
struct OptionalConfigOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Folder holding <domain>/site.json (default: site-config; env: \(EnvironmentVariable.config)).",
            valueName: "dir"))
    var config: String?

    /// The folder to use: the flag, else its variable (``EnvironmentVariable/config``), else `site-config`.
    var directory: String { config ?? Environment.value(.config, "site-config") }
}
