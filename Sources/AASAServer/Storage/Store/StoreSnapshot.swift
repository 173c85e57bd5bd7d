import AASACore
import Foundation
import Logging

/// A replica's copy of what it read from the store (`serve --store-cache DIR`), so that it can start and serve while
/// the database is unreachable.
///
/// `DIR/domains/<name>` and `DIR/certificates/<name>` hold one row each (a ``SnapshotRecord``, private keys still
/// sealed), `DIR/state` the id of the last change applied. A thread of its own writes them, each file beside its place
/// and renamed into it: the rows read by a load first, then the state, so the state never names a change whose rows
/// are not written. A replica that starts without the database reads the rows back (``isServing``) until it has read
/// the database once; then it catches up from the state's change. A file that is not a record is left out (one
/// warning for all); a record whose time is out of range is that row's error (``Rule/storedValue``).
final class StoreSnapshot: Service, @unchecked Sendable {
    /// The folder.
    let folder: String
    private let logger: Logger
    private let loop = WorkerLoop()
    /// Rows to write (`nil`: to delete) by name, and the names a full listing kept (every other file is deleted).
    private struct Pending<Content: Sendable> {
        var rows: [String: StoreRow<Content>?] = [:]
        var kept: Set<String>?

        var isEmpty: Bool { rows.isEmpty && kept == nil }

        /// Takes a listing: `found` of `names` (every row when `nil`, and then every other file is deleted; a name
        /// of `names` not found is deleted).
        mutating func listed(_ found: Set<String>, names: Set<String>?) {
            guard let names else {
                rows = rows.filter { found.contains($0.key) }
                kept = found
                return
            }
            for name in names where !found.contains(name) {
                rows[name] = .some(nil)
                kept?.remove(name)
            }
        }

        /// Takes rows read (`nil`: deleted since the listing).
        mutating func record(_ read: [String: StoreRow<Content>?]) {
            for (name, row) in read {
                rows[name] = .some(row)
                if row != nil { kept?.insert(name) } else { kept?.remove(name) }
            }
        }
    }

    /// Guarded by the loop's lock: the rows to write, and the change to record once they are written.
    private var domains = Pending<StoredDomain>()
    private var certificates = Pending<StoredCertificate>()
    private var state: Int64?
    private var writing = false
    private var serving = false

    /// The most bytes read of one record: a domain's caps (site.json, its files, a template) and their names.
    static let maximumRecordBytes = SiteConfigLoader.maximumConfigBytes + (66 << 20) + (1 << 20)

    /// A snapshot in `folder`, created if missing (mode 0700: its rows hold sealed keys). The folder and its
    /// `domains` and `certificates` must be real folders of the server's user that nobody else can write
    /// (``WritableFolder``): the snapshot deletes every file of them it did not write.
    ///
    /// - Throws: ``StoreError`` naming the folder, what is wrong and the fix when it cannot be made or is refused.
    init(folder: String, logger: Logger) throws {
        self.folder = folder
        self.logger = logger
        for sub in ["", "/domains", "/certificates"] {
            do {
                try WritableFolder.prepare(folder + sub)
            } catch {
                throw StoreError("\(error) (--store-cache)")
            }
        }
    }

    /// The last change the snapshot holds, or `nil` when it holds none (never written, or unreadable).
    var lastChange: Int64? {
        guard case .success(let contents) = ConfinedFile.read(folder + "/state", within: .anywhere, maximumBytes: 64)
        else { return nil }
        return Int64(String(decoding: contents.bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Whether loads read the snapshot rather than the database: from ``serveFromSnapshot()`` until
    /// ``stopServing()``.
    var isServing: Bool { loop.locked { serving } }

    /// Makes loads read the snapshot: the replica starts while the database is unreachable.
    func serveFromSnapshot() {
        loop.locked { serving = true }
    }

    /// Makes loads read the database again.
    func stopServing() {
        loop.locked { serving = false }
    }

    // MARK: Writing

    /// Takes a listing of the domains: `found` among `names` (every domain when `nil`: the files of the others are
    /// deleted; with names, those not found are).
    func listed(domains found: Set<String>, names: Set<String>?) {
        loop.changing { if !serving { domains.listed(found, names: names) } }
    }

    /// Takes a listing of the certificates, as ``listed(domains:names:)``.
    func listed(certificates found: Set<String>, names: Set<String>?) {
        loop.changing { if !serving { certificates.listed(found, names: names) } }
    }

    /// Queues the domain rows read to be written (`nil`: deleted since the listing).
    func record(domains rows: [String: DomainRow?]) {
        loop.changing { if !serving { domains.record(rows) } }
    }

    /// Queues the certificate rows read to be written.
    func record(certificates rows: [String: CertificateRow?]) {
        loop.changing { if !serving { certificates.record(rows) } }
    }

    /// Queues the state: every change up to `change` is applied, written after the rows queued before.
    func commit(_ change: Int64) {
        loop.changing { state = change }
    }

    /// Waits until everything queued is written (for tests and a stop).
    func flush() {
        loop.locked {
            while !loop.stoppingLocked && (writing || !domains.isEmpty || !certificates.isEmpty || state != nil) {
                loop.waitLocked()
            }
        }
    }

    func start() {
        loop.start("store-snapshot") { [self] in work() }
    }

    /// Writes what is queued, then stops the thread.
    func stop() {
        flush()
        loop.stop()
    }

    private func work() {
        while true {
            let batch = loop.locked { () -> (Pending<StoredDomain>, Pending<StoredCertificate>, Int64?)? in
                while !loop.stoppingLocked && domains.isEmpty && certificates.isEmpty && state == nil {
                    loop.waitLocked()
                }
                guard !loop.stoppingLocked else { return nil }
                defer {
                    domains = Pending()
                    certificates = Pending()
                    state = nil
                    writing = true
                }
                return (domains, certificates, state)
            }
            guard let batch else { return }
            write(domains: batch.0, certificates: batch.1, state: batch.2)
            loop.changing { writing = false }
        }
    }

    private func write(domains: Pending<StoredDomain>, certificates: Pending<StoredCertificate>, state: Int64?) {
        do {
            try write(domains, to: folder + "/domains") { domain in
                [(SiteConfigLoader.fileName, domain.siteJSON)]
                    + domain.files.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            }
            try write(certificates, to: folder + "/certificates") { certificate in
                CertificateFile.allCases.compactMap { file in certificate.files[file].map { (file.name, $0) } }
            }
            if let state { try StorePull.save(Array("\(state)\n".utf8), to: folder + "/state", mode: 0o600) }
        } catch {
            logger.error(
                "could not write the store snapshot; a start without the database would serve an older one",
                metadata: ["folder": "\(folder)", "reason": "\(error)"])
        }
    }

    /// Writes each row of `pending` as a record (its `entries`) in `folder/<name>`, deletes the file of each row to
    /// delete, and after a full listing every file of a name it did not keep. A name that could leave the folder is
    /// skipped.
    private func write<Content>(
        _ pending: Pending<Content>, to folder: String, entries: (Content) -> [(String, [UInt8])]
    ) throws {
        if let kept = pending.kept {
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where !kept.contains(name)
            {
                unlink(folder + "/" + name)
            }
        }
        for (name, row) in pending.rows where Self.isFileName(name) {
            guard let row, let content = try? row.content.get() else {
                unlink(folder + "/" + name)
                continue
            }
            let record = SnapshotRecord(
                changeID: row.changeID, changedAt: row.changedAt,
                entries: entries(content).map { SnapshotRecord.Entry(name: $0.0, bytes: $0.1) })
            try StorePull.save(record.bytes, to: folder + "/" + name, mode: 0o600)
        }
    }

    // MARK: Reading

    /// The domains of the snapshot (those of `names`, or every one): each file's revision read from its header, its
    /// bytes when a load takes them, so a start from the snapshot holds no more rows at once than one from the store.
    func domainReferences(names: Set<String>?) -> [String: StoreReference<StoredDomain>] {
        references(in: folder + "/domains", names: names) { name, entries in
            guard let site = entries.first, site.0 == SiteConfigLoader.fileName else { return nil }
            let files = Dictionary(entries.dropFirst().map { $0 }) { first, _ in first }
            return StoredDomain(name: name, siteJSON: site.1, files: files)
        }
    }

    /// The certificates of the snapshot (those of `names`, or every one), as ``domainReferences(names:)``.
    func certificateReferences(names: Set<String>?) -> [String: StoreReference<StoredCertificate>] {
        references(in: folder + "/certificates", names: names) { name, entries in
            var files: [CertificateFile: [UInt8]] = [:]
            for (file, bytes) in entries {
                guard let file = CertificateFile(rawValue: file) else { return nil }
                files[file] = bytes
            }
            return StoredCertificate(name: name, files: files)
        }
    }

    private func references<Content: Sendable>(
        in folder: String, names: Set<String>?,
        decode: @escaping @Sendable (String, [(String, [UInt8])]) -> Content?
    ) -> [String: StoreReference<Content>] {
        let listed = names.map(Array.init) ?? ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
        var references: [String: StoreReference<Content>] = [:]
        var unreadable: [String] = []
        for name in listed where Self.isFileName(name) {
            let path = folder + "/" + name
            guard FileManager.default.fileExists(atPath: path) else { continue }
            let revision: (changeID: Int64, changedAt: Date)
            switch Result(catching: { () throws(SnapshotRecord.Failure) in try Self.revision(ofRecordAt: path) })
            {
            case .success(let read):
                revision = read
            case .failure(.notARecord):
                unreadable.append(path)
                continue
            case .failure(.value(let failure)):
                references[name] = StoreReference(
                    changeID: 0, changedAt: .distantPast, bytes: .read(.failure(Self.outOfRange(path, name, failure))))
                continue
            }
            references[name] = StoreReference(
                changeID: revision.changeID, changedAt: revision.changedAt,
                bytes: .load {
                    guard
                        case .success(let contents) = ConfinedFile.read(
                            path, within: .anywhere, maximumBytes: Self.maximumRecordBytes)
                    else {
                        return .failure(StoreError("\(path): error: the snapshot's copy of \(name) cannot be read"))
                    }
                    let record: SnapshotRecord
                    switch Result(catching: { () throws(SnapshotRecord.Failure) in
                        try SnapshotRecord(bytes: contents.bytes)
                    }) {
                    case .success(let read): record = read
                    case .failure(.value(let failure)): return .failure(Self.outOfRange(path, name, failure))
                    case .failure(.notARecord):
                        return .failure(StoreError("\(path): error: the snapshot's copy of \(name) cannot be read"))
                    }
                    guard let content = decode(name, record.entries.map { ($0.name, $0.bytes) }) else {
                        return .failure(StoreError("\(path): error: the snapshot's copy of \(name) cannot be read"))
                    }
                    return .success(content)
                })
        }
        if let first = unreadable.first {
            // One line however many: the snapshot is a cache, and the store has every row.
            logger.warning(
                "files of the store snapshot are not records; they are left out",
                metadata: ["count": "\(unreadable.count)", "first": "\(first)"])
        }
        return references
    }

    /// The refusal of the record of `name` at `path`, whose revision holds a value out of range.
    private static func outOfRange(_ path: String, _ name: String, _ failure: CheckedNumber.Failure) -> StoreError {
        StoreError(
            "the snapshot's record \(path) of \(name) is not read: \(failure)", rule: .storedValue,
            hint: "delete the file: the replica writes it again once it reads the store")
    }

    /// The revision at the head of the record file at `path` (``SnapshotRecord``), read without the rest.
    ///
    /// - Throws: ``SnapshotRecord/Failure`` when the file is not a record, or its time is out of range.
    private static func revision(ofRecordAt path: String) throws(SnapshotRecord.Failure) -> (
        changeID: Int64, changedAt: Date
    ) {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw .notARecord }
        defer { try? handle.close() }
        let head = Array((try? handle.read(upToCount: SnapshotRecord.headLength)) ?? Data())
        return try SnapshotRecord.revision(head: head)
    }

    /// Whether `name` is a file name of the snapshot's folders: no `/`, not hidden (temporary files are).
    private static func isFileName(_ name: String) -> Bool {
        !name.isEmpty && !name.contains("/") && !name.hasPrefix(".") && !name.contains("\0")
    }
}
