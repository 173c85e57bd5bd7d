import AASACore
import Foundation
import Logging

/// Checks a server's configuration for ACME and makes its manager, reading or creating the account.
struct ACMESetup {
    let configuration: ServerConfiguration
    let logger: Logger

    /// The manager with ``ServerConfiguration/acme``, `nil` without; `issued` hears of each certificate issued. The
    /// CA must reach the challenge answers (an HTTP listener is on) and there must be HTTPS to serve the
    /// certificates.
    func manager(
        storage: any ACMEStorage, responder: (any ChallengeResponder)?, issued: @escaping @Sendable (String) -> Void
    ) throws(Server.StartupError) -> ACMEManager? {
        guard let settings = configuration.acme else { return nil }
        func failure(_ message: String, hint: String) -> Server.StartupError {
            Server.StartupError(
                diagnostics: [Diagnostic(.error, rule: .acmeSetup, message, hint: hint)], isConfigurationError: true)
        }
        guard configuration.httpPort != nil || settings.dns?.names.coversAll == true else {
            throw failure(
                "--acme needs the plain HTTP listener: the CA validates each domain at http://<domain>/.well-known/acme-challenge/",
                hint: "add --http-port 80 (or a port that port 80 is mapped to), or answer every name with dns-01 "
                    + "(--acme-dns-names '*')")
        }
        guard configuration.httpsPort != nil else {
            throw failure("--acme obtains certificates for HTTPS, which is off", hint: "drop --https-port 0")
        }
        let manager: ACMEManager
        do {
            manager = try ACMEManager.make(
                settings: settings, storage: storage, logger: logger, responder: responder, issued: issued)
        } catch {
            throw failure(error.message + (error.url.map { " (\($0))" } ?? ""), hint: error.hint)
        }
        // A profile the CA does not list, or a binding it requires and is not given, can never succeed: refuse the
        // start. A CA that cannot be reached now does not stop it; the first order then fails with the same error.
        do {
            try manager.client.checkProfile()
            try manager.client.checkExternalAccountBinding()
        } catch  where error.kind == .configuration {
            throw failure(error.message + (error.url.map { " (\($0))" } ?? ""), hint: error.hint)
        } catch {
            logger.warning(
                "ACME: could not read the CA's directory at start; its profiles and requirements are checked at the first order",
                metadata: ["ca": "\(settings.directoryURL)", "error": "\(error.message)"])
        }
        return manager
    }
}
