import AASACore
import AASAMicroHTTPD
import Foundation

@testable import AASAServer

extension CertificateCatalog {
    /// Reads the certificate folder `directory` into this catalog as a server's load does (a ``FolderSource``, then
    /// ``take(_:only:domains:allDomains:isConfigured:temporary:location:at:)``); returns what taking it did.
    mutating func take(_ directory: String, domains: [String], temporary: Bool = false, at now: Date)
        -> CertificateIntake
    {
        let source = FolderSource(
            configDirectory: directory + "/../site-config", certificateDirectory: directory, refusesExposedKeys: false,
            signatures: SignatureCache())
        var known: [String: CertificateDirectory.KnownFolder] = [:]
        for name in served.keys { known[name] = served[name]?.known }
        return take(
            source.readCertificates(known: known, only: nil, now: now, leavingProcessors: 0), domains: domains,
            temporary: temporary,
            location: directory, at: now)
    }

    /// ``take(_:domains:temporary:at:)``'s findings.
    mutating func read(_ directory: String, domains: [String], at now: Date) -> [Diagnostic] {
        take(directory, domains: domains, at: now).diagnostics
    }
}

/// A catalog's certificates and the SNI table the HTTPS listener makes of them (``Listeners``), read as a server's
/// load and publication do.
@dynamicMemberLookup
struct ServedCertificates {
    var catalog = CertificateCatalog()
    var table: CertificateTable?
    /// With ACME, the temporary certificates of the domains no certificate covers.
    var temporaryCertificates: TemporaryCertificates?
    /// Where handshakes keep the certificates they import, as the server's HTTPS listener does.
    let cache = CredentialCache(capacity: ServerConfiguration.defaultCertificateCache)

    /// Reads `directory` into ``catalog`` and brings ``table`` up to it; returns the findings.
    mutating func read(_ directory: String, domains: [String], at now: Date) throws -> [Diagnostic] {
        let intake = catalog.take(directory, domains: domains, temporary: temporaryCertificates != nil, at: now)
        table = try CertificateTable.serving(
            catalog, change: intake.change, after: table, temporary: temporaryCertificates, cache: cache)
        return intake.diagnostics
    }

    subscript<Value>(dynamicMember path: Swift.KeyPath<CertificateCatalog, Value>) -> Value { catalog[keyPath: path] }
}
