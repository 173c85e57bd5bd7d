import AASACore
import Foundation

/// What one load read from the source (``Loader/load(after:scope:at:)``): the input of
/// ``Catalog/apply(_:trigger:removalGrace:)``.
struct Load: Sendable {
    /// When the load started: the time its versions are stamped with.
    var time: Date
    /// What it read.
    var scope: LoadScope
    /// The domains read and loaded, to be signed once the catalog took the certificates (``LoadSigner``); a failure
    /// only when the source cannot list its domains.
    var domains: Result<[LoadedDomain], Diagnostic>
    /// The domains in scope that the source no longer holds (a load of every domain finds them by their absence).
    var absent: [String] = []
    /// The certificate folders read; `nil` without an HTTPS listener.
    var certificates: CertificateRead?
    /// Where the certificates are read from, for messages.
    var certificatesLocation = ""
    /// Whether a domain no certificate covers gets a temporary one (ACME).
    var temporaryCertificates = false
}

/// Signs the domains of a load that sign their file, with the certificates the catalog took from the same load
/// (``Catalog/apply(_:signer:trigger:removalGrace:)``): the loader, whose source reads the keys.
protocol LoadSigner: Sendable {
    /// `domains` with those that sign their file signed with `certificates` (`nil`: without a server's
    /// certificates), at `now`.
    func sign(_ domains: [LoadedDomain], with certificates: CertificateCatalog?, at now: Date) -> [LoadedDomain]
}

/// Which domains and certificates a load reads.
struct LoadScope: Sendable {
    /// The domains to read by name; `nil`: every one (and every domain missing is gone).
    var domains: Set<String>?
    /// The certificate folders to read by name; `nil`: every one.
    var certificates: Set<String>?

    /// Everything: the start, SIGHUP, a removal grace ending, changes the watcher cannot name.
    static let everything = LoadScope(domains: nil, certificates: nil)

    /// What the watcher saw change: the entries of the config folder and of the certificate folder.
    init(_ changes: FolderChanges) {
        if changes.everything {
            self = .everything
        } else {
            self.init(
                domains: changes.entries(below: .config),
                certificates: changes.entries(below: .certificates))
        }
    }

    init(domains: Set<String>?, certificates: Set<String>?) {
        self.domains = domains
        self.certificates = certificates
    }
}
