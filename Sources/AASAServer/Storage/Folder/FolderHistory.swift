import AASACore
import Foundation

/// The history of a config folder's domains (``FolderDomainRepository``): `<root>/<domain>/log.json`, the entries
/// newest first, and `<root>/<domain>/<revision>.json`, each version an entry names, held to a ``HistoryPolicy``.
///
/// Every entry is bounded (``HistoryPolicy/entryBytes``), so a log of ``HistoryPolicy/revisions`` entries is never
/// larger than what it is read with (``logCap``). Callers hold the repository's lock.
struct FolderHistory {
    /// `<config>/.aasa-history`.
    let root: String
    let policy: HistoryPolicy

    /// The most bytes a `log.json` is read with: every kept entry at its bound, and the brackets.
    var logCap: Int { policy.revisions * HistoryPolicy.entryBytes + 64 }

    private func folder(_ name: String) -> String { root + "/" + name }
    private func logFile(_ name: String) -> String { folder(name) + "/log.json" }
    func versionFile(_ name: String, _ revision: String) -> String { folder(name) + "/" + revision + ".json" }

    /// The entries of `name`, newest first (none when there is no history), and the bytes of its `log.json`.
    func log(_ name: String) throws -> (entries: [DomainRevision], bytes: [UInt8]?) {
        let file = logFile(name)
        let bytes: [UInt8]
        switch ConfinedFile.read(file, within: .anywhere, maximumBytes: logCap) {
        case .success(let contents): bytes = contents.bytes
        case .failure(.missing): return ([], nil)
        case .failure(let refusal):
            throw DomainRepositoryError(
                .failed,
                refusal.diagnostic(file, what: "history").description
                    + "; fix: delete \(file) (the history of \(name) starts again with the next write)")
        }
        guard let values = JSONValue.parse(bytes)?.arrayValue else {
            throw DomainRepositoryError(
                .failed, "\(file) is not a JSON array of revisions; fix: delete it (the history starts again)")
        }
        let format = FolderDomainRepository.timeFormat
        let entries = values.compactMap { entry -> DomainRevision? in
            guard let revision = entry[member: "revision"]?.stringValue,
                let time = entry[member: "time"]?.stringValue.flatMap(format.date(from:))
            else { return nil }
            return DomainRevision(
                revision: revision, time: time, actor: entry[member: "actor"]?.stringValue ?? "",
                summary: entry[member: "summary"]?.stringValue ?? "",
                removed: entry[member: "removed"] == .bool(true))
        }
        return (entries, bytes)
    }

    /// Records `entry` (of `siteJSON`, `nil` for a removal) at the head of the history of `name`, then runs
    /// `apply` (the write of site.json or the removal): the version and the log are written first, and put back
    /// as they were when `apply` throws, so the write and its entry succeed or fail together. Then the versions no
    /// kept entry names are deleted.
    func record(_ name: String, _ entry: DomainRevision, siteJSON: [UInt8]?, then apply: () throws -> Void) throws {
        var entry = entry
        entry.summary = HistoryPolicy.bounded(summary: entry.summary)
        entry.actor = HistoryPolicy.bounded(actor: entry.actor)
        let old = try log(name)
        try RepositoryFiles.makeWritableFolder(folder(name))
        let version = versionFile(name, entry.revision)
        var madeVersion = false
        if let siteJSON, !FileManager.default.fileExists(atPath: version) {
            try RepositoryFiles.write(siteJSON, to: version)
            madeVersion = true
        }
        let kept = within(policy, [entry] + old.entries, name: name)
        do {
            try RepositoryFiles.write(encode(kept), to: logFile(name))
        } catch {
            if madeVersion { try? FileManager.default.removeItem(atPath: version) }
            throw error
        }
        do {
            try apply()
        } catch {
            if let bytes = old.bytes {
                try? RepositoryFiles.write(bytes, to: logFile(name))
            } else {
                try? FileManager.default.removeItem(atPath: logFile(name))
            }
            if madeVersion { try? FileManager.default.removeItem(atPath: version) }
            throw error
        }
        dropVersions(name, of: old.entries, keeping: kept)
    }

    /// The newest entries of `entries` within the policy's revisions and bytes per domain (the newest always).
    private func within(_ policy: HistoryPolicy, _ entries: [DomainRevision], name: String) -> [DomainRevision] {
        var kept: [DomainRevision] = []
        var bytes = 0
        for entry in entries.prefix(policy.revisions) {
            bytes += cost(name, entry)
            if !kept.isEmpty && bytes > policy.bytesPerDomain { break }
            kept.append(entry)
        }
        return kept
    }

    /// What `entry` counts against the bounds: its version's size and ``HistoryPolicy/entryBytes``.
    func cost(_ name: String, _ entry: DomainRevision) -> Int {
        guard !entry.removed else { return HistoryPolicy.cost(siteJSON: nil) }
        let size = (try? FileManager.default.attributesOfItem(atPath: versionFile(name, entry.revision)))?[.size]
        return HistoryPolicy.cost(siteJSON: (size as? NSNumber)?.intValue ?? 0)
    }

    /// Deletes the versions of `old` that no entry of `kept` names.
    private func dropVersions(_ name: String, of old: [DomainRevision], keeping kept: [DomainRevision]) {
        let named = Set(kept.filter { !$0.removed }.map(\.revision))
        for revision in Set(old.map(\.revision)).subtracting(named) {
            try? FileManager.default.removeItem(atPath: versionFile(name, revision))
        }
    }

    /// Writes the entries of `name` as `kept` (older ones dropped), deleting the versions no longer named.
    func rewrite(_ name: String, from old: [DomainRevision], to kept: [DomainRevision]) throws {
        if kept.isEmpty {
            try? FileManager.default.removeItem(atPath: folder(name))
            return
        }
        try RepositoryFiles.write(encode(kept), to: logFile(name))
        dropVersions(name, of: old, keeping: kept)
    }

    /// Deletes the whole history of `name`.
    func remove(_ name: String) { try? FileManager.default.removeItem(atPath: folder(name)) }

    private func encode(_ entries: [DomainRevision]) -> [UInt8] {
        let format = FolderDomainRepository.timeFormat
        let values = entries.map { revision in
            JSONNode(
                .members([
                    ("revision", .string(revision.revision)),
                    ("time", .string(format.string(from: revision.time))),
                    ("actor", .string(revision.actor)), ("summary", .string(revision.summary)),
                    ("removed", .bool(revision.removed)),
                ]))
        }
        return JSONWriter(style: .pretty).bytes(.array(values))
    }
}
