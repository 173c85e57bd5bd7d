import ArgumentParser

/// `--config`: the folder of per-domain configs.
struct ConfigOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp("Folder holding <domain>/site.json (env: AASA_SERVER_CONFIG).", valueName: "dir"))
    var config = Environment.value("CONFIG", "site-config")
}

/// `--certs`: the folder of per-domain certificates.
struct CertsOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Folder holding <domain>/fullchain.pem and privkey.pem (env: AASA_SERVER_CERTS).", valueName: "dir"))
    var certs = Environment.value("CERTS", "certs")
}

/// `--config` for commands that can also work on a single file instead (`check --aasa`, `match --aasa`):
/// optional, so the command can tell whether it was given.
struct OptionalConfigOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Folder holding <domain>/site.json (default: site-config; env: AASA_SERVER_CONFIG).", valueName: "dir"))
    var config: String?

    /// The folder to use: the flag, else AASA_SERVER_CONFIG, else `site-config`.
    var directory: String { config ?? Environment.value("CONFIG", "site-config") }
}
