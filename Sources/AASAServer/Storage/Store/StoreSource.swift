public import AASACore
import AASAMicroHTTPD
import AASAOpenSSL
import Foundation

/// The PostgreSQL store as a ``ConfigSource`` (`serve --store`): the rows of `domains`, `domain_files` and
/// `certificates`, listed in a few statements however many domains there are (``Store/listDomains(shard:names:)``),
/// their bytes fetched in batches as a load needs them (``StoreBatch``), and validated, generated and imported
/// exactly as the folders' files are.
///
/// A domain reads as its folder would, from its rows in memory (``MemoryFileTree``): diagnostics name
/// `<domain>/site.json:line:col` and `<domain>/pages/…`, and its pages are made by the same ``PageLoader``. A domain
/// read again fetches only the files whose digest moved (``StoredFiles``). Every file is dated by the change that
/// wrote it, so every replica serves the same `Last-Modified`. A certificate's private key is opened with the store
/// key (``StoreKey``) as it is read; a key that does not open is that certificate's error.
///
/// Until the first read from the database succeeds, a replica started while the store was unreachable reads its
/// snapshot (``StoreSnapshot``); every row read from the database is handed to the snapshot.
struct StoreSource: ConfigSource {
    /// The replica's connections.
    let link: StoreLink
    /// The shard whose rows are read; `nil`: every row.
    let shard: Shard?
    /// The key that opens the private keys; `nil`: certificates with a key are refused.
    let key: StoreKey?
    /// The snapshot rows are written to, and read from before the database has been reached.
    let snapshot: StoreSnapshot?
    /// Signs with the certificates the load serves; its cache keeps signatures across loads.
    let signer: AssociationSigner
    /// The first fetch of the current load the store did not answer (``takeReadFailure()``).
    let readFailure = StoreReadFailure()
    /// The files of the domains read, by digest: a domain read again fetches only the files that moved.
    let files: StoredFiles
    /// Where the certificates read keep their leaves and keys until a handshake imports them; `nil`: in memory.
    var vault: CredentialVault? = nil

    func takeReadFailure() -> Diagnostic? { readFailure.take() }

    /// Where messages place certificates: `certs/<name>/fullchain.pem`, as `store pull` writes them.
    static let certificateFolder = "certs"

    var domainsLocation: String { "the store at \(link.server)" }
    var certificatesLocation: String { "the store at \(link.server)" }

    func listDomains() throws(Diagnostic) -> [SourceDomain] {
        try domainReferences(names: nil).sorted { $0.key < $1.key }.map {
            SourceDomain(name: $0.key, reference: $0.value)
        }
    }

    func domain(named name: String) throws(Diagnostic) -> SourceDomain? {
        try domains(named: [name])[name]
    }

    func domains(named names: Set<String>) throws(Diagnostic) -> [String: SourceDomain] {
        guard !names.isEmpty else { return [:] }
        return Dictionary(
            uniqueKeysWithValues: try domainReferences(names: names).map {
                ($0.key, SourceDomain(name: $0.key, reference: $0.value))
            })
    }

    /// The domains of the shard (every one, or those named), as their rows' references.
    private func domainReferences(names: Set<String>?) throws(Diagnostic) -> [String: StoreReference<StoredDomain>] {
        try references(
            names: names, fromSnapshot: { $0.domainReferences(names: names) },
            list: { try $0.listDomains(shard: shard, names: names) },
            fetch: { [files] in try $0.fetchDomains($1, known: files) },
            listed: { [files] snapshot, found in
                snapshot?.listed(domains: found, names: names)
                if let names { files.forget(names.subtracting(found)) } else { files.retain(found) }
            }, record: { $0.record(domains: $1) })
    }

    /// The rows of the shard (every one, or those named) as references: from the snapshot while it is served, else
    /// listed in the store now, their bytes fetched batch by batch when a load takes them, each batch handed to the
    /// snapshot as it is fetched.
    private func references<Content>(
        names: Set<String>?, fromSnapshot: (StoreSnapshot) -> [String: StoreReference<Content>],
        list: (Store) throws -> [Store.Listed],
        fetch: @escaping @Sendable (Store, [Store.Listed]) throws -> [String: Content],
        listed: (StoreSnapshot?, Set<String>) -> Void,
        record: @escaping @Sendable (StoreSnapshot, [String: StoreRow<Content>?]) -> Void
    ) throws(Diagnostic) -> [String: StoreReference<Content>] {
        if let snapshot, snapshot.isServing { return fromSnapshot(snapshot) }
        let rows: [Store.Listed]
        do {
            rows = try link.read(list)
        } catch {
            throw unreachable(error)
        }
        listed(snapshot, Set(rows.map(\.name)))
        var references: [String: StoreReference<Content>] = [:]
        references.reserveCapacity(rows.count)
        for batch in Store.batches(rows.filter { $0.refusal == nil }, size: \.size) {
            let shared = StoreBatch<Content>(batch) { [link, snapshot] rows in
                let fetched = try link.read { try fetch($0, rows) }
                if let snapshot {
                    var kept: [String: StoreRow<Content>?] = [:]
                    for row in rows {
                        kept[row.name] = .some(
                            fetched[row.name].map {
                                StoreRow(changeID: row.changeID, changedAt: row.changedAt, content: .success($0))
                            })
                    }
                    record(snapshot, kept)
                }
                return fetched
            }
            for row in batch {
                references[row.name] = StoreReference(
                    changeID: row.changeID, changedAt: row.changedAt, bytes: .batch(shared))
            }
        }
        for row in rows {
            if let refusal = row.refusal {
                references[row.name] = StoreReference(
                    changeID: row.changeID, changedAt: row.changedAt, bytes: .read(.failure(refusal)))
            }
        }
        return references
    }

    func readDomain(_ domain: SourceDomain, reusing previous: LoadedDomain?, with loader: SiteConfigLoader)
        -> LoadedDomain
    {
        guard case .stored(let row) = domain.location else { preconditionFailure("StoreSource reads only rows") }
        let name = domain.name
        let file = name.joiningPath(SiteConfigLoader.fileName)
        // A domain that signs is signed again at every load (its signature's certificate may have changed).
        if let previous, previous.revision == row.changeID, previous.configStorage?.value.signing?.enabled != true {
            return previous
        }
        func failed(_ rule: Rule, _ message: String, hint: String) -> LoadedDomain {
            var loaded = LoadedDomain(
                domain: name, file: file, diagnostics: [Diagnostic(.error, rule: rule, message, file: file, hint: hint)]
            )
            loaded.revision = row.changeID
            return loaded
        }
        var loaded: LoadedDomain
        if let problem = SiteConfigLoader.domainNameProblem(name) {
            loaded = LoadedDomain(
                domain: name, file: file,
                diagnostics: [Diagnostic(.error, rule: .domainName, problem.message, file: file, hint: problem.hint)])
        } else {
            switch row.take(name) {
            case .refused(let refusal) where refusal.rule == .storedValue:
                // No revision: the row is read again at the next load that names it, once its value is fixed.
                return LoadedDomain(
                    domain: name, file: file,
                    diagnostics: [
                        Diagnostic(.error, rule: .storedValue, refusal.description, file: file, hint: refusal.hint)
                    ])
            case .refused(let refusal):
                return failed(.fileTooLarge, refusal.description, hint: "push the domain again from its folder")
            case .unreachable(let error):
                // The whole load fails with this one finding (the Loader takes it); what is returned is not kept.
                readFailure.record(unreachable(error))
                return previous ?? LoadedDomain(domain: name, file: file, diagnostics: [])
            case .content(let stored):
                if let bad = stored.files.keys.filter({ !Confinement.isRelativePathInside($0) }).min() {
                    return failed(
                        .pathOutside,
                        "the stored file '\(bad)' is not a path inside the domain folder; nothing of the domain is read",
                        hint: "push the domain again from its folder")
                }
                // Read from memory, where a folder would be: nothing is written to disk, and every finding names
                // `<domain>/<path>`.
                let tree = stored.tree(modified: row.changedAt)
                loaded = loader.loadDomain(
                    domain: name, source: SourceText(name: file, bytes: stored.siteJSON), tree: tree,
                    folderFacts: PageLoader.FolderFacts(
                        configModified: tree.modified(file), entries: tree.names(in: name),
                        confinement: Confinement(folder: name)))
            }
        }
        loaded.revision = row.changeID
        return loaded
    }

    func readCertificates(
        known: [String: CertificateDirectory.KnownFolder], only: Set<String>?, now: Date, leavingProcessors: Int
    ) -> CertificateRead {
        let references: [String: StoreReference<StoredCertificate>]
        do {
            references = try certificateReferences(names: only)
        } catch {
            // Nothing read: every certificate keeps what it serves.
            return CertificateRead(folders: [], failure: error)
        }
        let sharing = CertificateDirectory.Sharing(vault: vault)
        let read = references.sorted { $0.key < $1.key }.concurrentMap(leaving: leavingProcessors) {
            name, reference -> CertificateDirectory.Folder? in
            let location = Self.certificateFolder.joiningPath(name)
            switch reference.take(name) {
            case .refused(let refusal):
                return CertificateDirectory.Folder(
                    name: name, certificate: nil,
                    diagnostics: [
                        Diagnostic(
                            .error, rule: refusal.rule ?? .certificateInvalid, refusal.description,
                            file: CertificateFile.chain.path(in: location),
                            hint: refusal.hint ?? "push the certificate again")
                    ])
            case .unreachable:
                return nil
            case .content(let stored):
                return CertificateDirectory.readFolder(
                    name: name, location: location, files: files(of: stored), now: now, known: known[name],
                    importing: true, sharing: sharing)
            }
        }
        let folders = read.compactMap { $0 }
        guard folders.count == read.count else {
            return CertificateRead(folders: [], failure: unreachable(StoreError("the store stopped answering")))
        }
        return CertificateRead(folders: folders, findings: [])
    }

    /// The certificates the shard reads (every one, or those named), as their rows' references.
    private func certificateReferences(names: Set<String>?) throws(Diagnostic)
        -> [String: StoreReference<StoredCertificate>]
    {
        try references(
            names: names, fromSnapshot: { $0.certificateReferences(names: names) },
            list: { try $0.listCertificates(shard: shard, names: names) }, fetch: { try $0.fetchCertificates($1) },
            listed: { $0?.listed(certificates: $1, names: names) }, record: { $0.record(certificates: $1) })
    }

    /// Reads the files of `certificate` through its tree in memory (``StoredCertificate/tree``), each within its cap;
    /// the private key, which the row holds sealed, is opened with the store key.
    private func files(of certificate: StoredCertificate) -> CertificateDirectory.FileReader {
        let files = CertificateDirectory.files(of: certificate.name, in: certificate.tree)
        return { [key] file in
            guard file == .privateKey else { return files(file) }
            guard let sealed = certificate.files[file] else { return .failure(.missing) }
            guard let key else {
                return .failure(
                    .unreadable(
                        "the store holds it sealed, and no --store-key-file was given to open it"))
            }
            do {
                return .success(try key.open(sealed, context: Store.sealingContext(certificate.name)))
            } catch {
                return .failure(
                    .unreadable(
                        "\(key.file) does not open it (\(error)); name the key file the certificate was pushed with"))
            }
        }
    }

    /// Why `loaded` cannot be served from a store: its signature names files of its folder (`signing.certificate`),
    /// which the store does not hold; `nil` when it can.
    static func unstorableSigning(_ loaded: LoadedDomain) -> Diagnostic? {
        guard let signing = loaded.configStorage?.value.signing, signing.enabled,
            signing.certificate != nil || signing.key != nil
        else { return nil }
        return Diagnostic(
            .error, rule: .signingIdentity,
            "signing.certificate names files of the domain folder, which a store does not hold", file: loaded.file,
            keyPath: "signing.certificate",
            hint: "sign with the domain's TLS certificate (\"signing\": true) and push it with `store push --certs`")
    }

    func sign(_ loaded: [LoadedDomain], now: Date, certificates: CertificateCatalog?) -> [LoadedDomain] {
        // Nothing of a replica's disk stands in for the tenant's folder. Changed in place: a copy of every domain's
        // result only for the few refused.
        var loaded = loaded
        for index in loaded.indices {
            if let refusal = Self.unstorableSigning(loaded[index]) { loaded[index].diagnostics.append(refusal) }
        }
        let served = certificates.map { catalog in
            SigningCertificates.served(catalog, directory: Self.certificateFolder) { name in
                guard case .content(let stored)? = try? certificateReferences(names: [name])[name]?.take(name) else {
                    return { _ in .failure(.missing) }
                }
                return files(of: stored)
            }
        }
        return signer.sign(loaded, now: now, certificates: served)
    }

    /// The finding for a read of the store that failed: what serves stays as it is.
    private func unreachable(_ error: any Error) -> Diagnostic {
        Diagnostic(
            .error, rule: .storeUnreachable, "cannot read the store at \(link.server): \(error)",
            hint: "nothing to do if the database is coming back: the replica keeps serving what it last read, and "
                + "catches up when it reconnects")
    }
}

extension SourceDomain {
    /// The domain of a row of the store.
    init(name: String, reference: StoreReference<StoredDomain>) {
        self.name = name
        location = .stored(reference)
    }
}

extension Rule {
    /// Reported by `StoreSource`.
    public static let storeUnreachable = Rule(
        "store-unreachable", .error,
        "The store (`serve --store`) cannot be read: the replica keeps serving what it last read from it.")

    /// Reported by `StoreSource`, for a row of the store and a record of its snapshot.
    public static let storedValue = Rule(
        "stored-value", .error,
        "A row of the store or a record of the snapshot (`--store-cache`) holds a value out of range (a time that is "
            + "not finite): that row is not read, every other one is.")
}
