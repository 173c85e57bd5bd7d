import AASACore
import Foundation

/// Where a load reads domains and certificates from: the seam between the stored configuration and everything
/// that serves it. ``FolderSource`` reads the config and certificate folders; another source (a database)
/// implements the same calls, and the ``Loader``, the ``Catalog``, the reloader and the listeners stay as they are.
///
/// A source reads and never decides what is served: a domain it cannot read is a ``LoadedDomain`` with errors, a
/// certificate it cannot read a folder with errors, and the catalog keeps the last good version of each. Nothing
/// above a source opens a file.
protocol ConfigSource: Sendable {
    /// Where the domains are, as messages name it (the config folder's path).
    var domainsLocation: String { get }
    /// Where the certificates are, as messages name it (the certificate folder's path).
    var certificatesLocation: String { get }

    /// Every domain the source holds, or why they cannot be listed (then the load keeps everything as it was).
    func listDomains() throws(Diagnostic) -> [SourceDomain]
    /// The domain named `name`; `nil` when the source holds none of that name.
    func domain(named name: String) throws(Diagnostic) -> SourceDomain?
    /// The domains of `names` the source holds, by name: ``domain(named:)`` for each, unless the source reads them
    /// together.
    func domains(named names: Set<String>) throws(Diagnostic) -> [String: SourceDomain]
    /// Reads, validates and generates `domain` with `loader`, keeping `previous` when what it was read from has not
    /// changed since.
    func readDomain(_ domain: SourceDomain, reusing previous: LoadedDomain?, with loader: SiteConfigLoader)
        -> LoadedDomain
    /// Starts bringing what ``readDomain(_:reusing:with:)`` will read of `domains`, in that order, into memory ahead
    /// of it; `nil` when the source has nothing to read ahead (rows fetched together, or a few folders).
    func readAhead(_ domains: [SourceDomain]) -> FolderReadAhead?
    /// The folder the domains are read below, held open for one read of them (``OpenFolder``); `nil` when they are
    /// not read from folders.
    func openDomainsRoot() -> OpenFolder?
    /// Reads every certificate, or with `only` those named, each imported for TLS; a certificate `known` lists is
    /// not parsed again when what it was read from has not changed. They are read on every processor but
    /// `leavingProcessors` (the calling thread's at least), the rest left to work running beside.
    func readCertificates(
        known: [String: CertificateDirectory.KnownFolder], only: Set<String>?, now: Date, leavingProcessors: Int
    ) -> CertificateRead
    /// Why the domains of the load now ending could not all be read, because the source itself failed (a store that
    /// stopped answering while their bytes were fetched), not a domain; `nil` when it did not. Taking it clears it.
    /// The load then fails as a whole, as when the domains cannot be listed: one finding, not one per domain.
    func takeReadFailure() -> Diagnostic?
    /// `loaded` with the association file of each domain that asks for it signed (spec §4), with the certificates
    /// the load serves (`certificates`; `nil` without HTTPS, when the source reads them itself).
    func sign(_ loaded: [LoadedDomain], now: Date, certificates: CertificateCatalog?) -> [LoadedDomain]
}

extension ConfigSource {
    func takeReadFailure() -> Diagnostic? { nil }

    func readAhead(_ domains: [SourceDomain]) -> FolderReadAhead? { nil }

    func openDomainsRoot() -> OpenFolder? { nil }

    func domains(named names: Set<String>) throws(Diagnostic) -> [String: SourceDomain] {
        var found: [String: SourceDomain] = [:]
        for name in names {
            if let domain = try domain(named: name) { found[name] = domain }
        }
        return found
    }
}

/// One domain as its source lists it: its name, and where the source reads it from.
struct SourceDomain: Sendable {
    /// Where a source reads a domain from; only that source looks inside.
    enum Location: Sendable {
        /// A folder of the config folder (``FolderSource``).
        case folder(DomainFolder)
        /// A row of the store, as its listing found it (``StoreSource``).
        case stored(StoreReference<StoredDomain>)
    }

    /// The host name.
    var name: String
    var location: Location

    /// The domain of a folder of the config folder.
    init(_ folder: DomainFolder) {
        name = folder.domain
        location = .folder(folder)
    }
}
