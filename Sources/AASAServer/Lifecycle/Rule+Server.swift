public import AASACore

/// The rules ``Server`` reports itself while it starts and serves.
extension Rule {
    /// Reported by `Server.start()` when no domain folder loaded.
    public static let noDomainServed = Rule(
        "no-domain-served", .error,
        "At start, no domain folder could be served: the start fails with exit status 2 (one failing domain beside good ones never stops the start)."
    )

    /// Reported by `Server` when the catalog it builds at start holds no usable certificate.
    public static let noCertificates = Rule(
        "no-certificates", .error,
        "The certificate folder holds no usable certificate, so HTTPS cannot start (`serve`).")

    /// Reported by `Server.bindPorts()` and `Server.start()` when a listener cannot start.
    public static let listener = Rule(
        "listener", .error,
        "A listener could not start (the port is in use, an invalid bind address): `serve` exits with status 1.")

    /// The rules of starting `serve` with the domains that loaded, in the order of the docs table: their part of
    /// `Rule.all`.
    package static let startRules: [Rule] = [
        .noDomainServed
    ]

    /// The rules of what `serve` and `certs acme` need to run (stapling, certificates, ACME, listeners), in the order
    /// of the docs table: their part of `Rule.all`.
    package static let serveRules: [Rule] = [
        .ocspStaple,
        .noCertificates,
        .acmeSetup,
        .acmeOrder,
        .listener,
    ]
}
