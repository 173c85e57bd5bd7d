import AASACore
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes rows of the store to files: a domain as the folder it was pushed from, and any row as one record file
/// (``SnapshotRecord``, for ``StoreSnapshot``). Every file is written beside its place and renamed into it, so a
/// reader never sees half of one.
enum StoreFolder {
    /// Writes `domain` as a folder at `folder` (site.json and each file at its relative path), every file dated
    /// `modified`.
    ///
    /// - Throws: ``StoreError`` when a path is not inside the folder or a file cannot be written.
    static func write(_ domain: StoredDomain, to folder: String, modified: Date) throws {
        if let bad = domain.files.keys.first(where: { !StoredDomain.isSafeRelativePath($0) }) {
            throw StoreError("the stored file '\(bad)' is not a path inside the domain folder")
        }
        let files = [(SiteConfigLoader.fileName, domain.siteJSON)] + domain.files.map { ($0.key, $0.value) }
        for (path, bytes) in files {
            let file = folder + "/" + path
            try StorePull.save(bytes, to: file)
            var times = [Self.time(modified), Self.time(modified)]
            utimensat(AT_FDCWD, file, &times, 0)
        }
    }

    /// The revision at the head of the record file at `path` (``SnapshotRecord``), read without the rest.
    ///
    /// - Throws: ``SnapshotRecord/Failure`` when the file is not a record, or its time is out of range.
    static func revision(ofRecordAt path: String) throws(SnapshotRecord.Failure) -> (changeID: Int64, changedAt: Date) {
        guard let handle = FileHandle(forReadingAtPath: path) else { throw .notARecord }
        defer { try? handle.close() }
        let head = Array((try? handle.read(upToCount: SnapshotRecord.headLength)) ?? Data())
        return try SnapshotRecord.revision(head: head)
    }

    /// `date` as a file time; a date past what a `time_t` holds is the nearest one it does.
    private static func time(_ date: Date) -> timespec {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        return Glibc.timespec(
            tv_sec: CheckedNumber.clamped(seconds, to: Int.min...Int.max),
            tv_nsec: CheckedNumber.clamped((date.timeIntervalSince1970 - seconds) * 1e9, to: 0...999_999_999))
    }
}
