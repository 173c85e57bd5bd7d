import AASACore
import Foundation
import Synchronization

/// One pack of the store snapshot (`DIR/domains.pack`, `DIR/certificates.pack`): the rows of one kind as frames
/// (``SnapshotFrame``), each row's last frame the one that counts.
///
/// Rows written are appended and synced; when the frames written over or deleted pass a tenth of the live ones, the
/// pack is rewritten with its live frames only (``compact()``), beside its place and renamed into it, so it holds at
/// most 1.1 times its rows' bytes and their frames. The first use reads the pack once, front to back, to find each
/// row's last frame (``Slot``); the bytes after the last whole frame that passes its check (a write cut short) are cut
/// off then, and named in ``Opened/cutShort``. A pack that is not one (another file at its place) is written anew. A
/// record over ``maximumRecordBytes`` is written as its row's deletion: a reader would stop at its frame and lose
/// every row after it.
///
/// One writer at a time (the snapshot's thread); reads, while the replica serves the snapshot, take the file and the
/// slots once (``reader()``) and read records with `pread`, so a rewrite never moves what they read.
final class SnapshotPack: Sendable {
    /// Where a row's last frame is, and the revision at the head of its record.
    struct Slot: Sendable, Equatable {
        /// The frame's offset in the pack.
        var offset: Int64
        /// The frame's bytes.
        var length: UInt32
        /// The record's offset from the frame's.
        var recordOffset: UInt32
        /// The change id and the time's seconds since 1970 as the record's head holds them (read again, and checked,
        /// from the record).
        var changeID: Int64
        var seconds: Double
        /// Whether the record's head is a record's (a frame that passes its check and holds something else is left
        /// out).
        var isRecord: Bool

        var recordLength: Int { Int(length) - Int(recordOffset) - 4 }
    }

    /// The file a pack's reads and writes go to; closed when the last of them lets it go.
    final class File: Sendable {
        let descriptor: Int32

        init(descriptor: Int32) { self.descriptor = descriptor }

        deinit { Glibc.close(descriptor) }

        /// `count` bytes at `offset`, or `nil` when the file ends before them or cannot be read.
        func read(at offset: Int64, count: Int) -> [UInt8]? {
            let bytes = readAvailable(at: offset, count: count)
            return bytes.count == count ? bytes : nil
        }

        /// Up to `count` bytes at `offset`: fewer only at the end of the file (or when it cannot be read).
        func readAvailable(at offset: Int64, count: Int) -> [UInt8] {
            var bytes = [UInt8](repeating: 0, count: count)
            var done = 0
            while done < count {
                let read = bytes.withUnsafeMutableBytes {
                    pread(descriptor, $0.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                }
                if read < 0 && errno == EINTR { continue }
                guard read > 0 else { break }
                done += read
            }
            bytes.removeLast(count - done)
            return bytes
        }

        /// Writes `bytes` whole at `offset`.
        func write(_ bytes: [UInt8], at offset: Int64) throws(StoreError) {
            var done = 0
            while done < bytes.count {
                let written = bytes.withUnsafeBytes {
                    pwrite(descriptor, $0.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
                }
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { throw StoreError("cannot write: \(String(cString: strerror(errno)))") }
                done += written
            }
        }
    }

    /// The pack as its first use read it.
    struct Opened: Sendable {
        /// Each row's last frame.
        var slots: [String: Slot]
        /// The bytes cut off after the last whole frame, and why they are not one; `nil` when every byte was a frame.
        var cutShort: (bytes: Int64, problem: String)?
    }

    private struct State {
        var file: File?
        var slots: [String: Slot] = [:]
        /// Where the next frame goes.
        var end: Int64 = 0
        /// The bytes of the rows' last frames, and of every other frame.
        var live: Int64 = 0
        var dead: Int64 = 0

        /// Takes a frame of `length` bytes at `offset` for the row `name`: the row's last frame when it writes
        /// `record` (its head, or more), else the row is gone. The frame it replaces, and a deletion, are dead bytes.
        mutating func place(_ name: String, record: (some Collection<UInt8>)?, offset: Int64, length: Int) {
            if let old = slots.removeValue(forKey: name) {
                live -= Int64(old.length)
                dead += Int64(old.length)
            }
            guard let record else {
                dead += Int64(length)
                return
            }
            let head = try? SnapshotRecord.rawRevision(head: Array(record.prefix(SnapshotRecord.headLength)))
            slots[name] = Slot(
                offset: offset, length: UInt32(length),
                recordOffset: UInt32(SnapshotFrame.headLength + name.utf8.count),
                changeID: head?.changeID ?? 0, seconds: head?.seconds ?? 0, isRecord: head != nil)
            live += Int64(length)
        }
    }

    /// The pack's path.
    let path: String
    /// The most bytes of one record.
    let maximumRecordBytes: Int
    private let state = Mutex(State())

    /// The bytes buffered before they are written, and read at once.
    private static let chunkBytes = 4 << 20

    init(path: String, maximumRecordBytes: Int) {
        self.path = path
        self.maximumRecordBytes = maximumRecordBytes
    }

    /// The file and its rows' slots, the pack read first when it has not been (made when missing).
    ///
    /// - Throws: ``StoreError`` naming the pack when it cannot be opened or read.
    func reader() throws(StoreError) -> (file: File, opened: Opened) {
        try state.withLock { state throws(StoreError) in
            let cutShort = try open(&state)
            return (state.file!, Opened(slots: state.slots, cutShort: cutShort))
        }
    }

    /// The bytes of the pack on disk, and of its rows' last frames.
    var size: (file: Int64, live: Int64) { state.withLock { ($0.end, $0.live) } }

    /// Appends a frame for each of `rows` (a record's bytes, or `nil` to delete the row; a name with no row is
    /// skipped; a record over ``maximumRecordBytes`` deletes its row) and, when `kept` is given, deletes every row not in it; syncs the pack, then rewrites it when it
    /// holds more than a tenth of dead frames. Returns the bytes cut off a write cut short, when the pack is read first
    /// here.
    ///
    /// - Throws: ``StoreError`` naming the pack when it cannot be written; the next use reads it again.
    @discardableResult
    func write(
        _ rows: some Sequence<(name: String, record: [UInt8]?)>, keeping kept: Set<String>?
    ) throws(StoreError) -> (bytes: Int64, problem: String)? {
        try state.withLock { state throws(StoreError) in
            let cutShort = try open(&state)
            do throws(StoreError) {
                var buffer: [UInt8] = []
                func append(_ frame: SnapshotFrame) throws(StoreError) {
                    let bytes = frame.bytes
                    state.place(
                        frame.name, record: frame.kind == .put ? frame.record : nil,
                        offset: state.end + Int64(buffer.count), length: bytes.count)
                    buffer += bytes
                    if buffer.count >= Self.chunkBytes { try flush() }
                }
                func flush() throws(StoreError) {
                    try state.file!.write(buffer, at: state.end)
                    state.end += Int64(buffer.count)
                    buffer.removeAll(keepingCapacity: true)
                }
                var written: Set<String> = []
                for (name, record) in rows where SnapshotFrame.canName(name) {
                    if let record, record.count <= maximumRecordBytes {
                        written.insert(name)
                        try append(SnapshotFrame(put: name, record: record))
                    } else if state.slots[name] != nil {
                        try append(SnapshotFrame(delete: name))
                    }
                }
                if let kept {
                    for name in state.slots.keys.sorted() where !kept.contains(name) && !written.contains(name) {
                        try append(SnapshotFrame(delete: name))
                    }
                }
                try flush()
                guard fsync(state.file!.descriptor) == 0 else {
                    throw StoreError("cannot sync: \(String(cString: strerror(errno)))")
                }
                if state.dead > state.live / 10 { try compact(&state) }
            } catch {
                // What was written and what the slots say may differ now: the next use reads the pack again.
                state = State()
                throw StoreError("\(path): error: \(error)")
            }
            return cutShort
        }
    }

    // MARK: Reading the pack

    /// Reads the pack when it was not: its slots, its end cut to its last whole frame.
    private func open(_ state: inout State) throws(StoreError) -> (bytes: Int64, problem: String)? {
        guard state.file == nil else { return nil }
        let descriptor = Glibc.open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw failure("cannot open it") }
        let file = File(descriptor: descriptor)
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw failure("cannot read it") }
        let size = Int64(status.st_size)
        var scanned = State(file: file)
        var cutShort: (bytes: Int64, problem: String)?
        if size >= Int64(SnapshotFrame.fileMagic.count),
            file.read(at: 0, count: SnapshotFrame.fileMagic.count) == SnapshotFrame.fileMagic
        {
            let (end, problem) = scan(file, into: &scanned)
            scanned.end = end
            if end < size { cutShort = (size - end, problem ?? "not a whole frame") }
        } else {
            if size > 0 { cutShort = (size, "not a pack of the store snapshot") }
            try file.write(SnapshotFrame.fileMagic, at: 0)
            scanned.end = Int64(SnapshotFrame.fileMagic.count)
        }
        if scanned.end < size && ftruncate(descriptor, off_t(scanned.end)) != 0 {
            throw failure("cannot cut off its last \(size - scanned.end) bytes")
        }
        state = scanned
        return cutShort
    }

    /// Reads every frame after the magic into `state`'s slots and byte counts; returns where the whole frames end and,
    /// when bytes follow, why they are not a frame.
    private func scan(_ file: File, into state: inout State) -> (end: Int64, problem: String?) {
        frames(of: file) { name, offset, frame, header in
            let record = frame.dropFirst(header.recordOffset).prefix(SnapshotRecord.headLength)
            state.place(name, record: header.kind == .put ? record : nil, offset: offset, length: header.length)
        }
    }

    /// Calls `each` with every whole frame of `file` after the magic, in order, read a chunk at a time: its name, its
    /// offset, its bytes and its head. Returns where the whole frames end and why the bytes after them are not one.
    private func frames<Failure: Error>(
        of file: File, _ each: (String, Int64, ArraySlice<UInt8>, SnapshotFrame.Header) throws(Failure) -> Void
    ) throws(Failure) -> (end: Int64, problem: String?) {
        var buffer: [UInt8] = []
        var bufferStart = Int64(SnapshotFrame.fileMagic.count)
        var cursor = 0
        var atEnd = false
        while true {
            switch SnapshotFrame.parse(buffer[cursor...], maximumRecordBytes: maximumRecordBytes) {
            case .frame(let header):
                try each(header.name, bufferStart + Int64(cursor), buffer[cursor..<(cursor + header.length)], header)
                cursor += header.length
            case .incomplete(let needed):
                if atEnd {
                    let end = bufferStart + Int64(cursor)
                    return (end, cursor == buffer.count ? nil : "a frame of \(needed) bytes is cut short")
                }
                buffer.removeFirst(cursor)
                bufferStart += Int64(cursor)
                cursor = 0
                let count = max(Self.chunkBytes, needed - buffer.count)
                let offset = bufferStart + Int64(buffer.count)
                let read = file.readAvailable(at: offset, count: count)
                if read.count < count { atEnd = true }
                buffer += read
            case .invalid(let problem):
                return (bufferStart + Int64(cursor), problem)
            }
        }
    }

    // MARK: Rewriting the pack

    /// Writes the live frames, in the order they were written, to a new file beside the pack, syncs it and renames it
    /// into the pack's place; the reads that hold the old file keep reading it.
    private func compact(_ state: inout State) throws(StoreError) {
        let temporary = Self.temporaryPath(of: path)
        unlink(temporary)
        let descriptor = Glibc.open(temporary, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else { throw failure("cannot create \(temporary)") }
        let file = File(descriptor: descriptor)
        var compacted = State(file: file, end: Int64(SnapshotFrame.fileMagic.count))
        var buffer = SnapshotFrame.fileMagic
        var written: Int64 = 0
        do throws(StoreError) {
            _ = try frames(of: state.file!) { name, offset, frame, header throws(StoreError) in
                guard var slot = state.slots[name], slot.offset == offset else { return }
                slot.offset = compacted.end
                compacted.slots[name] = slot
                compacted.end += Int64(header.length)
                compacted.live += Int64(header.length)
                buffer += frame
                if buffer.count >= Self.chunkBytes {
                    try file.write(buffer, at: written)
                    written += Int64(buffer.count)
                    buffer.removeAll(keepingCapacity: true)
                }
            }
            try file.write(buffer, at: written)
            guard compacted.slots.count == state.slots.count else {
                throw StoreError("its rows changed while it was rewritten")
            }
            guard fsync(descriptor) == 0, rename(temporary, path) == 0 else {
                throw StoreError("cannot replace it: \(String(cString: strerror(errno)))")
            }
        } catch {
            unlink(temporary)
            throw error
        }
        let folder = Glibc.open((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            Glibc.close(folder)
        }
        state = compacted
    }

    /// Where a pack is rewritten before it is renamed into its place: hidden, beside it.
    static func temporaryPath(of path: String) -> String {
        (path as NSString).deletingLastPathComponent + "/." + (path as NSString).lastPathComponent + ".new"
    }

    private func failure(_ what: String) -> StoreError {
        StoreError("\(path): error: \(what): \(String(cString: strerror(errno)))")
    }
}
