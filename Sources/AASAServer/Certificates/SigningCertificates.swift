import AASACore
import AASAOpenSSL
import Foundation

/// Where ``AssociationSigner`` finds the TLS certificate a domain signs with (`"signing": true`, spec §4).
///
/// A server's load hands it the certificates its SNI table serves (``served(_:directory:)``): the folder is listed
/// and parsed once per load, and the signer reads only the two files of each certificate it signs with, refusing
/// them unless they are byte for byte what is served (their stamps). `check` and tools without a server read the
/// folder themselves (``read(_:)``).
struct SigningCertificates: Sendable {
    /// The files of one certificate, read for signing.
    struct Files: Sendable {
        var folderName: String
        var chainPath: String
        var keyPath: String
        var chainPEM: [UInt8]
        var keyPEM: [UInt8]
    }

    /// The certificate `domain` signs with, or why there is none.
    let find: @Sendable (_ domain: String) -> Result<Files, Diagnostic>

    /// The certificate folder at `directory`, read now (without the server's stamps).
    static func read(_ directory: String) -> SigningCertificates {
        let folders = CertificateDirectory(path: directory).loadFolders()
        return SigningCertificates { domain in
            if let own = folders.first(where: { $0.name == domain }), own.certificate == nil {
                return .failure(unusable(domain, directory: directory, reasons: own.diagnostics.errors))
            }
            let candidates = folders.compactMap(\.certificate)
            guard
                let certificate = candidates.first(where: { $0.folderName == domain })
                    ?? candidates.first(where: { $0.covers(domain) })
            else { return .failure(notCovered(domain, directory: directory)) }
            return .success(
                Files(
                    folderName: certificate.folderName, chainPath: certificate.fullchainPath,
                    keyPath: certificate.privateKeyPath, chainPEM: certificate.chainPEM, keyPEM: certificate.keyPEM))
        }
    }

    /// The certificates a load serves (`certificates`, read from `directory`): a domain signs with its own folder's
    /// certificate, else the one covering it, as the SNI table picks it.
    static func served(_ certificates: CertificateCatalog, directory: String) -> SigningCertificates {
        served(certificates, directory: directory) { CertificateDirectory.files(of: directory + "/" + $0) }
    }

    /// The certificates a load serves (`certificates`), whose files `files` reads by folder name and messages place
    /// in `directory`.
    static func served(
        _ certificates: CertificateCatalog, directory: String,
        files: @escaping @Sendable (String) -> CertificateDirectory.FileReader
    ) -> SigningCertificates {
        SigningCertificates { domain in
            if let errors = certificates.findings[domain]?.errors, !errors.isEmpty {
                return .failure(unusable(domain, directory: directory, reasons: errors))
            }
            guard
                let certificate = certificates.served[domain]
                    ?? certificates.coveringFolder(of: domain).flatMap({ certificates.served[$0] })
            else { return .failure(notCovered(domain, directory: directory)) }
            let folder = directory + "/" + certificate.folderName
            let chainPath = CertificateFile.chain.path(in: folder)
            let keyPath = CertificateFile.privateKey.path(in: folder)
            let reader = files(certificate.folderName)
            guard
                let chain = try? reader(.chain).get(), let key = try? reader(.privateKey).get(),
                ContentStamp(chain) == certificate.known.chain, ContentStamp(key) == certificate.known.key
            else {
                return .failure(
                    Diagnostic(
                        .error, rule: .signingIdentity,
                        "cannot sign for \(domain): \(folder)/ changed while it was being loaded",
                        file: chainPath, hint: "nothing to do: the reload its change triggers signs with the new files")
                )
            }
            return .success(
                Files(
                    folderName: certificate.folderName, chainPath: chainPath, keyPath: keyPath, chainPEM: chain,
                    keyPEM: key))
        }
    }

    /// The finding for a domain whose own certificate folder failed to load, with the folder's reasons.
    private static func unusable(_ domain: String, directory: String, reasons: [Diagnostic]) -> Diagnostic {
        let rule = reasons.contains { $0.rule == .certificateKeyMismatch } ? Rule.signingKeyMismatch : .signingIdentity
        return Diagnostic(
            .error, rule: rule,
            "cannot sign for \(domain): \(directory)/\(domain)/ is not usable ("
                + reasons.map(\.message).joined(separator: "; ") + ")",
            file: reasons.first?.file ?? directory + "/" + domain,
            hint: reasons.first?.hint ?? "put fullchain.pem and privkey.pem there")
    }

    /// The finding for a domain no certificate covers.
    private static func notCovered(_ domain: String, directory: String) -> Diagnostic {
        Diagnostic(
            .error, rule: .signingIdentity, "cannot sign for \(domain): no certificate in \(directory)/ covers it",
            file: CertificateFile.chain.path(in: directory + "/" + domain),
            hint:
                "add certs/\(domain)/fullchain.pem and privkey.pem, or name \"certificate\" and \"key\" in \"signing\"")
    }
}
