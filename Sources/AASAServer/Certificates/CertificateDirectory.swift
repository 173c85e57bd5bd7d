public import AASACore
public import AASAMicroHTTPD
public import AASAOpenSSL
public import Foundation
import Synchronization

/// One certificate found in the certificate folder, certbot layout: `<certs>/<name>/fullchain.pem` + `privkey.pem`.
///
/// Read for serving: the leaf's names and dates come from ``CertificateSummary`` (no OpenSSL), and the key is
/// not parsed here. The chain and key are checked by importing them into GnuTLS (the leaf's public key from the
/// numbers read in Swift, `LeafPublicKey`), which refuses a key that does not belong to the leaf
/// (``CertificateDirectory/loadFolders(now:known:importing:)``, for `check` and the server alike), and kept compactly
/// for a handshake to import again (``DeferredCredential``).
public struct DomainCertificate: Sendable {
    /// The folder name (a domain, `*.example.com`, or anything else; the SANs decide what it covers).
    public var folderName: String
    /// Path of `fullchain.pem`.
    public var fullchainPath: String
    /// What the leaf says: its names, validity and DER bytes.
    public var summary: CertificateSummary
    /// The checked OCSP response from `ocsp.der` to staple, or `nil`.
    public var ocspStaple: (response: [UInt8], nextUpdate: Date)?
    /// What the folder's files were found to hold at this load, to notice at the next one that they did not change.
    public var known: CertificateDirectory.KnownFolder
    /// The PEM chain as read; empty once imported (``credential``).
    public var chainPEM: [UInt8]
    /// The PEM key as read; empty once imported. Never logged or served.
    public var keyPEM: [UInt8]
    /// The chain, key and staple as checked by GnuTLS, to import when a handshake asks for them, when the folder was
    /// read for serving (``CertificateDirectory/loadFolders(now:known:importing:)``).
    public var credential: DeferredCredential?
    /// The DNS names the leaf covers (SANs; the subject CN only when there are none).
    public var names: [String] { summary.names }
    /// When the leaf expires.
    public var notAfter: Date { summary.notAfter }
    /// Path of `privkey.pem`.
    public var privateKeyPath: String {
        CertificateFile.privateKey.path(in: (fullchainPath as NSString).deletingLastPathComponent)
    }

    /// The OCSP staple in the SNI table's form.
    public var tableStaple: CertificateTable.OCSPStaple? {
        ocspStaple.map {
            CertificateTable.OCSPStaple(
                response: $0.response,
                expires: CheckedNumber.clamped(
                    $0.nextUpdate.timeIntervalSince1970.rounded(.down), to: Int.min...Int.max))
        }
    }

    /// Whether the leaf covers `domain` (RFC 6125: exact, or a one-label wildcard).
    public func covers(_ domain: String) -> Bool { summary.subjectAlternativeNames.covers(hostname: domain) }
}

/// Reads every certificate below the certificate folder and reports what is wrong with each.
public struct CertificateDirectory: Sendable {
    /// The folder, as the user named it.
    public var path: String
    /// Whether a `privkey.pem` that other users can read is refused (`serve --strict`) instead of only reported.
    public var refusesExposedKeys = false

    /// The folder holding the development CA (`certs dev`); never served as a domain certificate.
    public static let devCAFolder = "dev-ca"
    /// A folder with this name provides the certificate for clients that send no or an unknown SNI.
    public static let defaultFolder = "default"
    /// Largest `fullchain.pem` read: a chain of a dozen RSA-4096 certificates is under 30 KB.
    public static let maximumChainBytes = 1 << 20
    /// Largest `privkey.pem` read: an RSA-16384 key is under 13 KB.
    public static let maximumKeyBytes = 64 << 10
    /// Largest `ocsp.der` read: real responses are 1–4 KB.
    public static let maximumStapleBytes = 64 << 10

    /// The most bytes read of each file of a certificate folder.
    public static func cap(of file: CertificateFile) -> Int {
        switch file {
        case .chain: maximumChainBytes
        case .privateKey: maximumKeyBytes
        case .staple: maximumStapleBytes
        case .acmeRecord: 64 << 10
        }
    }

    /// Reads one file of a certificate folder, at most ``cap(of:)`` bytes, through the ``FileTree`` that holds it
    /// (``files(of:in:)``): the folder on disk, or a store's row in memory.
    public typealias FileReader = @Sendable (CertificateFile) -> Result<[UInt8], ConfinedFile.Refusal>

    /// The files of the certificate folder `folder` of `tree` (a folder on disk by default), each a regular file of
    /// at most ``cap(of:)`` bytes (on disk, checked on the open descriptor before it is read: ``ConfinedFile``).
    /// Links are followed anywhere: certbot's `live/` links lead into `archive/`, and the
    /// folder is the operator's, not a tenant's; a private key is what the folder is for.
    public static func files(of folder: String, in tree: any FileTree = FolderFileTree(root: "/")) -> FileReader {
        files(of: folder, in: tree, notingKeyAccess: nil)
    }

    /// ``files(of:in:)``, noting in `key` the private key's mode and group (``ConfinedFile/Contents/access``) each
    /// time it is read: the permission check then needs no second walk of the key's path.
    static func files(
        of folder: String, in tree: any FileTree = FolderFileTree(root: "/"), notingKeyAccess key: KeyAccess?
    )
        -> FileReader
    {
        { file in
            let read = tree.read(
                file.path(in: folder), within: .anywhere, maximumBytes: cap(of: file), refusingPrivateKeys: false)
            if let key, file == .privateKey, case .success(let contents) = read {
                key.note(contents.access)
            }
            return read.map(\.bytes)
        }
    }

    /// The permission bits and group of a folder's private key as it was last read.
    final class KeyAccess: Sendable {
        private let access = Mutex<(mode: UInt32, group: UInt32)?>(nil)

        /// The mode and group noted last, `nil` when the key was not read.
        var noted: (mode: UInt32, group: UInt32)? { access.withLock { $0 } }

        /// Notes `access` as the key's.
        func note(_ access: (mode: UInt32, group: UInt32)?) { self.access.withLock { $0 = access } }
    }

    /// Creates a reader for `path`; with `refusesExposedKeys`, certificates whose key others can read are not loaded.
    public init(path: String, refusesExposedKeys: Bool = false) {
        self.path = path
        self.refusesExposedKeys = refusesExposedKeys
    }

    /// What one certificate folder held when it was read.
    public struct Folder: Sendable {
        /// The folder name.
        public var name: String
        /// The certificate, when the folder's files are usable.
        public var certificate: DomainCertificate?
        /// What is wrong (errors mean `certificate` is `nil`) or worth knowing (expiry warnings).
        public var diagnostics: [Diagnostic]
        /// Whether the folder holds exactly the files it was last loaded from (``loadFolders(now:known:)``):
        /// `certificate` is then `nil`, and the last load's certificate still stands.
        public var unchanged = false
    }

    /// A folder's files as they were at its last load, by their stamps, and what was found in them.
    ///
    /// A reload reads every folder again but reads further only those whose bytes changed: with thousands of
    /// domains, parsing every chain and key with OpenSSL was most of a reload (2.5 M instructions per folder;
    /// docs/benchmarks.md), and a staple is still checked with OpenSSL. Stamps, not the bytes: a server keeps
    /// one of these for every folder it serves.
    public struct KnownFolder: Sendable {
        /// `fullchain.pem`, `privkey.pem` and `ocsp.der` (`nil`: no such file) as read.
        var chain: ContentStamp
        var key: ContentStamp
        var stapleFile: ContentStamp?
        /// The findings of parsing them (not the key-permission check, which runs at every load).
        var findings: [Diagnostic]
        /// Until when the findings hold whatever the time: the leaf's notAfter (it then becomes expired) and
        /// the staple's nextUpdate; `nil` when they must be made again at the next load.
        var validUntil: Date?

        /// Whether the files `files` reads are byte for byte those of this load, and its findings still hold `now`.
        func isCurrent(_ files: FileReader, now: Date) -> Bool {
            guard let validUntil, now < validUntil else { return false }
            func stamp(_ file: CertificateFile) -> ContentStamp? { (try? files(file).get()).map(ContentStamp.init) }
            return stamp(.chain) == chain && stamp(.privateKey) == key && stamp(.staple) == stapleFile
        }
    }

    /// Every usable certificate, sorted by folder name, and the findings about all of them; with `importing`, as
    /// the server reads them (``loadFolders(now:known:importing:)``).
    public func load(now: Date = Date(), importing: Bool = false)
        -> (certificates: [DomainCertificate], diagnostics: [Diagnostic])
    {
        let folders = loadFolders(now: now, importing: importing)
        return (folders.compactMap(\.certificate), folders.flatMap(\.diagnostics))
    }

    /// Every certificate folder, sorted by name, each with its certificate or why it has none.
    ///
    /// A reload keeps a folder's last good certificate when its new files fail, so it needs the result per folder.
    /// Symlinked folders and files are followed (certbot's `live/` and Kubernetes' `..data` both use them);
    /// hidden entries (`..data`, `..2024_…`) and the development CA are skipped.
    ///
    /// A folder whose files hold the same bytes as its entry in `known` (and whose findings cannot have changed
    /// with time) is not parsed again: it comes back ``Folder/unchanged``, with the findings of its last load.
    ///
    /// With `importing` (a server reading what it will serve), each certificate is imported into GnuTLS as soon as
    /// it is read, on the same thread: a chain or key GnuTLS refuses is that folder's error (`check` reads the
    /// folder this way too, so it reports exactly what the server refuses). What a handshake needs is kept as DER
    /// (``DeferredCredential``), and the PEM bytes are let go at once instead of being held for every folder until
    /// the SNI table is built.
    ///
    /// With `only`, just the folders of those names are read (what a reload of a few changed folders needs); a name
    /// with no folder is left out, as in a full listing. `beforeReading` is called with each folder's name on the
    /// thread about to read it (a start's watcher watches the folder then) and the certificate folder held open for
    /// this read, which paths below it are opened from (``OpenFolder``), and may return the folder's listing made
    /// then: a folder it shows without `ocsp.der` is not asked for one. Imported certificates keep their leaves and
    /// keys sealed in `vault` when there is one. The folders are read on every processor but `leavingProcessors`
    /// (the calling thread's at least), the rest left to work running beside (a start's domains).
    public func loadFolders(
        now: Date = Date(), known: [String: KnownFolder] = [:], importing: Bool = false, only: Set<String>? = nil,
        vault: CredentialVault? = nil, leavingProcessors: Int = 0,
        beforeReading: (@Sendable (String, OpenFolder?) -> [DirectoryListing.Entry]?)? = nil
    ) -> [Folder] {
        let listed: [String]?
        if let only {
            listed = only.filter { name in
                var status = stat()
                return !name.isEmpty && !name.contains("/") && stat(path + "/" + name, &status) == 0
                    && status.st_mode & S_IFMT == S_IFDIR
            }
        } else {
            listed = DirectoryListing.folderNames(in: path)
        }
        guard let listed else { return [] }
        let folderNames = listed.sorted().filter { name in
            !name.hasPrefix(".") && name != Self.devCAFolder && name != ACMEAccount.folderName
        }
        // Reading thousands of folders is a large part of a start: spread it over every processor, the folders brought
        // in from the disk ahead of it (FolderReadAhead). Chains are parsed by OpenSSL only to check a staple, and the
        // intermediates they share are then parsed once.
        let sharing = Sharing(vault: vault)
        let root = OpenFolder(path)
        let ahead = FolderReadAhead.start(
            folderNames.map { path.joiningPath($0) }, count: folderNames.count, files: CertificateFile.readAhead)
        defer { ahead?.stop() }
        return folderNames.indices.concurrentMap(leaving: leavingProcessors) { index in
            ahead?.reached(index)
            let name = folderNames[index]
            let listing = beforeReading?(name, root) ?? nil
            let folder = path.joiningPath(name)
            let key = KeyAccess()
            var result = Self.readFolder(
                name: name, location: folder,
                files: Self.files(of: folder, in: FolderFileTree(root: "/", from: root), notingKeyAccess: key),
                now: now,
                known: known[name], importing: importing, sharing: sharing,
                mayHaveStaple: listing?.contains { $0.name == CertificateFile.staple.name } ?? true)
            let keyPath = CertificateFile.privateKey.path(in: folder)
            // The key's mode as it was read, without a second walk of its path; asked by path when it was not read.
            let exposure =
                key.noted.map {
                    PrivateKeyPermissions.check(keyPath, mode: $0.mode, group: $0.group, refused: refusesExposedKeys)
                } ?? PrivateKeyPermissions.check(keyPath, refused: refusesExposedKeys)
            if let exposed = exposure {
                result.diagnostics.append(exposed)
                if exposed.severity == .error {
                    result.certificate = nil
                    result.unchanged = false
                }
            }
            return result
        }
    }

    /// What the folders of one read share: the intermediates their chains hold, parsed and imported once, and the
    /// vault their leaves and keys are sealed in.
    public final class Sharing: Sendable {
        let intermediates = IntermediateCertificates()
        let imported = SharedIntermediates()
        let vault: CredentialVault?

        /// Nothing shared yet; certificates imported keep their leaves and keys in `vault`, else in memory.
        public init(vault: CredentialVault? = nil) {
            self.vault = vault
        }
    }

    /// The certificate folder `name`, whose files `files` reads and messages place at `location` (a folder's path,
    /// or where a store keeps the row): its certificate, or why it has none. A folder whose files are those `known`
    /// stamped comes back ``Folder/unchanged``. With `importing`, the certificate is imported into GnuTLS at once
    /// (``loadFolders(now:known:importing:only:beforeReading:)``).
    public static func readFolder(
        name: String, location: String, files: FileReader, now: Date, known: KnownFolder?, importing: Bool,
        sharing: Sharing, mayHaveStaple: Bool = true
    ) -> Folder {
        var result = Folder(name: name, certificate: nil, diagnostics: [])
        if let known, known.isCurrent(files, now: now) {
            result.unchanged = true
            result.diagnostics = known.findings
            return result
        }
        let loaded = loadFolder(
            name: name, folder: location, files: files, now: now, intermediates: sharing.intermediates,
            mayHaveStaple: mayHaveStaple, diagnostics: &result.diagnostics)
        result.certificate = loaded?.certificate
        if importing, let loaded {
            result.certificate = imported(
                loaded.certificate, chain: loaded.chain, leafFields: loaded.leafFields, sharing: sharing,
                diagnostics: &result.diagnostics)
        }
        return result
    }

    /// The certificate of the folder `name`, with its chain's certificates as DER (decoded once, for the summary
    /// and for the import) and the leaf split into its fields (once, for both too), or `nil` with the findings in
    /// `diagnostics`. Without `mayHaveStaple` (a listing just
    /// made shows no `ocsp.der`), no staple is looked for.
    private static func loadFolder(
        name: String, folder: String, files: FileReader, now: Date, intermediates: IntermediateCertificates,
        mayHaveStaple: Bool, diagnostics: inout [Diagnostic]
    ) -> (certificate: DomainCertificate, chain: [[UInt8]], leafFields: CertificateFields)? {
        let chainPath = CertificateFile.chain.path(in: folder)
        /// A file the folder must have: its bytes, or `nil` with the finding (missing, or refused by the reader).
        func required(_ file: CertificateFile, missing hint: String) -> [UInt8]? {
            let name = file.name
            switch files(file) {
            case .success(let bytes):
                return bytes
            case .failure(.missing):
                diagnostics.append(
                    Diagnostic(
                        .error, rule: .certificateMissing, "no \(name) in \(folder)", file: file.path(in: folder),
                        hint: hint))
            case .failure(let refusal):
                diagnostics.append(refusal.diagnostic(file.path(in: folder), what: name))
            }
            return nil
        }
        guard
            let chainData = required(
                .chain,
                missing:
                    "put the certificate chain (leaf first) there, or run `aasa-server certs dev` for local testing"),
            let keyData = required(.privateKey, missing: "put the certificate's private key there (mode 0600)")
        else { return nil }
        let chainPEM = chainData
        let blocks: [PEMBlocks.Block]
        let summary: CertificateSummary
        let leafFields: CertificateFields
        do {
            blocks = try CertificateSummary.certificateBlocks(chainPEM)
            (summary, leafFields) = try CertificateSummary.read(certificates: blocks)
        } catch {
            diagnostics.append(
                Diagnostic(
                    .error, rule: .certificateInvalid, "cannot read the certificate chain: \(error)",
                    file: chainPath, hint: "fullchain.pem must hold PEM certificates, leaf first"))
            return nil
        }
        if summary.notAfter < now {
            diagnostics.append(
                Diagnostic(
                    .warning, rule: .certificateExpired,
                    "the certificate for \(summary.names.joined(separator: ", ")) expired on \(summary.notAfter)",
                    file: chainPath,
                    hint: "renew it; Apple's CDN and devices refuse expired certificates"))
        }
        var stapleFile: [UInt8]?
        switch mayHaveStaple ? files(.staple) : .failure(.missing) {
        case .success(let bytes): stapleFile = bytes
        case .failure(.missing): stapleFile = nil
        case .failure(let refusal):
            // A staple that cannot be read costs the handshake its staple, never the certificate.
            var finding = refusal.diagnostic(CertificateFile.staple.path(in: folder), what: CertificateFile.staple.name)
            finding.severity = .warning
            finding.rule = .ocspStaple
            diagnostics.append(finding)
        }
        let staple = stapleFile.flatMap {
            loadStaple(
                $0, folder: folder, chainPEM: chainPEM, intermediates: intermediates, now: now,
                diagnostics: &diagnostics)
        }
        let keyPEM = keyData
        let certificate = DomainCertificate(
            folderName: name, fullchainPath: chainPath, summary: summary,
            ocspStaple: staple,
            known: KnownFolder(
                chain: ContentStamp(chainPEM), key: ContentStamp(keyPEM), stapleFile: stapleFile.map(ContentStamp.init),
                findings: diagnostics,
                validUntil: findingsValidUntil(
                    notAfter: summary.notAfter, stapleFile: stapleFile, staple: staple, now: now)),
            chainPEM: chainPEM, keyPEM: keyPEM)
        return (certificate, blocks.map(\.bytes), leafFields)
    }

    /// `certificate` with its credential checked from `chain` (its certificates' DER; the leaf's public key read
    /// from `leafFields`) and its PEM bytes let go, or `nil` with GnuTLS's refusal.
    private static func imported(
        _ certificate: DomainCertificate, chain: [[UInt8]], leafFields: CertificateFields, sharing: Sharing,
        diagnostics: inout [Diagnostic]
    ) -> DomainCertificate? {
        var certificate = certificate
        do {
            certificate.credential = try DeferredCredential(
                chain: chain, leafFields: leafFields, keyPEM: certificate.keyPEM, staple: certificate.tableStaple,
                label: "certificate folder '\(certificate.folderName)'", intermediates: sharing.imported,
                vault: sharing.vault)
        } catch {
            diagnostics.append(refusal(error, certificate: certificate))
            return nil
        }
        certificate.chainPEM = []
        certificate.keyPEM = []
        return certificate
    }

    /// The finding for a certificate GnuTLS refused to import with `error`: the file at fault, and the fix.
    private static func refusal(_ error: any Error, certificate: DomainCertificate) -> Diagnostic {
        switch (error as? HTTPListenerError)?.code {
        case .keyMismatch?:
            Diagnostic(
                .error, rule: .certificateKeyMismatch,
                "privkey.pem does not belong to the certificate in fullchain.pem", file: certificate.privateKeyPath,
                hint: "copy the key that was generated with this certificate")
        case .invalidPrivateKey?:
            // Nothing of the key itself goes into a message.
            Diagnostic(
                .error, rule: .certificateInvalid, "cannot read the private key", file: certificate.privateKeyPath,
                hint: "privkey.pem must hold one unencrypted PEM private key")
        default:
            Diagnostic(
                .error, rule: .certificateInvalid,
                "cannot read the certificate chain: \((error as? HTTPListenerError)?.reason ?? "\(error)")",
                file: certificate.fullchainPath,
                hint: "fullchain.pem must hold PEM certificates, leaf first, matching privkey.pem")
        }
    }

    /// Until when a folder's findings hold: they change when the leaf expires and when the staple does; a
    /// staple that was refused is checked again at every load (it may have been refused for its dates).
    private static func findingsValidUntil(
        notAfter: Date, stapleFile: [UInt8]?, staple: (response: [UInt8], nextUpdate: Date)?, now: Date
    ) -> Date? {
        if stapleFile != nil, staple == nil { return nil }
        var until = Date.distantFuture
        if notAfter > now { until = notAfter }
        if let staple { until = min(until, staple.nextUpdate) }
        return until
    }

    /// Reads and checks `ocsp.der`, if the folder has one. A bad staple never costs the certificate: the
    /// handshake simply goes without one, and the warning says what to fix.
    ///
    /// Checking a staple takes the whole leaf and its issuer (the responder's signature, the certificate ID),
    /// so only folders with a staple have their chain parsed by OpenSSL.
    private static func loadStaple(
        _ data: [UInt8], folder: String, chainPEM: [UInt8], intermediates: IntermediateCertificates, now: Date,
        diagnostics: inout [Diagnostic]
    ) -> (response: [UInt8], nextUpdate: Date)? {
        let path = CertificateFile.staple.path(in: folder)
        // Every refusal is a warning on ocsp.der: the handshake goes on without a staple.
        func notStapled(_ reason: String, hint: String) -> (response: [UInt8], nextUpdate: Date)? {
            diagnostics.append(
                Diagnostic(.warning, rule: .ocspStaple, "not stapled: \(reason)", file: path, hint: hint))
            return nil
        }
        guard let chain = try? CertificateChain(pemEncoded: chainPEM, sharing: intermediates) else {
            return notStapled(
                "OpenSSL cannot read fullchain.pem to check the staple against it",
                hint: "fix fullchain.pem (PEM certificates, leaf first), or delete \(CertificateFile.staple.name)")
        }
        let leaf = chain.leaf
        let refresh =
            "fetch a fresh one, e.g. `openssl ocsp -issuer chain.pem -cert cert.pem -url <responder> "
            + "-respout \(path) -no_nonce`, or delete the file to stop stapling"
        guard let responder = leaf.ocspResponderURLs.first else {
            return notStapled(
                "the certificate names no OCSP responder, so clients have nothing to check it against",
                hint: "delete \(CertificateFile.staple.name), or use a certificate with an OCSP responder URL")
        }
        guard let issuer = chain.intermediates.first else {
            return notStapled(
                "fullchain.pem holds only the leaf, and the staple can only be checked against its issuer",
                hint: "put the issuing certificate after the leaf in fullchain.pem")
        }
        do {
            let validity = try OCSPResponse(derEncoded: data).validate(leaf: leaf, issuer: issuer, now: now)
            return (data, validity.nextUpdate)
        } catch let error as OpenSSLError {
            return notStapled("\(error.reason) (responder \(responder))", hint: refresh)
        } catch {
            return notStapled("\(error)", hint: refresh)
        }
    }
}

extension Rule {
    /// Reported by `CertificateDirectory`.
    public static let certificateKeyMismatch = Rule(
        "certificate-key-mismatch", .error,
        "`privkey.pem` does not belong to `fullchain.pem`, or a file cannot be read.")

    /// Reported by `CertificateDirectory`; also by `Server`.
    public static let certificateInvalid = Rule(
        "certificate-invalid", .error, "`privkey.pem` does not belong to `fullchain.pem`, or a file cannot be read.")

    /// Reported by `CertificateDirectory`.
    public static let ocspStaple = Rule(
        "ocsp-staple", .warning,
        "`ocsp.der` cannot be stapled (unreadable, for another certificate, expired, no responder): the handshake goes on without a staple."
    )
}
