public import AASACore
public import AASAOpenSSL
import Foundation

/// `aasa-server store push`: uploads a config folder (and a certificate folder) to the store.
///
/// Each domain folder is read as `check` reads it (``SiteConfigLoader``, the same confinement, caps and
/// diagnostics); a domain with an error is refused and nothing of it is written. A valid domain whose bytes differ
/// from the stored ones is written whole in one transaction, and reported with the semantic diff of what was stored
/// against what is pushed (``DomainDiff``); one whose bytes are the stored ones is left alone.
///
/// A folder whose tree has not changed since a push compared its row with it (its ``FolderStamp``, kept with the row,
/// is the same, and no other write moved the row since) is not read or checked again: a second push of a million
/// unchanged folders lists and stats them and reads nothing else. The stamp covers the build that checked the folder
/// (and, for a certificate, the store key), so a new release or another key compares every folder again.
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
        /// The domain and certificate folders left alone unread: their stamps are the ones their rows hold.
        public var unread = 0
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
        // The folders' entries come from the disk ahead of the batches that stamp them; the files of the folders
        // that are read come ahead of their checks, batch by batch.
        let ahead = FolderReadAhead.start(
            folders.map(\.path), count: folders.count, files: [SiteConfigLoader.fileName], reading: .entries)
        defer { ahead?.stop() }
        let context = Self.buildIdentity.map { "domain\u{0}" + $0 }
        var first = 0
        for batch in Store.batches(folders, maximumCount: Self.domainsPerBatch) {
            try push(
                batch, from: first, ahead: ahead, context: context, to: store, tls: &tls, outcome: &outcome, say: say)
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
        if let certs {
            let certificates = try pushCertificates(certs, to: store, say: say)
            outcome.changed += certificates.changed
            outcome.unread += certificates.unread
        }
        return outcome
    }

    /// What tells this build from any other: the device, inode, size and modification time of the running executable,
    /// or `nil` (and no folder is stamped) when it cannot be read.
    static let buildIdentity: String? = {
        var status = stat()
        guard stat("/proc/self/exe", &status) == 0 else { return nil }
        return [
            UInt64(status.st_dev), UInt64(status.st_ino), UInt64(status.st_size), UInt64(status.st_mtim.tv_sec),
            UInt64(status.st_mtim.tv_nsec),
        ].map { String($0) }.joined(separator: ":")
    }()

    /// The stamps of `folders` (`nil` for one that cannot be stamped), taken on every processor, and which of them
    /// are the ones `stored` holds.
    static func stamps(
        _ folders: [String], from first: Int, ahead: FolderReadAhead?, context: String?,
        stored: [String: Store.PushStamp], names: [String]
    ) -> (stamps: [String?], unchanged: [Bool]) {
        let stamps = folders.indices.concurrentMap { index -> String? in
            ahead?.reached(first + index)
            return context.flatMap { FolderStamp.of(folders[index], context: $0) }
        }
        let unchanged = zip(names, stamps).map { name, stamp in stamp != nil && stored[name]?.stamp == stamp }
        return (stamps, unchanged)
    }

    /// A domain read from its folder, as it is to be stored, its load, the bytes it holds, and its folder's stamp
    /// with the row's stamp and change as read before the folder was.
    private struct Pushed: Sendable {
        let domain: StoredDomain
        let loaded: LoadedDomain
        let bytes: Int
        let stamp: String?
        let stored: Store.PushStamp?

        init(domain: StoredDomain, loaded: LoadedDomain, stamp: String?, stored: Store.PushStamp?) {
            self.domain = domain
            self.loaded = loaded
            bytes = domain.siteJSON.count + domain.files.values.reduce(0) { $0 + $1.count }
            // A domain signing with a TLS certificate is checked with the certificate folder's files, which its
            // stamp does not cover.
            self.stamp = AssociationSigner.signsWithTLSCertificate(loaded) ? nil : stamp
            self.stored = stored
        }
    }

    /// Checks `folders` as `check` does (the TLS certificates of a signing domain read into `tls` once, when a
    /// batch first needs them), reads the valid ones and writes those that differ from the store. `first` is the
    /// place of the batch's first folder in what `ahead` reads ahead.
    private func push(
        _ batch: [DomainFolder], from first: Int, ahead: FolderReadAhead?, context: String?, to store: Store,
        tls: inout SigningCertificates?, outcome: inout Outcome, say: (String) -> Void
    ) throws {
        let known = try store.pushStamps(.domains, batch.map(\.domain))
        let (stamps, unchanged) = Self.stamps(
            batch.map(\.path), from: first, ahead: ahead, context: context, stored: known, names: batch.map(\.domain))
        outcome.unread += unchanged.count(where: { $0 })
        let kept = batch.indices.filter { !unchanged[$0] }
        guard !kept.isEmpty else { return }
        let folders = kept.map { batch[$0] }
        let reading = FolderReadAhead.start(
            folders.map(\.path), count: folders.count, files: [SiteConfigLoader.fileName])
        defer { reading?.stop() }
        let loader = SiteConfigLoader()
        let loaded = folders.indices.concurrentMap { index in
            reading?.reached(index)
            return loader.loadDomain(folders[index])
        }
        if tls == nil && loaded.contains(where: AssociationSigner.signsWithTLSCertificate) {
            tls = SigningCertificates.read(excludedCerts)
        }
        let signed = AssociationSigner(certificateDirectory: excludedCerts).sign(loaded, now: Date(), certificates: tls)
        var pending: [Pushed] = []
        var pendingBytes = 0
        let items = zip(kept, zip(folders, signed)).map { (stamp: stamps[$0], folder: $1.0, domain: $1.1) }
        for group in Store.batches(items, maximumCount: Self.foldersReadTogether) {
            let read = group.concurrentMap { stamp, folder, domain -> (pushed: Pushed?, refusal: [Diagnostic]) in
                let errors = domain.diagnostics.errors + (StoreSource.unstorableSigning(domain).map { [$0] } ?? [])
                guard errors.isEmpty, let confinement = folder.confinement else { return (nil, errors) }
                do throws(Diagnostic) {
                    let read = try Self.read(folder, confinement: confinement, loaded: domain, pages: loader.pages)
                    return (Pushed(domain: read, loaded: domain, stamp: stamp, stored: known[folder.domain]), [])
                } catch {
                    return (nil, [error])
                }
            }
            for ((_, _, domain), result) in zip(group, read) {
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
        var stamps: [Store.NewStamp] = []
        for (item, summary) in zip(pushed, summaries) {
            guard let summary else {
                if let stamp = item.stamp, let stored = item.stored, stored.stamp != stamp {
                    stamps.append(Store.NewStamp(name: item.domain.name, stamp: stamp, seen: stored.change))
                }
                continue
            }
            say(summary)
            outcome.changed += 1
            var write = Store.DomainWrite(item.domain, summary: String(summary.dropFirst(item.domain.name.count + 2)))
            write.stamp = item.stamp
            writes.append(write)
        }
        if !dryRun {
            try store.put(writes)
            try store.recordPushStamps(.domains, stamps)
        }
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
            let path = folder.path.joiningPath(template)
            switch ConfinedFile.read(path, within: confinement, maximumBytes: pages.maximumTemplateBytes) {
            case .success(let contents): files[template] = contents.bytes
            case .failure(let refusal): throw refusal.diagnostic(path, what: "the landing page template")
            }
        }
        return StoredDomain(name: folder.domain, siteJSON: site, files: files)
    }

    /// Pushes every certificate folder of `directory` (a folder with a `fullchain.pem` or a `privkey.pem`; others,
    /// such as `dev-ca/`, are not certificates); returns how many changed, and how many were left alone unread.
    func pushCertificates(_ directory: String, to store: Store, say: (String) -> Void) throws -> (
        changed: Int, unread: Int
    ) {
        guard let key else { throw StoreError("pushing certificates needs --store-key-file") }
        guard let names = DirectoryListing.folderNames(in: directory), let real = Confinement.realPath(directory)
        else {
            throw StoreError(
                "\(directory): error: the certificate folder cannot be listed; fix: name an existing folder")
        }
        let confinement = Confinement(folder: real)
        // Another store key compares every certificate again, so a key that does not open the stored ones is named.
        let context = Self.buildIdentity.map { "certificate\u{0}\($0)\u{0}\(key.keyIDText)" }
        var changed = 0
        var unread = 0
        var present: Set<String> = []
        var pending: [PendingCertificate] = []
        var pendingBytes = 0
        let sorted = names.sorted()
        let ahead = FolderReadAhead.start(
            sorted.map { directory.joiningPath($0) }, count: sorted.count, files: CertificateFile.readAhead,
            reading: .entries)
        defer { ahead?.stop() }
        var first = 0
        for batch in Store.batches(sorted, maximumCount: Self.domainsPerBatch) {
            let stored = try store.pushStamps(.certificates, batch)
            let (stamps, unchanged) = Self.stamps(
                batch.map { directory.joiningPath($0) }, from: first, ahead: ahead, context: context, stored: stored,
                names: batch)
            first += batch.count
            var toRead: [(name: String, stamp: String?)] = []
            for (index, name) in batch.enumerated() {
                if unchanged[index] {
                    present.insert(name)
                    unread += 1
                } else {
                    toRead.append((name, stamps[index]))
                }
            }
            let reading = FolderReadAhead.start(
                toRead.map { directory.joiningPath($0.name) }, count: toRead.count, files: CertificateFile.readAhead)
            defer { reading?.stop() }
            var reached = 0
            for group in Store.batches(toRead, maximumCount: Self.foldersReadTogether) {
                let offset = reached
                let read = group.indices.concurrentMap { index in
                    reading?.reached(offset + index)
                    return Result { () throws(StoreError) in
                        try Self.readCertificate(group[index].name, in: directory, confinement: confinement)
                    }
                }
                reached += group.count
                for ((_, stamp), result) in zip(group, read) {
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
                    pending.append(
                        PendingCertificate(
                            certificate: StoredCertificate(name: name, files: files), stamp: stamp,
                            stored: stored[name]))
                    pendingBytes += bytes
                }
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
        return (changed, unread)
    }

    /// A certificate folder read and waiting to be compared: its files, its folder's stamp, and its row's stamp and
    /// change as read before the folder was.
    private struct PendingCertificate: Sendable {
        var certificate: StoredCertificate
        var stamp: String?
        var stored: Store.PushStamp?
    }

    /// The files of the certificate folder `name` of `directory`, or `nil` when it has neither a chain nor a key (such
    /// as `dev-ca/`: not a certificate).
    static func readCertificate(_ name: String, in directory: String, confinement: Confinement) throws(StoreError)
        -> (name: String, files: [CertificateFile: [UInt8]])?
    {
        var files: [CertificateFile: [UInt8]] = [:]
        for file in CertificateFile.allCases {
            let path = file.path(in: directory.joiningPath(name))
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
        _ pending: [PendingCertificate], to store: Store, key: StoreKey, say: (String) -> Void
    ) throws -> Int {
        guard !pending.isEmpty else { return 0 }
        let read = pending.map(\.certificate)
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
        var stamps: [String: String] = [:]
        var unchanged: [Store.NewStamp] = []
        for (item, outcome) in zip(pending, sealed) {
            let certificate = item.certificate
            guard let write = try outcome.get() else {
                if let stamp = item.stamp, let before = item.stored, before.stamp != stamp {
                    unchanged.append(Store.NewStamp(name: certificate.name, stamp: stamp, seen: before.change))
                }
                continue
            }
            say(
                "certificate \(certificate.name): \(stored[certificate.name] == nil ? "added" : "updated")"
                    + (dryRun ? " (dry run: not written)" : ""))
            writes.append(write)
            stamps[certificate.name] = item.stamp
        }
        if !dryRun {
            try store.put(writes, stamps: stamps)
            try store.recordPushStamps(.certificates, unchanged)
        }
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
