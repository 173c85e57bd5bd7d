import AASAMicroHTTPD
import Logging

/// The folders as the server's storage: the config folder (a folder per domain, its history in `.history/`) and the
/// certificate folder (a folder per certificate, ACME's account and records in `.acme/`).
struct FolderStorage: Storage {
    let configuration: ServerConfiguration
    /// What every load reads.
    let folders: FolderSource

    /// The folders of `configuration`, signing with the certificates they hold through `signatures`; certificates'
    /// leaves and keys wait in `vault` for a handshake.
    init(
        _ configuration: ServerConfiguration, signatures: SignatureCache = SignatureCache(),
        vault: CredentialVault? = nil
    ) {
        self.configuration = configuration
        folders = FolderSource(
            configDirectory: configuration.configDirectory, certificateDirectory: configuration.certificateDirectory,
            refusesExposedKeys: configuration.refusesExposedPrivateKeys, signatures: signatures, vault: vault)
    }

    var source: any ConfigSource { folders }

    func sourceOfFirstLoad(watchedBy watcher: ConfigWatcher?) -> any ConfigSource {
        folders.watching(watcher)
    }

    func makeRepository() -> any DomainRepository {
        FolderDomainRepository(directory: configuration.configDirectory, policy: configuration.history)
    }

    func acme(logger: Logger) -> any ACMEStorage {
        FolderACMEStorage(certificateDirectory: configuration.certificateDirectory, logger: logger)
    }
}
