/// The `signing` section of a site config: serve a CMS-signed association file for iOS 8 and the
/// earliest iOS 9 releases, which fetch `/apple-app-site-association` and require a signature (spec §4).
///
/// `"signing": true` signs with the domain's own TLS certificate; the object form names another identity
/// or serves the signed file on both paths. The signature is made when the domain loads, never per request.
public struct SigningConfig: Sendable, Hashable {
    /// Where the signed form is served.
    public enum Paths: String, Sendable, Hashable, CaseIterable {
        /// Signed at `/apple-app-site-association`, unsigned JSON at `/.well-known/…` (the default).
        case root
        /// Signed on both paths (modern iOS reads both forms; spec §4).
        case both
    }

    /// Whether the domain's file is signed. `"signing": false` or `{"enabled": false}` turns it off.
    public var enabled: Bool = true
    /// PEM certificate (leaf first; may hold the intermediates too), relative to the site.json folder or
    /// absolute. `nil`: the TLS certificate in the certificate folder that covers the domain.
    public var certificate: String?
    /// PEM private key of ``certificate``; required with it.
    public var key: String?
    /// PEM intermediates to include, when ``certificate`` holds only the leaf.
    public var chain: String?
    /// Where the signed form is served.
    public var paths: Paths = .root

    /// Creates a signing section.
    public init(
        enabled: Bool = true, certificate: String? = nil, key: String? = nil, chain: String? = nil,
        paths: Paths = .root
    ) {
        self.enabled = enabled
        self.certificate = certificate
        self.key = key
        self.chain = chain
        self.paths = paths
    }

    /// The keys of the object form.
    static let keys = ["enabled", "certificate", "key", "chain", "paths", "comment"]

    /// Decodes `true`/`false` or the object form.
    static func read(_ node: JSONNode, path: @autoclosure () -> KeyPath, reader: JSONReader) -> SigningConfig? {
        switch reader.flagOrObject(
            node, path: path(), known: keys, hint: "write \"signing\": true to sign with the domain's TLS certificate")
        {
        case nil: return nil
        case .flag(let flag): return SigningConfig(enabled: flag)
        case .object(let object): return read(object, path: path(), reader: reader)
        }
    }

    /// Decodes the object form.
    private static func read(_ object: JSONObject, path: @autoclosure () -> KeyPath, reader: JSONReader)
        -> SigningConfig
    {
        var signing = SigningConfig()
        if let member = object["enabled"], let flag = reader.bool(member.value, path: path().key("enabled")) {
            signing.enabled = flag
        }
        for (key, keyPath) in [
            ("certificate", \SigningConfig.certificate), ("key", \.key), ("chain", \.chain),
        ] {
            if let member = object[key] {
                signing[keyPath: keyPath] = reader.string(member.value, path: path().key(key))
            }
        }
        if let member = object["comment"] { _ = reader.string(member.value, path: path().key("comment")) }
        if let member = object["paths"], let text = reader.string(member.value, path: path().key("paths")) {
            if let paths = Paths(rawValue: text) {
                signing.paths = paths
            } else {
                reader.report(
                    .error, rule: .wrongType, "\"paths\" must be \"root\" or \"both\", not \"\(text)\"",
                    at: member.value.offset, path: path().key("paths"),
                    hint: "\"root\" signs /apple-app-site-association only; \"both\" also signs /.well-known/…")
            }
        }
        return signing
    }

    /// As site.json content: `true`/`false` when nothing else is set.
    var jsonValue: JSONValue {
        guard certificate != nil || key != nil || chain != nil || paths != .root else { return .bool(enabled) }
        var pairs: [(String, JSONValue)] = []
        if !enabled { pairs.append(("enabled", .bool(false))) }
        if let certificate { pairs.append(("certificate", .string(certificate))) }
        if let key { pairs.append(("key", .string(key))) }
        if let chain { pairs.append(("chain", .string(chain))) }
        if paths != .root { pairs.append(("paths", .string(paths.rawValue))) }
        return .members(pairs)
    }
}

/// A named signing identity comes as a pair: a certificate without its key (or the reverse) cannot sign,
/// and a chain only makes sense with a named certificate.
public struct SigningIdentityRule: SiteRule {
    /// Creates the rule.
    public init() {}

    /// Reports a certificate without key, a key without certificate, a chain without certificate, and empty paths.
    public func check(_ site: SiteContext) -> [Diagnostic] {
        guard let signing = site.config.signing else { return [] }
        let path = KeyPath.root.key("signing")
        var found: [Diagnostic] = []
        for (key, value) in [("certificate", signing.certificate), ("key", signing.key), ("chain", signing.chain)]
        where value?.isEmpty == true {
            found.append(
                site.diagnostic(
                    .error, rule: .signingIdentity, "\"\(key)\" is empty", at: path.key(key),
                    hint: "name a PEM file, relative to this site.json's folder or absolute"))
        }
        switch (signing.certificate, signing.key) {
        case (.some, nil):
            found.append(
                site.diagnostic(
                    .error, rule: .signingIdentity, "\"certificate\" is named without its \"key\"",
                    at: path.key("certificate"), hint: "add \"key\": \"privkey.pem\" (the certificate's private key)"))
        case (nil, .some):
            found.append(
                site.diagnostic(
                    .error, rule: .signingIdentity, "\"key\" is named without its \"certificate\"",
                    at: path.key("key"),
                    hint:
                        "add \"certificate\": \"cert.pem\", or remove \"key\" to sign with the domain's TLS certificate"
                ))
        default: break
        }
        if signing.chain != nil && signing.certificate == nil {
            found.append(
                site.diagnostic(
                    .error, rule: .signingIdentity,
                    "\"chain\" is named without a \"certificate\"; the TLS certificate's fullchain.pem already has its chain",
                    at: path.key("chain"),
                    hint: "remove \"chain\", or name the \"certificate\" and \"key\" it belongs to"))
        }
        return found
    }
}

extension Rule {
    /// Reported by `SigningIdentityRule`; also by `AssociationSigner`, `SigningCertificates`.
    public static let signingIdentity = Rule(
        "signing-identity", .error,
        "`signing` names an incomplete or unreadable identity, or no certificate covers the domain.")
}
