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

    /// Its files as a tree in memory, rooted at its name: what the certificate reader reads of the row
    /// (``CertificateDirectory/files(of:in:)``). The private key is left out: the row holds it sealed, and only the
    /// store key opens it.
    var tree: MemoryFileTree {
        MemoryFileTree(
            root: name,
            files: Dictionary(
                uniqueKeysWithValues: files.filter { $0.key != .privateKey }.map { ($0.key.name, $0.value) }),
            modified: 0)
    }
}
