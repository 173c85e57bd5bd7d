import AASACore
import AASAMicroHTTPD
import Foundation

/// The folders as a ``ConfigSource``: `site-config/<domain>/site.json` (with `pages/`) and the certbot-layout
/// certificate folder, each read confined to its folder, capped and compared with its stamps
/// (``DomainFolder``, ``SiteConfigLoader``, ``CertificateDirectory``).
///
/// With a ``watcher`` (a start's, made with `entriesWatchedByLoad`), each folder is watched on the thread about to
/// read it, just before it is read, so a change made while the server starts is not missed.
struct FolderSource: ConfigSource {
    /// The config folder.
    var configDirectory: String
    /// The certificate folder.
    var certificateDirectory: String
    /// Whether a private key others can read is an error rather than a warning.
    var refusesExposedKeys = false
    /// Signs with identities from ``certificateDirectory``; its cache keeps signatures across loads.
    var signer: AssociationSigner
    /// The watcher that watches each folder as it is read.
    var watcher: ConfigWatcher?
    /// Where the certificates read keep their leaves and keys until a handshake imports them; `nil`: in memory.
    var vault: CredentialVault?

    init(
        configDirectory: String, certificateDirectory: String, refusesExposedKeys: Bool, signatures: SignatureCache,
        vault: CredentialVault? = nil
    ) {
        self.configDirectory = configDirectory
        self.certificateDirectory = certificateDirectory
        self.refusesExposedKeys = refusesExposedKeys
        self.vault = vault
        signer = AssociationSigner(certificateDirectory: certificateDirectory, cache: signatures)
    }

    /// This source, watching each folder with `watcher` just before it is read.
    func watching(_ watcher: ConfigWatcher?) -> FolderSource {
        var source = self
        source.watcher = watcher
        return source
    }

    var domainsLocation: String { configDirectory }
    var certificatesLocation: String { certificateDirectory }

    /// The certificate folder is never a domain folder, even inside the config folder.
    private var excluded: [String] { [certificateDirectory] }

    func listDomains() throws(Diagnostic) -> [SourceDomain] {
        let folders = try DomainFolder.list(configDirectory, excluding: excluded)
        // Each domain folder has a certificate folder of its name, as a rule.
        watcher?.reserveEntries(folders.count, ofRoot: .config)
        watcher?.reserveEntries(folders.count, ofRoot: .certificates)
        return folders.map(SourceDomain.init)
    }

    func domain(named name: String) throws(Diagnostic) -> SourceDomain? {
        try DomainFolder.named(name, in: configDirectory, excluding: excluded).map(SourceDomain.init)
    }

    func readDomain(_ domain: SourceDomain, reusing previous: LoadedDomain?, with loader: SiteConfigLoader)
        -> LoadedDomain
    {
        guard case .folder(let folder) = domain.location else {
            preconditionFailure("FolderSource reads only folders")
        }
        // The watcher lists the folder it has just watched; the loader reads that listing.
        let listed = watcher?.watchEntry(folder.domain, ofRoot: .config, from: loader.domainsRoot)
        return loader.loadDomain(folder, reusing: previous, listed: listed)
    }

    func openDomainsRoot() -> OpenFolder? {
        OpenFolder(configDirectory)
    }

    func readAhead(_ domains: [SourceDomain]) -> FolderReadAhead? {
        FolderReadAhead.start(
            domains.compactMap { domain in
                guard case .folder(let folder) = domain.location else { return nil }
                return folder.path
            }, count: domains.count, files: [SiteConfigLoader.fileName])
    }

    func readCertificates(
        known: [String: CertificateDirectory.KnownFolder], only: Set<String>?, now: Date, leavingProcessors: Int
    ) -> CertificateRead {
        let directory = CertificateDirectory(path: certificateDirectory, refusesExposedKeys: refusesExposedKeys)
        var beforeReading: (@Sendable (String, OpenFolder?) -> [DirectoryListing.Entry]?)?
        if let watcher { beforeReading = { watcher.watchEntry($0, ofRoot: .certificates, from: $1) } }
        // Each new certificate is imported into GnuTLS as its folder is read: one GnuTLS refuses is that folder's
        // error, and the folder keeps its last good certificate.
        let folders = directory.loadFolders(
            now: now, known: known, importing: true, only: only, vault: vault, leavingProcessors: leavingProcessors,
            beforeReading: beforeReading)
        return CertificateRead(folders: folders, findings: directory.devCAKeyFinding().map { [$0] } ?? [])
    }

    func sign(_ loaded: [LoadedDomain], now: Date, certificates: CertificateCatalog?) -> [LoadedDomain] {
        let served = certificates.map { SigningCertificates.served($0, directory: certificateDirectory) }
        return signer.sign(loaded, now: now, certificates: served)
    }
}
