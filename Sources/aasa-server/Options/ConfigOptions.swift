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
