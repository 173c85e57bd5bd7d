import AASACore
import AASAOpenSSL
import Foundation

/// One certificate found in the certificate folder, certbot layout: `<certs>/<name>/fullchain.pem` + `privkey.pem`.
public struct DomainCertificate: Sendable {
    /// The folder name (a domain, `*.example.com`, or anything else; the SANs decide what it covers).
    public var folderName: String
    /// Path of `fullchain.pem`.
    public var fullchainPath: String
    /// The DNS names the leaf covers (SANs; the subject CN only when there are none).
    public var names: [String]
    /// When the leaf expires.
    public var notAfter: Date
    /// The parsed chain.
    public var chain: CertificateChain
    /// The PEM chain as read.
    public var chainPEM: [UInt8]
    /// The PEM key as read. Never logged or served.
    public var keyPEM: [UInt8]

    /// Whether the leaf covers `domain` (RFC 6125: exact, or a one-label wildcard).
    public func covers(_ domain: String) -> Bool { chain.leaf.covers(hostname: domain) }
}

/// Reads every certificate below the certificate folder and reports what is wrong with each.
public struct CertificateDirectory: Sendable {
    /// The folder, as the user named it.
    public var path: String

    /// The folder holding the development CA (`certs dev`); never served as a domain certificate.
    public static let devCAFolder = "dev-ca"
    /// A folder with this name provides the certificate for clients that send no or an unknown SNI.
    public static let defaultFolder = "default"

    /// Creates a reader for `path`.
    public init(path: String) {
        self.path = path
    }

    /// What one certificate folder held when it was read.
    public struct Folder: Sendable {
        /// The folder name.
        public var name: String
        /// The certificate, when the folder's files are usable.
        public var certificate: DomainCertificate?
        /// What is wrong (errors mean `certificate` is `nil`) or worth knowing (expiry warnings).
        public var diagnostics: [Diagnostic]
    }

    /// Every usable certificate, sorted by folder name, and the findings about all of them.
    public func load(now: Date = Date()) -> (certificates: [DomainCertificate], diagnostics: [Diagnostic]) {
        let folders = loadFolders(now: now)
        return (folders.compactMap(\.certificate), folders.flatMap(\.diagnostics))
    }

    /// Every certificate folder, sorted by name, each with its certificate or why it has none.
    ///
    /// A reload keeps a folder's last good certificate when its new files fail, so it needs the result per folder.
    /// Symlinked folders and files are followed (certbot's `live/` and Kubernetes' `..data` both use them);
    /// hidden entries (`..data`, `..2024_…`) and the development CA are skipped.
    public func loadFolders(now: Date = Date()) -> [Folder] {
        let manager = FileManager.default
        guard let names = try? manager.contentsOfDirectory(atPath: path) else { return [] }
        let folderNames = names.sorted().filter { name in
            guard !name.hasPrefix("."), name != Self.devCAFolder else { return false }
            var isDirectory: ObjCBool = false
            return manager.fileExists(atPath: path + "/" + name, isDirectory: &isDirectory) && isDirectory.boolValue
        }
        // Parsing is most of a start with thousands of folders: spread it over every processor, and parse the
        // intermediates the chains share once.
        let intermediates = IntermediateCertificates()
        return folderNames.concurrentMap { name in
            var diagnostics: [Diagnostic] = []
            let certificate = Self.loadFolder(
                name: name, folder: path + "/" + name, now: now, intermediates: intermediates,
                diagnostics: &diagnostics)
            return Folder(name: name, certificate: certificate, diagnostics: diagnostics)
        }
    }

    private static func loadFolder(
        name: String, folder: String, now: Date, intermediates: IntermediateCertificates,
        diagnostics: inout [Diagnostic]
    ) -> DomainCertificate? {
        let manager = FileManager.default
        let chainPath = folder + "/fullchain.pem"
        let keyPath = folder + "/privkey.pem"
        guard let chainData = manager.contents(atPath: chainPath) else {
            diagnostics.append(
                Diagnostic(
                    .error, rule: "certificate-missing", "no fullchain.pem in \(folder)", file: chainPath,
                    hint:
                        "put the certificate chain (leaf first) there, or run `aasa-server certs dev` for local testing"
                ))
            return nil
        }
        guard let keyData = manager.contents(atPath: keyPath) else {
            diagnostics.append(
                Diagnostic(
                    .error, rule: "certificate-missing", "no privkey.pem in \(folder)", file: keyPath,
                    hint: "put the certificate's private key there (mode 0600)"))
            return nil
        }
        let chain: CertificateChain
        let key: PrivateKey
        do {
            chain = try CertificateChain(pemEncoded: Array(chainData), sharing: intermediates)
        } catch {
            diagnostics.append(
                Diagnostic(
                    .error, rule: "certificate-invalid", "cannot read the certificate chain: \(error)",
                    file: chainPath, hint: "fullchain.pem must hold PEM certificates, leaf first"))
            return nil
        }
        do {
            key = try PrivateKey(pemEncoded: Array(keyData))
        } catch {
            // The error text comes from parsing, never from the key bytes themselves.
            diagnostics.append(
                Diagnostic(
                    .error, rule: "certificate-invalid", "cannot read the private key", file: keyPath,
                    hint: "privkey.pem must hold one unencrypted PEM private key"))
            return nil
        }
        guard key.matches(chain.leaf) else {
            diagnostics.append(
                Diagnostic(
                    .error, rule: "certificate-key-mismatch",
                    "privkey.pem does not belong to the certificate in fullchain.pem", file: keyPath,
                    hint: "copy the key that was generated with this certificate"))
            return nil
        }
        let leaf = chain.leaf
        var dnsNames = leaf.dnsNames
        if dnsNames.isEmpty, let commonName = leaf.subjectCommonName { dnsNames = [commonName] }
        if leaf.notAfter < now {
            diagnostics.append(
                Diagnostic(
                    .warning, rule: "certificate-expired",
                    "the certificate for \(dnsNames.joined(separator: ", ")) expired on \(leaf.notAfter)",
                    file: chainPath,
                    hint: "renew it; Apple's CDN and devices refuse expired certificates"))
        }
        return DomainCertificate(
            folderName: name, fullchainPath: chainPath, names: dnsNames, notAfter: leaf.notAfter, chain: chain,
            chainPEM: Array(chainData), keyPEM: Array(keyData))
    }
}
