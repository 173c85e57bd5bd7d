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

    /// Pushes to `store`, saying one line per change through `say`.
    ///
    /// - Throws: a ``PostgresError`` or ``StoreError`` when the store fails, a ``Diagnostic`` when the config folder
    ///   cannot be listed, ``StoreError`` when a certificate folder cannot be read.
    public func run(_ store: Store, say: (String) -> Void) throws -> Outcome {
        var outcome = Outcome()
        let loader = SiteConfigLoader()
        let folders = try DomainFolder.list(config, excluding: [excludedCerts])
        let loaded = folders.map { loader.loadDomain($0) }
        let signed = AssociationSigner(certificateDirectory: excludedCerts).sign(loaded)
        for (folder, domain) in zip(folders, signed) {
            let errors = domain.diagnostics.errors + (StoreSource.unstorableSigning(domain).map { [$0] } ?? [])
            guard errors.isEmpty, let confinement = folder.confinement else {
                outcome.refused.append((domain.domain, errors))
                continue
            }
            let pushed: StoredDomain
            do {
                pushed = try Self.read(folder, confinement: confinement, loaded: domain, pages: loader.pages)
            } catch let diagnostic as Diagnostic {
                outcome.refused.append((domain.domain, [diagnostic]))
                continue
            }
            let stored = try store.domain(domain.domain)
            guard stored != pushed else { continue }
            let summary = Self.summary(stored: stored, pushed: pushed, loaded: domain, dryRun: dryRun)
            say(summary)
            outcome.changed += 1
            if !dryRun { try store.put(pushed, summary: String(summary.dropFirst(pushed.name.count + 2))) }
        }
        if prune {
            let present = Set(folders.map(\.domain))
            for name in try store.domainNames() where !present.contains(name) {
                say("\(name): removed\(dryRun ? " (dry run: not written)" : "")")
                outcome.changed += 1
                if !dryRun { try store.deleteDomain(name) }
            }
        }
        if let certs { outcome.changed += try pushCertificates(certs, to: store, say: say) }
        return outcome
    }

    /// `<domain>: <semantic diff summary>[; pages: …]`.
    static func summary(stored: StoredDomain?, pushed: StoredDomain, loaded: LoadedDomain, dryRun: Bool) -> String {
        let suffix = dryRun ? " (dry run: not written)" : ""
        guard let stored else { return "\(pushed.name): added (every URL's answer is the pushed config's)\(suffix)" }
        var parts: [String] = []
        if stored.siteJSON != pushed.siteJSON {
            let before = SiteConfigLoader().loadDomain(
                domain: stored.name,
                source: SourceText(name: "\(stored.name)/site.json (stored)", bytes: stored.siteJSON))
            if let old = DiffSide(loaded: before), let new = DiffSide(loaded: loaded) {
                parts.append(DomainDiff(domain: pushed.name, old: old, new: new).summary)
            } else {
                parts.append("the stored site.json does not load; every URL's answer is the pushed config's")
            }
        } else {
            parts.append("site.json unchanged")
        }
        let added = pushed.files.keys.filter { stored.files[$0] == nil }.count
        let removed = stored.files.keys.filter { pushed.files[$0] == nil }.count
        let changed = pushed.files.filter { path, bytes in stored.files[path].map { $0 != bytes } ?? false }.count
        if added + removed + changed > 0 {
            parts.append("pages: \(changed) changed, \(added) added, \(removed) removed")
        }
        return "\(pushed.name): " + parts.joined(separator: "; ") + suffix
    }

    /// The domain's site.json and every file of its `pages/` (``PageLoader/files(of:confinement:)``: the walk, caps
    /// and confinement of a load), and a landing template configured outside `pages/`; a page error refuses the
    /// domain.
    static func read(_ folder: DomainFolder, confinement: Confinement, loaded: LoadedDomain, pages: PageLoader) throws
        -> StoredDomain
    {
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
        for name in names.sorted() {
            var files: [CertificateFile: [UInt8]] = [:]
            for file in CertificateFile.allCases {
                let path = file.path(in: directory + "/" + name)
                switch ConfinedFile.read(path, within: confinement, maximumBytes: Self.maximumCertificateFileBytes) {
                case .success(let contents): files[file] = contents.bytes
                case .failure(.missing): continue
                case .failure(let refusal): throw StoreError(refusal.diagnostic(path, what: file.name).description)
                }
            }
            guard files[.chain] != nil || files[.privateKey] != nil else { continue }
            present.insert(name)
            let stored = try store.certificate(name)
            if let stored, try Self.same(stored, files, key: key) { continue }
            if let plain = files[.privateKey] {
                files[.privateKey] = try key.seal(plain, context: Store.sealingContext(name))
            }
            say("certificate \(name): \(stored == nil ? "added" : "updated")\(dryRun ? " (dry run: not written)" : "")")
            changed += 1
            if !dryRun { try store.put(StoredCertificate(name: name, files: files)) }
        }
        if prune {
            // A certificate the fleet obtained by ACME is the fleet's, not the folder's: pruning keeps it.
            let obtained = Set(try store.obtainedCertificateNames())
            for name in try store.certificateNames() where !present.contains(name) && !obtained.contains(name) {
                say("certificate \(name): removed\(dryRun ? " (dry run: not written)" : "")")
                changed += 1
                if !dryRun { try store.deleteCertificate(name) }
            }
        }
        return changed
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
