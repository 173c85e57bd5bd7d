/// One frame of a pack of the store snapshot (`serve --store-cache`): the file `domains.pack` or `certificates.pack`
/// is ``fileMagic`` then frames, appended as rows are read from the store and rewritten whole when more than a tenth
/// of its bytes are rows written again since.
///
/// A frame is its kind (1 byte: a row written, or deleted), the length of the row's name (16 bits) and of its record
/// (32 bits), the name (UTF-8), the record (a ``SnapshotRecord``'s bytes; none for a deletion), then the CRC-32 of
/// everything before it in the frame (``CRC32``); every number big-endian. A write cut short (a crash, a full disk)
/// leaves a last frame that is incomplete or fails its check: a reader keeps the frames before it, and the writer
/// cuts it off before it appends.
package struct SnapshotFrame: Sendable, Equatable {
    /// What a frame does to its row.
    package enum Kind: UInt8, Sendable {
        /// The row is the frame's record.
        case put = 1
        /// The row is gone.
        case delete = 2
    }

    package var kind: Kind
    /// The row's name: a domain, or a certificate's folder name.
    package var name: String
    /// The row's ``SnapshotRecord`` bytes (empty for ``Kind/delete``).
    package var record: [UInt8]

    /// The first bytes of a pack.
    package static let fileMagic = Array("AASAPAK1".utf8)
    /// The bytes before the name: the kind and the two lengths.
    package static let headLength = 7
    /// The bytes of a frame beside its name and record.
    package static let overhead = headLength + 4

    /// A frame that writes `record` as the row `name`.
    package init(put name: String, record: [UInt8]) {
        self.kind = .put
        self.name = name
        self.record = record
    }

    /// A frame that deletes the row `name`.
    package init(delete name: String) {
        self.kind = .delete
        self.name = name
        self.record = []
    }

    /// Whether a frame can hold `name`: 1 to 65,535 bytes of UTF-8.
    package static func canName(_ name: String) -> Bool {
        (1...Int(UInt16.max)).contains(name.utf8.count)
    }

    /// The frame's bytes. The name must pass ``canName(_:)`` and the record be under 4 GiB.
    package var bytes: [UInt8] {
        let name = Array(self.name.utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.overhead + name.count + record.count)
        bytes.append(kind.rawValue)
        Self.append(UInt32(truncatingIfNeeded: name.count), width: 2, to: &bytes)
        Self.append(UInt32(truncatingIfNeeded: record.count), width: 4, to: &bytes)
        bytes += name
        bytes += record
        Self.append(CRC32.checksum(bytes), width: 4, to: &bytes)
        return bytes
    }

    /// A frame's head as ``parse(_:maximumRecordBytes:)`` read it, once the whole frame is there and checked.
    package struct Header: Sendable, Equatable {
        package var kind: Kind
        package var name: String
        /// Where the record starts, from the frame's first byte.
        package var recordOffset: Int
        package var recordLength: Int
        /// The whole frame's bytes.
        package var length: Int
    }

    /// What the bytes at the start of a slice are.
    package enum Parsed: Sendable, Equatable {
        /// A whole frame that passes its check.
        case frame(Header)
        /// The start of a frame that needs `needed` bytes in all: more to read, or, at the end of the file, a write
        /// cut short.
        case incomplete(needed: Int)
        /// Not a frame: what is wrong.
        case invalid(String)
    }

    /// The frame at the start of `bytes`; a record over `maximumRecordBytes` is ``Parsed/invalid(_:)`` before any of
    /// it is needed.
    package static func parse(_ bytes: ArraySlice<UInt8>, maximumRecordBytes: Int) -> Parsed {
        guard bytes.count >= headLength else { return .incomplete(needed: headLength) }
        let start = bytes.startIndex
        guard let kind = Kind(rawValue: bytes[start]) else {
            return .invalid("a frame's kind is \(bytes[start]), not 1 or 2")
        }
        let nameLength = Int(number(bytes[(start + 1)..<(start + 3)]))
        let recordLength = Int(number(bytes[(start + 3)..<(start + 7)]))
        guard nameLength > 0 else { return .invalid("a frame's name is empty") }
        guard recordLength <= maximumRecordBytes else {
            return .invalid("a frame's record of \(recordLength) bytes is over \(maximumRecordBytes)")
        }
        guard kind == .put || recordLength == 0 else { return .invalid("a deletion holds a record") }
        let length = overhead + nameLength + recordLength
        guard bytes.count >= length else { return .incomplete(needed: length) }
        let checked = bytes[start..<(start + length - 4)]
        guard CRC32.checksum(checked) == UInt32(number(bytes[(start + length - 4)..<(start + length)])) else {
            return .invalid("a frame fails its CRC-32")
        }
        let nameBytes = bytes[(start + headLength)..<(start + headLength + nameLength)]
        guard let name = String(validating: nameBytes, as: UTF8.self) else {
            return .invalid("a frame's name is not UTF-8")
        }
        return .frame(
            Header(
                kind: kind, name: name, recordOffset: headLength + nameLength, recordLength: recordLength,
                length: length))
    }

    /// The frames of a whole pack's bytes, each with its offset, up to the first bytes that are not a whole frame;
    /// `validEnd` is where they start (the bytes' count when every frame is whole), `problem` what they are.
    package static func frames(
        in file: [UInt8], maximumRecordBytes: Int
    ) -> (frames: [(offset: Int, frame: SnapshotFrame)], validEnd: Int, problem: String?) {
        guard file.starts(with: fileMagic) else { return ([], 0, "not a pack of the store snapshot") }
        var frames: [(offset: Int, frame: SnapshotFrame)] = []
        var offset = fileMagic.count
        while offset < file.count {
            switch parse(file[offset...], maximumRecordBytes: maximumRecordBytes) {
            case .frame(let header):
                let record = Array(
                    file[(offset + header.recordOffset)..<(offset + header.recordOffset + header.recordLength)])
                var frame = SnapshotFrame(delete: header.name)
                if header.kind == .put { frame = SnapshotFrame(put: header.name, record: record) }
                frames.append((offset, frame))
                offset += header.length
            case .incomplete(let needed):
                return (frames, offset, "a frame of \(needed) bytes is cut short at \(file.count - offset)")
            case .invalid(let problem):
                return (frames, offset, problem)
            }
        }
        return (frames, offset, nil)
    }

    /// A big-endian number.
    private static func number(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }

    private static func append(_ value: UInt32, width: Int, to bytes: inout [UInt8]) {
        for shift in stride(from: (width - 1) * 8, through: 0, by: -8) {
            bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift)))
        }
    }
}
