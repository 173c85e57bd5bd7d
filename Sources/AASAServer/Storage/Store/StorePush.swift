public import AASACore
public import AASAOpenSSL
import Foundation

/// `aasa-server store push`: uploads a config folder (and a certificate folder) to the store.
///
/// Each domain folder is read as `check` reads it (``SiteConfigLoader``, the same confinement, caps and
/// diagnostics); a domain with an error is refused and nothing of it is written. A valid domain whose bytes differ
/// from the stored ones is written whole in one transaction, and reported with the semantic diff of what was stored
/// against what is pushed (``DomainDiff``); one whose bytes are the stored ones is left alone.
public struct StorePush {
    /// The config folder.
    public var config: String
    /// The certificate folder to push, or `nil` for none.
    public var certs: String?
    /// The certificate folder no domain file may be read from (as `check`: `--certs`, else `certs`).
    public var excludedCerts: String
    /// The key private keys are sealed with; required with ``certs``.
    public var key: StoreKey?
    /// Read and compare, write nothing.
    public var dryRun = false
    /// Delete stored domains (and, with ``certs``, certificates) the folders do not have.
    public var prune = false

    /// The most bytes read of one certificate folder's file.
    public static let maximumCertificateFileBytes = 1 << 20

    /// What a push did.
    public struct Outcome: Sendable {
        /// The domains refused, with their errors.
        public var refused: [(domain: String, diagnostics: [Diagnostic])] = []
        /// The domains and certificates written (or, dry, that would be) and removed.
        public var changed = 0
    }

    /// A push of `config`.
    public init(config: String, certs: String?, excludedCerts: String, key: StoreKey?) {
        self.config = config
        self.certs = certs
        self.excludedCerts = excludedCerts
        self.key = key
    }

    /// Domain folders checked together, and the most domains (or certificates) written in one transaction.
    public static let domainsPerBatch = 1_000
    /// Folders whose files are read at once, on every processor: as many as the caps of a folder (a domain's pages
    /// at most 64 MiB, a certificate's files 4 MiB) times this bound the bytes read and not yet written.
    static let foldersReadTogether = 16

    /// Pushes to `store`, saying one line per change through `say`.
    ///
    /// The folders go in batches of ``domainsPerBatch``: checked on every processor, compared with one read of the
    /// batch's stored site.json and file digests (no stored file's bytes), and the changed ones written in one
    /// transaction per batch (at most ``Store/batchBytes`` of files each), every domain with its own change and
    /// history entry.
    ///
    /// - Throws: a ``PostgresError`` or ``StoreError`` when the store fails, a ``Diagnostic`` when the config folder
    ///   cannot be listed, ``StoreError`` when a certificate folder cannot be read.
    public func run(_ store: Store, say: (String) -> Void) throws -> Outcome {
        var outcome = Outcome()
        let folders = try DomainFolder.list(config, excluding: [excludedCerts])
        var tls: SigningCertificates?
        // The folders come from the disk ahead of the batches that check them.
        let ahead = FolderReadAhead.start(folders.map(\.path), count: folders.count, files: [SiteConfigLoader.fileName])
        defer { ahead?.stop() }
        var first = 0
        for batch in Store.batches(folders, maximumCount: Self.domainsPerBatch) {
            try push(batch, from: first, ahead: ahead, to: store, tls: &tls, outcome: &outcome, say: say)
            first += batch.count
        }
        if prune {
            let present = Set(folders.map(\.domain))
            let gone = try store.domainNames().filter { !present.contains($0) }
            for name in gone { say("\(name): removed\(dryRun ? " (dry run: not written)" : "")") }
            outcome.changed += gone.count
            if !dryRun {
                for batch in Store.batches(gone, maximumCount: Self.domainsPerBatch) { try store.deleteDomains(batch) }
            }
        }
        if let certs { outcome.changed += try pushCertificates(certs, to: store, say: say) }
        return outcome
    }

    /// A domain read from its folder, as it is to be stored, its load, and the bytes it holds.
    private struct Pushed: Sendable {
        let domain: StoredDomain
        let loaded: LoadedDomain
        let bytes: Int

        init(domain: StoredDomain, loaded: LoadedDomain) {
            self.domain = domain
            self.loaded = loaded
            bytes = domain.siteJSON.count + domain.files.values.reduce(0) { $0 + $1.count }
        }
    }

    /// Checks `folders` as `check` does (the TLS certificates of a signing domain read into `tls` once, when a
    /// batch first needs them), reads the valid ones and writes those that differ from the store. `first` is the
    /// place of the batch's first folder in what `ahead` reads ahead.
    private func push(
        _ folders: [DomainFolder], from first: Int, ahead: FolderReadAhead?, to store: Store,
        tls: inout SigningCertificates?, outcome: inout Outcome, say: (String) -> Void
    ) throws {
        let loader = SiteConfigLoader()
        let loaded = folders.indices.concurrentMap { index in
            ahead?.reached(first + index)
            return loader.loadDomain(folders[index])
        }
        if tls == nil && loaded.contains(where: AssociationSigner.signsWithTLSCertificate) {
            tls = SigningCertificates.read(excludedCerts)
        }
        let signed = AssociationSigner(certificateDirectory: excludedCerts).sign(loaded, now: Date(), certificates: tls)
        var pending: [Pushed] = []
        var pendingBytes = 0
        for group in Store.batches(Array(zip(folders, signed)), maximumCount: Self.foldersReadTogether) {
            let read = group.concurrentMap { folder, domain -> (pushed: Pushed?, refusal: [Diagnostic]) in
                let errors = domain.diagnostics.errors + (StoreSource.unstorableSigning(domain).map { [$0] } ?? [])
                guard errors.isEmpty, let confinement = folder.confinement else { return (nil, errors) }
                do throws(Diagnostic) {
                    let stored = try Self.read(folder, confinement: confinement, loaded: domain, pages: loader.pages)
                    return (Pushed(domain: stored, loaded: domain), [])
                } catch {
                    return (nil, [error])
                }
            }
            for ((_, domain), result) in zip(group, read) {
                guard let pushed = result.pushed else {
                    outcome.refused.append((domain.domain, result.refusal))
                    continue
                }
                if !pending.isEmpty && pendingBytes + pushed.bytes > Store.batchBytes {
                    try write(pending, to: store, outcome: &outcome, say: say)
                    pending = []
                    pendingBytes = 0
                }
                pending.append(pushed)
                pendingBytes += pushed.bytes
            }
        }
        try write(pending, to: store, outcome: &outcome, say: say)
    }

    /// Compares `pushed` with what the store holds (one read for them all; the files' digests and the summaries made
    /// on every processor) and writes those that differ in one transaction, saying each one's summary in order.
    private func write(_ pushed: [Pushed], to store: Store, outcome: inout Outcome, say: (String) -> Void) throws {
        guard !pushed.isEmpty else { return }
        let stored = try store.domainDigests(pushed.map(\.domain.name))
        let dryRun = dryRun
        let summaries = pushed.concurrentMap { item -> String? in
            let before = stored[item.domain.name]
            let digests = before == nil ? [:] : item.domain.files.mapValues(SHA256.digest)
            if let before, before.siteJSON == item.domain.siteJSON, before.files == digests { return nil }
            return Self.summary(
                stored: before, pushed: item.domain, digests: digests, loaded: item.loaded, dryRun: dryRun)
        }
        var writes: [Store.DomainWrite] = []
        for (item, summary) in zip(pushed, summaries) {
            guard let summary else { continue }
            say(summary)
            outcome.changed += 1
            writes.append(
                Store.DomainWrite(item.domain, summary: String(summary.dropFirst(item.domain.name.count + 2))))
        }
        if !dryRun { try store.put(writes) }
    }

    /// `<domain>: <semantic diff summary>[; pages: …]`, from what the store holds (`digests`: the pushed files'
    /// digests, given when the store holds the domain).
    static func summary(
        stored: Store.DomainDigests?, pushed: StoredDomain, digests: [String: [UInt8]], loaded: LoadedDomain,
        dryRun: Bool
    ) -> String {
        let suffix = dryRun ? " (dry run: not written)" : ""
        guard let stored else { return "\(pushed.name): added (every URL's answer is the pushed config's)\(suffix)" }
        var parts: [String] = []
        if stored.siteJSON != pushed.siteJSON {
            let before = stored.siteJSON.map { bytes in
                SiteConfigLoader().loadDomain(
                    domain: pushed.name,
                    source: SourceText(name: "\(pushed.name)/site.json (stored)", bytes: bytes))
            }
            if let before, let old = DiffSide(loaded: before), let new = DiffSide(loaded: loaded) {
                parts.append(DomainDiff(domain: pushed.name, old: old, new: new).summary)
            } else {
                parts.append("the stored site.json does not load; every URL's answer is the pushed config's")
            }
        } else {
            parts.append("site.json unchanged")
        }
        let added = digests.keys.filter { stored.files[$0] == nil }.count
        let removed = stored.files.keys.filter { digests[$0] == nil }.count
        let changed = digests.filter { path, digest in stored.files[path].map { $0 != digest } ?? false }.count
        if added + removed + changed > 0 {
            parts.append("pages: \(changed) changed, \(added) added, \(removed) removed")
        }
        return "\(pushed.name): " + parts.joined(separator: "; ") + suffix
    }

    /// The domain's site.json and every file of its `pages/` (``PageLoader/files(of:confinement:)``: the walk, caps
    /// and confinement of a load), and a landing template configured outside `pages/`; a page error refuses the
    /// domain.
    static func read(
        _ folder: DomainFolder, confinement: Confinement, loaded: LoadedDomain, pages: PageLoader
    ) throws(Diagnostic) -> StoredDomain {
        let site: [UInt8]
        switch ConfinedFile.read(folder.file, within: confinement, maximumBytes: SiteConfigLoader.maximumConfigBytes) {
        case .success(let contents): site = contents.bytes
        case .failure(let refusal): throw refusal.diagnostic(folder.file, what: SiteConfigLoader.fileName)
        }
        let walked = pages.files(of: folder.path, confinement: confinement)
        if let error = walked.diagnostics.errors.first { throw error }
        var files = walked.files
        // PagesRule refuses a template path that leaves the domain folder, so a loaded config names one inside it.
        if let template = loaded.config?.pages.landingPage.template, files[template] == nil {
            let path = folder.path + "/" + template
            switch ConfinedFile.read(path, within: confinement, maximumBytes: pages.maximumTemplateBytes) {
            case .success(let contents): files[template] = contents.bytes
            case .failure(let refusal): throw refusal.diagnostic(path, what: "the landing page template")
            }
        }
        return StoredDomain(name: folder.domain, siteJSON: site, files: files)
    }

    /// Pushes every certificate folder of `directory` (a folder with a `fullchain.pem` or a `privkey.pem`; others,
    /// such as `dev-ca/`, are not certificates); returns how many changed.
    func pushCertificates(_ directory: String, to store: Store, say: (String) -> Void) throws -> Int {
        guard let key else { throw StoreError("pushing certificates needs --store-key-file") }
        guard let names = DirectoryListing.folderNames(in: directory), let real = Confinement.realPath(directory)
        else {
            throw StoreError(
                "\(directory): error: the certificate folder cannot be listed; fix: name an existing folder")
        }
        let confinement = Confinement(folder: real)
        var changed = 0
        var present: Set<String> = []
        var pending: [StoredCertificate] = []
        var pendingBytes = 0
        let sorted = names.sorted()
        let ahead = FolderReadAhead.start(
            sorted.map { directory + "/" + $0 }, count: sorted.count, files: CertificateFile.readAhead)
        defer { ahead?.stop() }
        var first = 0
        for group in Store.batches(sorted, maximumCount: Self.foldersReadTogether) {
            let offset = first
            let read = group.indices.concurrentMap { index in
                ahead?.reached(offset + index)
                return Result { () throws(StoreError) in
                    try Self.readCertificate(group[index], in: directory, confinement: confinement)
                }
            }
            first += group.count
            for result in read {
                guard let certificate = try result.get() else { continue }
                let (name, files) = certificate
                present.insert(name)
                let bytes = files.values.reduce(0) { $0 + $1.count }
                if pending.count >= Self.domainsPerBatch
                    || (!pending.isEmpty && pendingBytes + bytes > Store.batchBytes)
                {
                    changed += try writeCertificates(pending, to: store, key: key, say: say)
                    pending = []
                    pendingBytes = 0
                }
                pending.append(StoredCertificate(name: name, files: files))
                pendingBytes += bytes
            }
        }
        changed += try writeCertificates(pending, to: store, key: key, say: say)
        if prune {
            // A certificate the fleet obtained by ACME is the fleet's, not the folder's: pruning keeps it.
            let obtained = Set(try store.obtainedCertificateNames())
            let gone = try store.certificateNames().filter { !present.contains($0) && !obtained.contains($0) }
            for name in gone { say("certificate \(name): removed\(dryRun ? " (dry run: not written)" : "")") }
            changed += gone.count
            if !dryRun {
                for batch in Store.batches(gone, maximumCount: Self.domainsPerBatch) {
                    try store.deleteCertificates(batch)
                }
            }
        }
        return changed
    }

    /// The files of the certificate folder `name` of `directory`, or `nil` when it has neither a chain nor a key (such
    /// as `dev-ca/`: not a certificate).
    static func readCertificate(_ name: String, in directory: String, confinement: Confinement) throws(StoreError)
        -> (name: String, files: [CertificateFile: [UInt8]])?
    {
        var files: [CertificateFile: [UInt8]] = [:]
        for file in CertificateFile.allCases {
            let path = file.path(in: directory + "/" + name)
            switch ConfinedFile.read(path, within: confinement, maximumBytes: Self.maximumCertificateFileBytes) {
            case .success(let contents): files[file] = contents.bytes
            case .failure(.missing): continue
            case .failure(let refusal): throw StoreError(refusal.diagnostic(path, what: file.name).description)
            }
        }
        return files[.chain] != nil || files[.privateKey] != nil ? (name, files) : nil
    }

    /// Compares `read` (the certificate folders' files, private keys in plaintext) with what the store holds (one
    /// read for them all; the stored keys opened and the new ones sealed on every processor) and writes those that
    /// differ, their keys sealed, in one transaction; returns how many. The first certificate that fails, in order, is
    /// the error, and nothing is written.
    private func writeCertificates(
        _ read: [StoredCertificate], to store: Store, key: StoreKey, say: (String) -> Void
    ) throws -> Int {
        guard !read.isEmpty else { return 0 }
        let stored = try store.certificates(read.map(\.name))
        let sealed = read.concurrentMap { certificate -> Result<StoredCertificate?, any Error> in
            Result {
                if let before = stored[certificate.name], try Self.same(before, certificate.files, key: key) {
                    return nil
                }
                var sealed = certificate
                if let plain = certificate.files[.privateKey] {
                    sealed.files[.privateKey] = try key.seal(plain, context: Store.sealingContext(certificate.name))
                }
                return sealed
            }
        }
        var writes: [StoredCertificate] = []
        for (certificate, outcome) in zip(read, sealed) {
            guard let write = try outcome.get() else { continue }
            say(
                "certificate \(certificate.name): \(stored[certificate.name] == nil ? "added" : "updated")"
                    + (dryRun ? " (dry run: not written)" : ""))
            writes.append(write)
        }
        if !dryRun { try store.put(writes) }
        return writes.count
    }

    /// Whether `stored` holds exactly `files`, its private key compared after opening.
    ///
    /// - Throws: ``StoreError`` naming the key file when the stored key does not open under `key`: pushing would
    ///   reseal it under a key the other replicas may not have, so nothing is written.
    static func same(_ stored: StoredCertificate, _ files: [CertificateFile: [UInt8]], key: StoreKey) throws -> Bool {
        for file in CertificateFile.allCases {
            if file == .privateKey, let sealed = stored.files[file] {
                let opened: [UInt8]
                do {
                    opened = try key.open(sealed, context: Store.sealingContext(stored.name))
                } catch {
                    throw StoreError(
                        "\(key.file): error: the store key does not open the stored private key of certificate "
                            + "\(stored.name) (\(error)); nothing is written; fix: push with the key file the store "
                            + "was written with")
                }
                if opened != files[file] { return false }
            } else if stored.files[file] != files[file] {
                return false
            }
        }
        return true
    }
}
