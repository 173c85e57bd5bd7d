import AASAMicroHTTPD

/// What the HTTPS listener's certificate cache did since the start, and holds now (`/metrics`).
public struct CertificateCacheFigures: Sendable, Equatable {
    /// Handshakes served a certificate kept imported.
    public var hits: Int
    /// Certificates imported for a handshake.
    public var imports: Int
    /// Imports GnuTLS refused (the handshake failed).
    public var failures: Int
    /// Imported certificates let go to stay within the bound.
    public var evictions: Int
    /// Certificates kept imported now.
    public var count: Int

    /// The cache's own figures.
    init(_ figures: CredentialCache.Figures) {
        hits = figures.hits
        imports = figures.imports
        failures = figures.failures
        evictions = figures.evictions
        count = figures.count
    }
}
