import AASACore

/// The `site-config` target: the bytes of a `site.json`, loaded as the server loads a domain.
///
/// Properties checked beyond "no crash, no hang":
/// - every finding in the file points at a line and column that exist;
/// - the config, written back as `import` writes it, reads back and writes the same bytes again;
/// - a publishable domain's served file reads back as the file that was generated, within Apple's size limit;
/// - a publishable domain's passkey endpoints document reads back as the URLs of its `passkeys`, and every
///   credential endpoint URL it serves passes ``CredentialURL`` (nothing unchecked reaches a header).
enum SiteConfigHarness {
    static let domain = "fuzz.example"

    static func run(_ bytes: [UInt8]) throws(InvariantViolation) {
        let source = SourceText(name: "\(domain)/site.json", bytes: bytes)
        let loaded = SiteConfigLoader().loadDomain(domain: domain, source: source)
        try DiagnosticLocations.check(loaded.diagnostics, in: source, target: .siteConfig)
        guard let config = loaded.config else { return }

        let written = JSONWriter(style: .pretty).bytes(config.jsonValue(schema: nil))
        let rewrittenSource = SourceText(name: "rewritten.json", bytes: written)
        let reader = JSONReader(source: rewrittenSource)
        let parsed: JSONParser.Result
        do {
            parsed = try JSONParser().parse(rewrittenSource)
        } catch {
            throw InvariantViolation(.siteConfig, "the written config is not JSON: \(error)")
        }
        guard let again = SiteConfig.read(parsed.root, reader: reader), !reader.diagnostics.hasErrors else {
            throw InvariantViolation(
                .siteConfig,
                "the written config does not read back: \(reader.diagnostics.errors.first.map(String.init(describing:)) ?? "nil")"
            )
        }
        let rewritten = JSONWriter(style: .pretty).bytes(again.jsonValue(schema: nil))
        guard rewritten == written else {
            throw InvariantViolation(
                .siteConfig,
                "writing the config read back changes it:\n\(String(decoding: written, as: UTF8.self))\n---\n\(String(decoding: rewritten, as: UTF8.self))"
            )
        }

        if loaded.isPublishable, let endpoints = loaded.published?.credentialEndpoints {
            try checkEndpoints(endpoints)
        }

        // A domain with only pages or an android section serves `{}`, which `check --aasa` rightly calls empty.
        guard loaded.isPublishable, let generated = loaded.generated, generated.file != AssociationFile() else {
            return
        }
        guard generated.bytes.count <= AssociationGenerator.sizeLimit else {
            throw InvariantViolation(.siteConfig, "publishable, but the file is \(generated.bytes.count) bytes")
        }
        let (served, _, diagnostics) = AssociationFile.parse(SourceText(name: "served", bytes: generated.bytes))
        guard served == generated.file else {
            throw InvariantViolation(
                .siteConfig,
                "the served bytes do not read back as the generated file: \(diagnostics.errors.first.map(String.init(describing:)) ?? "different content")"
            )
        }
    }

    /// The served passkey document holds exactly the configured URLs, and every served URL is a checked one.
    private static func checkEndpoints(_ endpoints: CredentialEndpoints) throws(InvariantViolation) {
        if let passkeys = endpoints.passkeys {
            let served = JSONValue.parse(passkeys.body)
            let urls = passkeys.urls.map { JSONValue.string($0.url) }
            guard let served, case .object(let members) = served,
                members.map(\.key) == passkeys.urls.map(\.member), members.map(\.value.value) == urls
            else {
                throw InvariantViolation(.siteConfig, "the passkey endpoints document does not read back as its URLs")
            }
        }
        let urls = (endpoints.passkeys?.urls.map(\.url) ?? []) + (endpoints.changePassword.map { [$0] } ?? [])
        if let unchecked = urls.first(where: { !CredentialURL.isServable($0) }) {
            throw InvariantViolation(
                .siteConfig, "publishable with a credential URL that fails its check: \(unchecked)")
        }
    }
}
