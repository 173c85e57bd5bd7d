package import Foundation

/// One row of the store as a replica's snapshot keeps it in a file (`serve --store-cache`): `AASASNP1`, the row's
/// revision (the change id, 64 bits, and the change's time as the bits of a `Double` of seconds since 1970), then the
/// entry count and each entry as its name and its bytes, each preceded by its length (32 bits); every number
/// big-endian.
///
/// The replica writes these files and reads them back at a start without the database, so their bytes are read as
/// any file another process could have written: a file that is not a record, and one whose time is not a time
/// (``CheckedNumber/date(secondsSince1970:field:)``), is a ``Failure`` naming what is wrong, never a trap.
package struct SnapshotRecord: Sendable, Equatable {
    /// One entry: a file of the row (`site.json`, `pages/index.html`, `fullchain.pem`) and its bytes.
    package struct Entry: Sendable, Equatable {
        package var name: String
        package var bytes: [UInt8]

        package init(name: String, bytes: [UInt8]) {
            self.name = name
            self.bytes = bytes
        }
    }

    /// The change that last wrote the row.
    package var changeID: Int64
    /// When that change committed.
    package var changedAt: Date {
        get { Date(timeIntervalSince1970: secondsSince1970) }
        set { secondsSince1970 = newValue.timeIntervalSince1970 }
    }
    /// ``changedAt`` as the record holds it: a `Date` keeps its time from 2001, so seconds from 1970 read into one do
    /// not always come back bit for bit (`-0.0`, the last bit of a time with a fraction), and a record read whole must
    /// write back the bytes it was read from.
    private var secondsSince1970: Double
    /// The row's files, in the order written.
    package var entries: [Entry]

    /// Why bytes are not a record.
    package enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Not a record at all: another format, or cut short.
        case notARecord
        /// A record whose revision holds a value out of range.
        case value(CheckedNumber.Failure)

        package var description: String {
            switch self {
            case .notARecord: "not a record of the store snapshot (another format, or cut short)"
            case .value(let failure): "\(failure)"
            }
        }
    }

    /// The first bytes of a record.
    package static let magic = Array("AASASNP1".utf8)
    /// The bytes of a record's head: the magic and the revision.
    package static let headLength = magic.count + 16

    /// A record of `entries` at the revision `changeID`, `changedAt`.
    package init(changeID: Int64, changedAt: Date, entries: [Entry]) {
        self.changeID = changeID
        self.secondsSince1970 = changedAt.timeIntervalSince1970
        self.entries = entries
    }

    /// The record `bytes` hold, read whole.
    ///
    /// - Throws: ``Failure/notARecord`` when they are not one (truncated, trailing bytes, a name that is no UTF-8,
    ///   another format), or ``Failure/value(_:)`` when its time is out of range.
    package init(bytes: [UInt8]) throws(Failure) {
        var reader = Reader(bytes: bytes)
        let (changeID, seconds) = try Self.revision(&reader)
        guard let count = reader.number(4) else { throw .notARecord }
        var entries: [Entry] = []
        for _ in 0..<count {
            // A name the server writes is a String: bytes that are no UTF-8 are no record of its.
            guard let nameLength = reader.number(4), let nameBytes = reader.take(Int(nameLength)),
                let name = String(validating: nameBytes, as: UTF8.self), let length = reader.number(4),
                let value = reader.take(Int(length))
            else { throw .notARecord }
            entries.append(Entry(name: name, bytes: value))
        }
        guard reader.isAtEnd else { throw .notARecord }
        self.changeID = changeID
        self.secondsSince1970 = seconds
        self.entries = entries
    }

    /// The revision at the start of a record, from its first ``headLength`` bytes (or more).
    ///
    /// - Throws: ``Failure`` as ``init(bytes:)``.
    package static func revision(head: [UInt8]) throws(Failure) -> (changeID: Int64, changedAt: Date) {
        var reader = Reader(bytes: head)
        let (changeID, seconds) = try revision(&reader)
        return (changeID, Date(timeIntervalSince1970: seconds))
    }

    /// The change id and the time's bits at the start of a record, from its first ``headLength`` bytes (or more), the
    /// time not yet checked (``revision(head:)`` checks it).
    ///
    /// - Throws: ``Failure/notARecord`` when they are not a record's head.
    package static func rawRevision(head: [UInt8]) throws(Failure) -> (changeID: Int64, seconds: Double) {
        var reader = Reader(bytes: head)
        return try rawRevision(&reader)
    }

    /// The revision of a raw head (``rawRevision(head:)``) once its time is checked.
    ///
    /// - Throws: ``Failure/value(_:)`` when its time is out of range.
    package static func revision(changeID: Int64, seconds: Double) throws(Failure) -> Date {
        do {
            return try CheckedNumber.date(secondsSince1970: seconds, field: "the time of change \(changeID)")
        } catch {
            throw .value(error)
        }
    }

    /// The record's bytes.
    package var bytes: [UInt8] {
        var bytes = Self.magic
        func append(_ value: UInt64, _ count: Int) {
            for shift in stride(from: (count - 1) * 8, through: 0, by: -8) {
                bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
            }
        }
        append(UInt64(bitPattern: changeID), 8)
        append(secondsSince1970.bitPattern, 8)
        append(UInt64(truncatingIfNeeded: entries.count), 4)
        for entry in entries {
            let name = Array(entry.name.utf8)
            append(UInt64(truncatingIfNeeded: name.count), 4)
            bytes += name
            append(UInt64(truncatingIfNeeded: entry.bytes.count), 4)
            bytes += entry.bytes
        }
        return bytes
    }

    /// The change id and its time's seconds since 1970 as the record holds them, once they are known to be a time.
    private static func revision(_ reader: inout Reader) throws(Failure) -> (changeID: Int64, seconds: Double) {
        let (changeID, seconds) = try rawRevision(&reader)
        _ = try revision(changeID: changeID, seconds: seconds)
        return (changeID, seconds)
    }

    /// The change id and the time's bits at the reader's place.
    private static func rawRevision(_ reader: inout Reader) throws(Failure) -> (changeID: Int64, seconds: Double) {
        guard reader.take(magic.count) == magic, let change = reader.number(8), let time = reader.number(8) else {
            throw .notARecord
        }
        return (Int64(bitPattern: change), Double(bitPattern: time))
    }

    /// Reads bytes front to back; a read past the end is `nil`.
    private struct Reader {
        let bytes: [UInt8]
        var offset = 0

        var isAtEnd: Bool { offset == bytes.count }

        mutating func take(_ count: Int) -> [UInt8]? {
            guard count >= 0, count <= bytes.count - offset else { return nil }
            defer { offset += count }
            return Array(bytes[offset..<offset + count])
        }

        /// A big-endian number of `count` bytes (at most 8).
        mutating func number(_ count: Int) -> UInt64? {
            take(count)?.reduce(0) { $0 << 8 | UInt64($1) }
        }
    }
}
