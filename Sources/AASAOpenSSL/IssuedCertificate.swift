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
        let paths = CertbotPaths(fullchain: folder + "/fullchain.pem", privateKey: folder + "/privkey.pem")
        try SecureFile.writeAtomically(Array(privateKeyPEM().utf8), to: paths.privateKey, mode: 0o600)
        try SecureFile.writeAtomically(Array(certificatePEM().utf8), to: paths.fullchain, mode: 0o644)
        return paths
    }
}
