import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// One inotify instance: its descriptor (closed with it), the watches added to it, and the events read from it.
///
/// Every watch listens for anything that can change what a load reads, through symlinks (no `IN_DONT_FOLLOW`):
/// a symlinked folder or file is watched at its target.
final class Inotify: Sendable {
    /// The instance's descriptor, non-blocking and closed on exec: what the watcher's thread polls.
    let descriptor: Int32

    /// What every watch listens for.
    private static let mask: UInt32 =
        UInt32(IN_CREATE) | UInt32(IN_DELETE) | UInt32(IN_MODIFY) | UInt32(IN_CLOSE_WRITE) | UInt32(IN_MOVED_TO)
        | UInt32(IN_MOVED_FROM) | UInt32(IN_ATTRIB) | UInt32(IN_DELETE_SELF) | UInt32(IN_MOVE_SELF)

    /// One event: its watch, what happened, and the name of the entry it is about (empty for the watched path
    /// itself).
    struct Event {
        var watch: Int32
        var mask: UInt32
        var name: String

        /// Events were lost (the kernel's queue overflowed): anything may have changed.
        var overflowed: Bool { mask & UInt32(IN_Q_OVERFLOW) != 0 }
        /// The kernel dropped the watch (its inode is gone).
        var ignored: Bool { mask & UInt32(IN_IGNORED) != 0 }
    }

    /// A new instance.
    ///
    /// - Throws: a `POSIXError` when the kernel refuses one (e.g. the per-user instance limit,
    ///   `fs.inotify.max_user_instances`).
    init() throws {
        let descriptor = inotify_init1(Int32(IN_NONBLOCK) | Int32(IN_CLOEXEC))
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }

    /// Adds a watch on `path`: its descriptor, or `-errno`. With `onlyFolder` (`IN_ONLYDIR`), a path that is not a
    /// folder (through symlinks) gets `-ENOTDIR` and no watch: the watch is also the check, with no `stat` first.
    func addWatch(_ path: String, onlyFolder: Bool = false) -> Int32 {
        let wd = inotify_add_watch(descriptor, path, Self.mask | (onlyFolder ? UInt32(IN_ONLYDIR) : 0))
        return wd >= 0 ? wd : -errno
    }

    /// Removes watch `wd`.
    func removeWatch(_ wd: Int32) {
        inotify_rm_watch(descriptor, wd)
    }

    /// Reads every queued event through `buffer`, handing each batch of one read to `body`, until none is left.
    func drain(into buffer: inout [UInt8], _ body: ([Event]) -> Void) {
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return }
            body(buffer.withUnsafeBytes { Self.events(in: $0, count: count) })
        }
    }

    /// The events in the first `count` bytes of `bytes`, as the kernel lays them out (`struct inotify_event` and
    /// its padded name).
    private static func events(in bytes: UnsafeRawBufferPointer, count: Int) -> [Event] {
        var events: [Event] = []
        var offset = 0
        let header = MemoryLayout<inotify_event>.size
        while offset + header <= count {
            let wd = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
            let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
            let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
            let nameBytes = bytes[(offset + header)..<min(count, offset + header + length)]
            let name = String(decoding: nameBytes.prefix { $0 != 0 }, as: UTF8.self)
            offset += header + length
            events.append(Event(watch: wd, mask: mask, name: name))
        }
        return events
    }
}
