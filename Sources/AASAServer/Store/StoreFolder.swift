import AASACore
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writes rows of the store to files: a domain as the folder it was pushed from, and any row as one record file
/// (``StoreSnapshot``). Every file is written beside its place and renamed into it, so a reader never sees half of
/// one.
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

    /// A record: `AASASNP1`, then each entry as its name and its bytes, each preceded by its length (32 bits,
    /// big-endian), after the entry count; the revision first.
    static func record(changeID: Int64, changedAt: Date, entries: [(String, [UInt8])]) -> [UInt8] {
        var bytes = Array(magic.utf8)
        func append(_ value: UInt64, bytes count: Int) {
            for shift in stride(from: (count - 1) * 8, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            }
        }
        append(UInt64(bitPattern: changeID), bytes: 8)
        append(changedAt.timeIntervalSince1970.bitPattern, bytes: 8)
        append(UInt64(entries.count), bytes: 4)
        for (name, value) in entries {
            let nameBytes = Array(name.utf8)
            append(UInt64(nameBytes.count), bytes: 4)
            bytes += nameBytes
            append(UInt64(value.count), bytes: 4)
            bytes += value
        }
        return bytes
    }

    /// The revision and entries of a record written by ``record(changeID:changedAt:entries:)``, or `nil` when the
    /// bytes are not one (truncated, another format).
    static func entries(of bytes: [UInt8]) -> (changeID: Int64, changedAt: Date, entries: [(String, [UInt8])])? {
        var offset = 0
        func read(_ count: Int) -> UInt64? {
            guard count <= bytes.count - offset else { return nil }
            defer { offset += count }
            return bytes[offset..<offset + count].reduce(0) { $0 << 8 | UInt64($1) }
        }
        func take(_ count: Int) -> [UInt8]? {
            guard count <= bytes.count - offset else { return nil }
            defer { offset += count }
            return Array(bytes[offset..<offset + count])
        }
        guard take(magic.utf8.count) == Array(magic.utf8), let change = read(8), let at = read(8), let count = read(4)
        else { return nil }
        var entries: [(String, [UInt8])] = []
        for _ in 0..<count {
            guard let nameLength = read(4), let name = take(Int(nameLength)), let length = read(4),
                let value = take(Int(length))
            else { return nil }
            entries.append((String(decoding: name, as: UTF8.self), value))
        }
        guard offset == bytes.count else { return nil }
        return (Int64(bitPattern: change), Date(timeIntervalSince1970: Double(bitPattern: at)), entries)
    }

    /// The revision at the head of the record file at `path`, read without the rest; `nil` when the file is not a
    /// record.
    static func revision(ofRecordAt path: String) -> (changeID: Int64, changedAt: Date)? {
        guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
        defer { try? handle.close() }
        let head = Array((try? handle.read(upToCount: magic.utf8.count + 16)) ?? Data())
        guard head.count == magic.utf8.count + 16, head.starts(with: Array(magic.utf8)) else { return nil }
        let number = { (offset: Int) in head[offset..<offset + 8].reduce(UInt64(0)) { $0 << 8 | UInt64($1) } }
        return (
            Int64(bitPattern: number(magic.utf8.count)),
            Date(timeIntervalSince1970: Double(bitPattern: number(magic.utf8.count + 8)))
        )
    }

    /// The first bytes of a record.
    static let magic = "AASASNP1"

    private static func time(_ date: Date) -> timespec {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        return Glibc.timespec(tv_sec: Int(seconds), tv_nsec: Int((date.timeIntervalSince1970 - seconds) * 1e9))
    }
}
