import AASACore
internal import COpenSSL

/// A certificate with its freshly generated private key, as returned by
/// ``DevCertificateAuthority/issue(names:validityDays:key:)``.
public struct IssuedCertificate: Sendable {
    /// The leaf certificate.
    public let certificate: X509Certificate
    /// Its private key.
    public let privateKey: PrivateKey

    /// The certificate as PEM.
    public func certificatePEM() throws -> String { try certificate.pemEncoded() }

    /// The private key as unencrypted PKCS#8 PEM.
    public func privateKeyPEM() throws -> String { try privateKey.pemEncoded() }

    /// A self-signed certificate for `name` with a fresh ECDSA P-256 key, valid for `validityDays`: what a server
    /// presents for a name while its real certificate is being obtained. No client trusts it, and it says so in its
    /// subject (`O=aasa-server temporary certificate`).
    public static func selfSigned(name: String, validityDays: Int = 7) throws -> IssuedCertificate {
        let canonical = HostnamePattern.canonical(name)
        guard DevCertificateAuthority.isValidDNSName(canonical) else {
            throw OpenSSLError(.invalidName, "'\(name)' is not a DNS name")
        }
        let key = try PrivateKey.generate(.ecdsaP256)
        let builder = CertificateBuilder(
            subject: [("O", "aasa-server temporary certificate")]
                + (canonical.utf8.count <= 64 ? [("CN", canonical)] : []),
            notBeforeOffset: -300,
            validityDays: validityDays,
            extensions: [
                (NID_basic_constraints, "critical,CA:FALSE"),
                (NID_key_usage, "critical,digitalSignature"),
                (NID_ext_key_usage, "serverAuth"),
                (NID_subject_alt_name, "DNS:" + canonical),
            ])
        return IssuedCertificate(
            certificate: try builder.sign(publicKey: key, issuer: nil, issuerKey: key), privateKey: key)
    }

    /// Paths written by ``writeCertbotLayout(into:name:)``.
    public struct CertbotPaths: Sendable, Hashable {
        /// `<directory>/<name>/fullchain.pem`.
        public let fullchain: String
        /// `<directory>/<name>/privkey.pem` (mode 0600).
        public let privateKey: String
    }

    /// Writes the certificate in certbot's layout: `<directory>/<name>/fullchain.pem` and `privkey.pem` (0600).
    ///
    /// `fullchain.pem` holds only the leaf: the development CA is the trust anchor itself, and clients
    /// must not receive a root in the chain.
    @discardableResult
    public func writeCertbotLayout(into directory: String, name: String) throws -> CertbotPaths {
        guard !name.isEmpty, !name.contains("/"), name != ".", name != ".." else {
            throw OpenSSLError(.invalidName, "'\(name)' cannot be a directory name in '\(directory)'")
        }
        let folder = directory + "/" + name
        try SecureFile.createDirectory(folder, mode: 0o755)
        let paths = CertbotPaths(
            fullchain: CertificateFile.chain.path(in: folder), privateKey: CertificateFile.privateKey.path(in: folder))
        try SecureFile.writeAtomically(Array(privateKeyPEM().utf8), to: paths.privateKey, mode: 0o600)
        try SecureFile.writeAtomically(Array(certificatePEM().utf8), to: paths.fullchain, mode: 0o644)
        return paths
    }
}
