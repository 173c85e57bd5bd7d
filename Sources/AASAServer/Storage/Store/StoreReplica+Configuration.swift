import AASACore
import AASAMicroHTTPD
import Logging

extension StoreReplica {
    /// The replica of `configuration`'s store (``ServerConfiguration/store``), reading the stored files through
    /// `files` and sealing certificates' leaves and keys in `vault`; `nil` for the folders.
    ///
    /// - Throws: a configuration error when ACME is on without the store key, or when the snapshot folder cannot be
    ///   made.
    convenience init?(
        _ configuration: ServerConfiguration, files: StoredFiles, vault: CredentialVault? = nil, logger: Logger
    )
        throws(Server.StartupError)
    {
        guard let settings = configuration.store else { return nil }
        guard configuration.acme == nil || settings.key != nil else { throw StoreStorage.acmeWithoutKey }
        do {
            try self.init(
                settings: settings, shard: configuration.shard, files: files, vault: vault, logger: logger,
                signatures: SignatureCache())
        } catch {
            throw Server.StartupError(
                diagnostics: [Diagnostic(.error, rule: .storeUnreachable, "\(error)")], isConfigurationError: true)
        }
    }
}
