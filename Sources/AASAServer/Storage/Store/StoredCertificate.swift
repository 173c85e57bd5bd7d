public import AASACore

/// One certificate folder as the store holds it: each file of ``CertificateFile`` it has, the private key sealed
/// with the store key (``Store/sealingContext(_:)``).
public struct StoredCertificate: Sendable, Equatable {
    /// The folder's name under the certificate folder.
    public var name: String
    /// The files it has; ``CertificateFile/privateKey`` holds the sealed bytes, never the PEM.
    public var files: [CertificateFile: [UInt8]]

    /// A certificate from its parts.
    public init(name: String, files: [CertificateFile: [UInt8]]) {
        self.name = name
        self.files = files
    }
}
