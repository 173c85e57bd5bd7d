import ArgumentParser

/// `--config`: the folder of per-domain configs.
struct ConfigOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Folder holding <domain>/site.json.", valueName: "dir"))
    var config = "site-config"
}

/// `--certs`: the folder of per-domain certificates.
struct CertsOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Folder holding <domain>/fullchain.pem and privkey.pem.", valueName: "dir"))
    var certs = "certs"
}
