import AASACore
public import AASAOpenSSL

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The file named by `--store-key-file`: the store key as 64 hex characters, readable only by the server's user.
///
/// It is judged before a byte is read: a regular file (symlinks followed, as Kubernetes mounts Secrets through
/// `..data` links), with the permission rule of ``PrivateKeyPermissions`` (no bit for others, group bits only for a
/// group the server runs with) always enforced, not only under `--strict`: the key opens every private key in the
/// store. The read is bounded (``maximumBytes``), and the hex text and the decoded bytes are wiped once the
/// ``StoreKey`` holds its own copy.
public enum StoreKeyFile {
    /// The most bytes read: 64 hex digits and a CR LF. Anything larger is refused from its size, unread.
    public static let maximumBytes = 66

    /// Why a store key file was refused.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The kind of refusal.
        public enum Code: String, Sendable, Hashable {
            /// No such file, or a broken symlink.
            case missing
            /// It exists but cannot be opened or read.
            case unreadable
            /// A folder, FIFO, device or socket.
            case notRegular = "not-regular"
            /// Other users (or a group the server does not run with) can read or change it.
            case exposed
            /// Over ``StoreKeyFile/maximumBytes``.
            case tooLarge = "too-large"
            /// Not exactly 64 hex characters (and at most one line ending).
            case malformed
        }

        /// The kind of refusal; equality compares it only.
        public var code: Code
        /// The file as named on the command line.
        public var file: String
        /// What is wrong and how to fix it.
        public var reason: String

        /// `<file>: error: <reason>`, as the server prints it.
        public var description: String { "\(file): error: the store key file \(reason)" }

        /// Failures are equal when their codes are.
        public static func == (lhs: Failure, rhs: Failure) -> Bool { lhs.code == rhs.code }
    }

    /// How to make a key file, for the messages.
    static func generation(_ path: String) -> String {
        "generate a key with: openssl rand -hex 32 > \(path) && chmod 600 \(path)"
    }

    /// Reads the store key from `path`.
    ///
    /// - Throws: ``Failure`` naming the file, what is wrong and the fix.
    public static func load(_ path: String) throws(Failure) -> StoreKey {
        var info = stat()
        guard stat(path, &info) == 0 else {
            let missing = errno == ENOENT || errno == ENOTDIR
            let reason = String(cString: strerror(errno))
            throw missing
                ? Failure(
                    code: .missing, file: path,
                    reason: "does not exist (or is a broken symlink); fix: \(generation(path))")
                : Failure(
                    code: .unreadable, file: path, reason: "cannot be read: \(reason); fix: check its permissions")
        }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw Failure(
                code: .notRegular, file: path,
                reason: "is \(info.st_mode & S_IFMT == S_IFDIR ? "a folder" : "not a regular file"); fix: name the key "
                    + "file itself, or \(generation(path))")
        }
        let mode = UInt32(info.st_mode) & 0o7777
        if mode & 0o077 != 0,
            let exposure = PrivateKeyPermissions.exposure(
                mode: mode, group: UInt32(info.st_gid), processGroups: PrivateKeyPermissions.processGroups())
        {
            let octal = String(mode, radix: 8)
            let padded = String(repeating: "0", count: max(0, 4 - octal.count)) + octal
            throw Failure(
                code: .exposed, file: path,
                reason: "has mode \(padded): \(exposure), so other users on this machine can open every private key "
                    + "in the store; it is refused; fix: chmod 600 \(path) (Kubernetes: Secret defaultMode 0440 with "
                    + "the pod's fsGroup)")
        }
        var contents: ConfinedFile.Contents
        switch ConfinedFile.read(path, within: .anywhere, maximumBytes: maximumBytes) {
        case .success(let read): contents = read
        case .failure(.missing):
            throw Failure(code: .missing, file: path, reason: "does not exist (any more); fix: \(generation(path))")
        case .failure(.notRegular(let kind)):
            throw Failure(
                code: .notRegular, file: path, reason: "is a \(kind), not a regular file; fix: name the key file itself"
            )
        case .failure(.tooLarge(let size, let cap)):
            throw Failure(
                code: .tooLarge, file: path,
                reason: "is \(size) bytes; a store key file is 64 hex characters (at most \(cap) bytes with a line "
                    + "ending), so it is not read; fix: \(generation(path))")
        case .failure(.unreadable(let reason)):
            throw Failure(
                code: .unreadable, file: path, reason: "cannot be read: \(reason); fix: check its permissions")
        case .failure(let refusal):
            throw Failure(code: .unreadable, file: path, reason: "cannot be read: \(refusal)")
        }
        defer { contents.bytes.withUnsafeMutableBytes { wipe($0) } }
        var key = try decode(contents.bytes, path: path)
        defer { key.withUnsafeMutableBytes { wipe($0) } }
        do {
            return try StoreKey(key: key, file: path)
        } catch {
            throw Failure(code: .malformed, file: path, reason: "\(error)")
        }
    }

    /// The 32 bytes that 64 hex digits (either case, then at most one `\n` or `\r\n`) spell.
    static func decode(_ text: [UInt8], path: String) throws(Failure) -> [UInt8] {
        var digits = text[...]
        if digits.last == UInt8(ascii: "\n") { digits = digits.dropLast() }
        if digits.last == UInt8(ascii: "\r") { digits = digits.dropLast() }
        guard digits.count == 2 * StoreKey.byteCount else {
            throw Failure(
                code: .malformed, file: path,
                reason: "holds \(digits.count) characters; a store key is exactly 64 hex characters (32 bytes) on one "
                    + "line; fix: \(generation(path))")
        }
        var key = [UInt8](repeating: 0, count: StoreKey.byteCount)
        for (index, character) in digits.enumerated() {
            guard let value = hexValue(character) else {
                key.withUnsafeMutableBytes { wipe($0) }
                throw Failure(
                    code: .malformed, file: path,
                    reason: "has a character that is not a hex digit at offset \(index); a store key is 64 "
                        + "characters 0-9 and a-f; fix: \(generation(path))")
            }
            key[index / 2] = key[index / 2] << 4 | value
        }
        return key
    }

    private static func hexValue(_ character: UInt8) -> UInt8? {
        switch character {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): character - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): character - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): character - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Overwrites `buffer` with zeros through a volatile-enough path: `memset_s` is not on Linux, and a plain loop
    /// over a buffer about to be freed may be removed by the optimiser; `explicit_bzero` is glibc's answer.
    private static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        #if canImport(Glibc)
            explicit_bzero(base, buffer.count)
        #else
            memset_s(base, buffer.count, 0, buffer.count)
        #endif
    }
}
