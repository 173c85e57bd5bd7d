import AASACore
import Foundation

@testable import AASAServer

extension CertificateCatalog {
    /// Reads the certificate folder `directory` into this catalog as a server's load does (a ``FolderSource``, then
    /// ``take(_:only:domains:allDomains:isConfigured:temporaryCertificates:location:at:)``); returns the findings.
    mutating func read(
        _ directory: String, domains: [String], temporaryCertificates: TemporaryCertificates? = nil, at now: Date
    ) -> [Diagnostic] {
        let source = FolderSource(
            configDirectory: directory + "/../site-config", certificateDirectory: directory, refusesExposedKeys: false,
            signatures: SignatureCache())
        var known: [String: CertificateDirectory.KnownFolder] = [:]
        for name in served.keys { known[name] = served[name]?.known }
        return take(
            source.readCertificates(known: known, only: nil, now: now), domains: domains,
            temporaryCertificates: temporaryCertificates, location: directory, at: now
        ).diagnostics
    }
}
