import AASACore
import Foundation
import Logging

/// A replica's copy of what it read from the store (`serve --store-cache DIR`), so that it can start and serve while
/// the database is unreachable.
///
/// `DIR/domains.pack` and `DIR/certificates.pack` hold the rows (``SnapshotPack``: each a ``SnapshotRecord`` in a
/// frame, private keys still sealed), `DIR/state` the id of the last change applied. A thread of its own writes them:
/// the rows read by a load are appended and synced first, then the state, so the state never names a change whose rows
/// are not written. A load waits for the disk only when ``maximumPendingBytes`` of rows are queued (a start, a bulk
/// push), so the rows held for the writer stay bounded; a change alone never does. A replica that starts without the database
/// reads the rows back (``isServing``) until it has read the database once; then it catches up from the state's
/// change. The bytes after a pack's last whole frame (a write cut short) are left out (one warning); a frame that
/// holds no record is left out too (one warning for all); a record whose time is out of range is that row's error
/// (``Rule/storedValue``). A snapshot of one file per row in `DIR/domains/` and `DIR/certificates/` is packed at the
/// start and its folders removed.
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
    private var pendingBytes = 0
    /// Whether the writer's thread could not start.
    private var unwritten = false
    private var writing = false
    private var serving = false

    /// The packs of the domains' and the certificates' rows.
    private let domainPack: SnapshotPack
    private let certificatePack: SnapshotPack

    /// The most bytes read of one record: a domain's caps (site.json, its files, a template) and their names.
    static let maximumRecordBytes = SiteConfigLoader.maximumConfigBytes + (66 << 20) + (1 << 20)

    /// A snapshot in `folder`, created if missing (mode 0700: its rows hold sealed keys). The folder must be a real
    /// folder of the server's user that nobody else can write (``WritableFolder``): the snapshot replaces its files.
    ///
    /// - Throws: ``StoreError`` naming the folder, what is wrong and the fix when it cannot be made or is refused.
    init(folder: String, logger: Logger) throws {
        self.folder = folder
        self.logger = logger
        domainPack = SnapshotPack(path: folder + "/domains.pack", maximumRecordBytes: Self.maximumRecordBytes)
        certificatePack = SnapshotPack(path: folder + "/certificates.pack", maximumRecordBytes: Self.maximumRecordBytes)
        do {
            try WritableFolder.prepare(folder)
        } catch {
            throw StoreError("\(error) (--store-cache)")
        }
        for pack in [domainPack, certificatePack] { unlink(SnapshotPack.temporaryPath(of: pack.path)) }
        try packFolder(folder + "/domains", into: domainPack)
        try packFolder(folder + "/certificates", into: certificatePack)
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

    /// Queues the domain rows read to be written (`nil`: deleted since the listing); waits while
    /// ``maximumPendingBytes`` are queued.
    func record(domains rows: [String: DomainRow?]) {
        let bytes = Self.bytes(rows) { $0.siteJSON.count + $0.files.values.reduce(0) { $0 + $1.count } }
        queue(bytes) { domains.record(rows) }
    }

    /// Queues the certificate rows read to be written, as ``record(domains:)``.
    func record(certificates rows: [String: CertificateRow?]) {
        queue(Self.bytes(rows) { $0.files.values.reduce(0) { $0 + $1.count } }) { certificates.record(rows) }
    }

    /// The most bytes of rows queued before a load that reads more waits for the writer: a start or a bulk push reads
    /// faster than a disk writes, and the rows queued are held in memory until they are written.
    static let maximumPendingBytes = 32 << 20

    /// Runs `record` once fewer than ``maximumPendingBytes`` are queued (or the snapshot is served, or stopping).
    private func queue(_ bytes: Int, _ record: () -> Void) {
        loop.changing {
            while !serving && !unwritten && !loop.stoppingLocked && pendingBytes >= Self.maximumPendingBytes {
                _ = loop.waitLocked()
            }
            guard !serving && !unwritten else { return }
            record()
            pendingBytes += bytes
        }
    }

    /// The bytes of the rows' contents.
    private static func bytes<Content>(_ rows: [String: StoreRow<Content>?], of content: (Content) -> Int) -> Int {
        rows.values.reduce(0) { total, row in total + ((row.flatMap { try? $0.content.get() }).map(content) ?? 0) }
    }

    /// Queues the state: every change up to `change` is applied, written after the rows queued before.
    func commit(_ change: Int64) {
        loop.changing { state = change }
    }

    /// Waits until everything queued is written (for tests and a stop).
    func flush() {
        loop.locked {
            while !loop.stoppingLocked && !unwritten
                && (writing || !domains.isEmpty || !certificates.isEmpty || state != nil)
            {
                loop.waitLocked()
            }
        }
    }

    func start() {
        guard let failure = loop.start("store-snapshot", { [self] in work() }) else { return }
        // No writer: nothing is queued (a load must not wait for one), and a start without the database finds the
        // snapshot as it was.
        logger.error("the store snapshot is not written", metadata: ["reason": "\(failure)"])
        loop.changing { unwritten = true }
    }

    /// Writes what is queued, then stops the thread.
    func stop() {
        flush()
        loop.stop()
    }

    private func work() {
        while true {
            let batch = loop.changing { () -> (Pending<StoredDomain>, Pending<StoredCertificate>, Int64?)? in
                while !loop.stoppingLocked && domains.isEmpty && certificates.isEmpty && state == nil {
                    loop.waitLocked()
                }
                guard !loop.stoppingLocked else { return nil }
                defer {
                    domains = Pending()
                    certificates = Pending()
                    state = nil
                    pendingBytes = 0
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
            try write(domains, to: domainPack) { domain in
                [(SiteConfigLoader.fileName, domain.siteJSON)]
                    + domain.files.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            }
            try write(certificates, to: certificatePack) { certificate in
                CertificateFile.allCases.compactMap { file in certificate.files[file].map { (file.name, $0) } }
            }
            if let state { try StorePull.save(Array("\(state)\n".utf8), to: folder + "/state", mode: 0o600) }
        } catch {
            logger.error(
                "could not write the store snapshot; a start without the database would serve an older one",
                metadata: ["folder": "\(folder)", "reason": "\(error)"])
        }
    }

    /// Writes each row of `pending` as a record (its `entries`) to `pack`, deletes each row to delete, and after a
    /// full listing every row it did not keep.
    private func write<Content>(
        _ pending: Pending<Content>, to pack: SnapshotPack, entries: @escaping (Content) -> [(String, [UInt8])]
    ) throws {
        let rows = pending.rows.lazy.map { name, row -> (name: String, record: [UInt8]?) in
            guard let row, let content = try? row.content.get() else { return (name, nil) }
            let record = SnapshotRecord(
                changeID: row.changeID, changedAt: row.changedAt,
                entries: entries(content).map { SnapshotRecord.Entry(name: $0.0, bytes: $0.1) })
            return (name, record.bytes)
        }
        if let cutShort = try pack.write(rows, keeping: pending.kept) { warn(pack, cutShort) }
    }

    /// Says that `pack` ended in bytes that are not a whole frame, cut off.
    private func warn(_ pack: SnapshotPack, _ cutShort: (bytes: Int64, problem: String)) {
        logger.warning(
            "the store snapshot's pack ends in bytes that are not a whole frame (a write cut short); they are left out",
            metadata: ["pack": "\(pack.path)", "bytes": "\(cutShort.bytes)", "problem": "\(cutShort.problem)"])
    }

    // MARK: Reading

    /// The domains of the snapshot (those of `names`, or every one): each row's revision read from its record's head,
    /// its bytes when a load takes them, so a start from the snapshot holds no more rows at once than one from the
    /// store.
    func domainReferences(names: Set<String>?) -> [String: StoreReference<StoredDomain>] {
        references(in: domainPack, names: names) { name, entries in
            guard let site = entries.first, site.0 == SiteConfigLoader.fileName else { return nil }
            let files = Dictionary(entries.dropFirst().map { $0 }) { first, _ in first }
            return StoredDomain(name: name, siteJSON: site.1, files: files)
        }
    }

    /// The certificates of the snapshot (those of `names`, or every one), as ``domainReferences(names:)``.
    func certificateReferences(names: Set<String>?) -> [String: StoreReference<StoredCertificate>] {
        references(in: certificatePack, names: names) { name, entries in
            var files: [CertificateFile: [UInt8]] = [:]
            for (file, bytes) in entries {
                guard let file = CertificateFile(rawValue: file) else { return nil }
                files[file] = bytes
            }
            return StoredCertificate(name: name, files: files)
        }
    }

    private func references<Content: Sendable>(
        in pack: SnapshotPack, names: Set<String>?,
        decode: @escaping @Sendable (String, [(String, [UInt8])]) -> Content?
    ) -> [String: StoreReference<Content>] {
        let file: SnapshotPack.File
        let opened: SnapshotPack.Opened
        do {
            (file, opened) = try pack.reader()
        } catch {
            logger.error("could not read the store snapshot", metadata: ["reason": "\(error)"])
            return [:]
        }
        if let cutShort = opened.cutShort { warn(pack, cutShort) }
        let path = pack.path
        var references: [String: StoreReference<Content>] = [:]
        var unreadable: [String] = []
        let listed = names.map { names in names.compactMap { name in opened.slots[name].map { (name, $0) } } }
        for (name, slot) in listed ?? opened.slots.map({ ($0.key, $0.value) }) {
            guard slot.isRecord else {
                unreadable.append("\(path) (\(name))")
                continue
            }
            let changedAt: Date
            switch Result(catching: { () throws(SnapshotRecord.Failure) in
                try SnapshotRecord.revision(changeID: slot.changeID, seconds: slot.seconds)
            }) {
            case .success(let date):
                changedAt = date
            case .failure(let failure):
                references[name] = StoreReference(
                    changeID: 0, changedAt: .distantPast, bytes: .read(.failure(Self.outOfRange(path, name, failure))))
                continue
            }
            references[name] = StoreReference(
                changeID: slot.changeID, changedAt: changedAt,
                bytes: .load {
                    func unread() -> StoreError {
                        StoreError("\(path) (\(name)): error: the snapshot's copy of \(name) cannot be read")
                    }
                    guard let bytes = file.read(at: slot.offset + Int64(slot.recordOffset), count: slot.recordLength)
                    else { return .failure(unread()) }
                    let record: SnapshotRecord
                    switch Result(catching: { () throws(SnapshotRecord.Failure) in try SnapshotRecord(bytes: bytes) }) {
                    case .success(let read): record = read
                    case .failure(.value(let failure)): return .failure(Self.outOfRange(path, name, failure))
                    case .failure(.notARecord): return .failure(unread())
                    }
                    guard let content = decode(name, record.entries.map { ($0.name, $0.bytes) }) else {
                        return .failure(unread())
                    }
                    return .success(content)
                })
        }
        if let first = unreadable.first {
            // One line however many: the snapshot is a cache, and the store has every row.
            logger.warning(
                "rows of the store snapshot are not records; they are left out",
                metadata: ["count": "\(unreadable.count)", "first": "\(first)"])
        }
        return references
    }

    /// The refusal of the record of `name` at `path`, whose revision holds a value out of range.
    private static func outOfRange(_ path: String, _ name: String, _ failure: any Error) -> StoreError {
        StoreError(
            "the snapshot's record of \(name) in \(path) is not read: \(failure)", rule: .storedValue,
            hint: "delete the pack: the replica writes it again once it reads the store")
    }

    // MARK: One file per row

    /// Packs the rows of `old`, a folder of one record file per row, into `pack` when it has none yet, then removes
    /// the folder: a file that is not a record is left out. Nothing when `old` is missing.
    ///
    /// - Throws: ``StoreError`` when `old` is refused (``WritableFolder``) or the pack cannot be written.
    private func packFolder(_ old: String, into pack: SnapshotPack) throws {
        var status = stat()
        guard lstat(old, &status) == 0 else { return }
        do {
            try WritableFolder.check(old)
        } catch {
            throw StoreError("\(error) (--store-cache)")
        }
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: old)) ?? []).sorted()
        if access(pack.path, F_OK) != 0 {
            var rows: [(name: String, record: [UInt8]?)] = []
            var bytes = 0
            var packed = 0
            func write() throws {
                try pack.write(rows, keeping: nil)
                packed += rows.count
                rows.removeAll()
                bytes = 0
            }
            for name in names where Self.isFileName(name) && SnapshotFrame.canName(name) {
                guard
                    case .success(let contents) = ConfinedFile.read(
                        old + "/" + name, within: .anywhere, maximumBytes: Self.maximumRecordBytes),
                    (try? SnapshotRecord.rawRevision(head: Array(contents.bytes.prefix(SnapshotRecord.headLength))))
                        != nil
                else { continue }
                rows.append((name, contents.bytes))
                bytes += contents.bytes.count
                if bytes >= 64 << 20 { try write() }
            }
            try write()
            logger.notice(
                "the store snapshot's rows, one file each, are packed",
                metadata: ["folder": "\(old)", "pack": "\(pack.path)", "rows": "\(packed)"])
        }
        for name in names { unlink(old + "/" + name) }
        rmdir(old)
    }

    /// Whether `name` is a file name of a folder of one record per row: no `/`, not hidden (temporary files are).
    private static func isFileName(_ name: String) -> Bool {
        !name.isEmpty && !name.contains("/") && !name.hasPrefix(".") && !name.contains("\0")
    }
}
