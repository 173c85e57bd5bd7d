import AASACore
import AASAMicroHTTPD
import Foundation
import Logging

/// Where the server keeps the leaves and keys of the certificates it serves until a handshake imports them
/// (`serve --credential-vault`): sealed in a ``CredentialVault``'s files, or in memory.
public enum CredentialVaultPlace: Sendable, Equatable {
    /// The system's temporary folder (`TMPDIR`, else `/tmp`); where no file can be made there (a read-only file
    /// system), in memory, with a warning.
    case temporary
    /// This folder; the start fails when no file can be made there.
    case folder(String)
    /// In memory: about 0.8 KB more for each certificate.
    case memory

    /// The vault of this place, made now; `nil` in memory (or, for ``temporary``, when no file can be made there,
    /// said in a warning).
    ///
    /// - Throws: ``Server/StartupError`` when ``folder(_:)`` cannot take a file.
    func makeVault(logger: Logger) throws(Server.StartupError) -> CredentialVault? {
        switch self {
        case .memory:
            return nil
        case .folder(let folder):
            do {
                return try CredentialVault(directory: folder)
            } catch {
                throw Server.StartupError(
                    diagnostics: [
                        Diagnostic(
                            .error, rule: .listener, error.reason, file: folder,
                            hint:
                                "name a folder the server can write with --credential-vault, or keep certificates in "
                                + "memory with --credential-vault off")
                    ], isConfigurationError: true)
            }
        case .temporary:
            do {
                return try CredentialVault(directory: FileManager.default.temporaryDirectory.path)
            } catch {
                logger.warning(
                    "certificates' leaves and keys are kept in memory (about 0.8 KB each)",
                    metadata: [
                        "reason": "\(error.reason)", "fix": "name a writable folder with --credential-vault",
                    ])
                return nil
            }
        }
    }
}
