public import AASACore
import AASAOpenSSL

extension CertificateDirectory {
    /// The development CA's private key, `<certs>/dev-ca/ca-key.pem`.
    public var devCAKeyPath: String {
        path + "/" + Self.devCAFolder + "/" + DevCertificateAuthority.privateKeyFileName
    }

    /// A warning when other users can read the development CA's key, or `nil` (also when there is no CA).
    ///
    /// Always a warning, even under `serve --strict`: the CA key is never served, but whoever copies it can
    /// issue certificates that every device trusting the CA accepts.
    public func devCAKeyFinding() -> Diagnostic? {
        PrivateKeyPermissions.check(devCAKeyPath)
    }
}
