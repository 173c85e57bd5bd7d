internal import CGnuTLS
import Glibc
import Synchronization

/// Where ``DeferredCredential``s keep their leaf's and key's bytes until a handshake imports them: files in
/// ``directory`` that have no name (`O_TMPFILE`, or made and unlinked at once), each entry sealed with AES-256-GCM
/// under a key made with the vault and held only in its memory. What reaches the disk is never a key in plaintext,
/// and it means nothing once the process ends.
///
/// A server's heap then holds 16 bytes for a certificate instead of its leaf and key (about 0.8 KB with their
/// arrays); the sealed bytes live in the kernel's page cache, which gives them up under memory pressure, and the
/// first handshake for a name reads them back with one `pread`.
///
/// Entries are appended to a file of at most ``defaultSegmentBytes``, then to a new one. A file is closed, and its blocks
/// freed, when the last entry in it is let go (its certificate renewed or removed); until then the entries let go in
/// it still take their place on disk. Safe to use from every thread at once.
public final class CredentialVault: Sendable {
    /// The folder the files are made in.
    public let directory: String
    /// The most bytes appended to one file before the next one is made.
    public static let defaultSegmentBytes = 16 << 20
    /// The most bytes of one file of this vault.
    let segmentBytes: Int
    /// The bytes AES-GCM adds to each entry: its tag.
    static let tagBytes = 16

    private let sealing: Sealing
    private let current: Mutex<Segment?> = Mutex(nil)
    private var counters: Sealing.Counters { sealing.counters }

    /// One file of the vault: closed when its last entry is let go.
    final class Segment: Sendable {
        let descriptor: Int32
        /// Tells the file apart in each entry's nonce.
        let number: UInt32
        /// The bytes appended so far (only under the vault's lock).
        let end = Atomic<Int>(0)
        /// The vault's key, to open what the file holds.
        fileprivate let sealing: Sealing
        private var counters: Sealing.Counters { sealing.counters }

        fileprivate init(descriptor: Int32, number: UInt32, sealing: Sealing) {
            self.descriptor = descriptor
            self.number = number
            self.sealing = sealing
            sealing.counters.files.add(1, ordering: .relaxed)
        }

        deinit {
            close(descriptor)
            counters.files.subtract(1, ordering: .relaxed)
            counters.fileBytes.subtract(end.load(ordering: .relaxed), ordering: .relaxed)
        }
    }

    /// A sealed credential's place: its file, and where in it. Letting the last one of a file go closes the file.
    struct Entry: Sendable {
        let segment: Segment
        let offset: UInt32
        let length: UInt32

        /// The leaf and key sealed here, read back and checked.
        ///
        /// - Throws: ``HTTPListenerError`` (`.unreadableCredential`) when the file cannot be read or its bytes are not
        ///   what was sealed here.
        func open() throws(HTTPListenerError) -> (leaf: [UInt8], key: PrivateKeyBytes) {
            try segment.sealing.open(self)
        }

        /// Says that the credential sealed here is let go (its bytes stay in the file until the file goes).
        func release() {
            segment.sealing.counters.entries.subtract(1, ordering: .relaxed)
            segment.sealing.counters.bytes.subtract(Int(length), ordering: .relaxed)
        }
    }

    /// What the vault holds now, and how often sealing failed.
    public struct Figures: Sendable, Equatable {
        /// Credentials sealed in it and not let go.
        public var entries: Int
        /// Their sealed bytes.
        public var bytes: Int
        /// Its files, and their bytes on disk (with the entries let go in files still open).
        public var files: Int
        public var fileBytes: Int
        /// Credentials that could not be sealed (a file that could not be made or written), kept in memory instead.
        public var failures: Int
    }

    /// A vault making its files in `directory`, which must exist and be writable: one file is made now, so a folder
    /// that cannot take one is this error, not a failure at each certificate.
    ///
    /// - Throws: ``HTTPListenerError`` (`.startFailed`) naming the folder and the system's reason.
    public convenience init(directory: String) throws(HTTPListenerError) {
        try self.init(directory: directory, segmentBytes: Self.defaultSegmentBytes)
    }

    /// A vault whose files take at most `segmentBytes` each (tests use small ones).
    init(directory: String, segmentBytes: Int) throws(HTTPListenerError) {
        self.directory = directory
        self.segmentBytes = segmentBytes
        sealing = try Sealing(directory: directory)
        let first = try makeSegment()
        current.withLock { $0 = first }
    }

    /// What the vault holds now.
    public var figures: Figures {
        Figures(
            entries: counters.entries.load(ordering: .relaxed), bytes: counters.bytes.load(ordering: .relaxed),
            files: counters.files.load(ordering: .relaxed), fileBytes: counters.fileBytes.load(ordering: .relaxed),
            failures: counters.failures.load(ordering: .relaxed))
    }

    /// Seals `leaf` and `key` into the vault; `nil` (counted in ``Figures/failures``) when the file cannot be made
    /// or written, and the caller keeps them in memory.
    func seal(leaf: [UInt8], key privateKey: PrivateKeyBytes) -> Entry? {
        var plain = [UInt8]()
        plain.reserveCapacity(5 + leaf.count + privateKey.bytes.count)
        withUnsafeBytes(of: UInt32(leaf.count).littleEndian) { plain.append(contentsOf: $0) }
        plain.append(privateKey.isPEM ? 1 : 0)
        plain.append(contentsOf: leaf)
        plain.append(contentsOf: privateKey.bytes)
        defer { Self.erase(&plain) }
        let length = plain.count + Self.tagBytes
        guard length <= segmentBytes, let (segment, offset) = place(length) else {
            counters.failures.add(1, ordering: .relaxed)
            return nil
        }
        guard let sealed = sealing.crypt(plain, nonce: Sealing.nonce(segment.number, offset), sealing: true),
            write(sealed, to: segment.descriptor, at: offset)
        else {
            counters.failures.add(1, ordering: .relaxed)
            return nil
        }
        counters.entries.add(1, ordering: .relaxed)
        counters.bytes.add(length, ordering: .relaxed)
        return Entry(segment: segment, offset: UInt32(offset), length: UInt32(length))
    }

    /// Room for `length` bytes: the current file and the offset there, after a new file when it is full.
    private func place(_ length: Int) -> (Segment, Int)? {
        current.withLock { current -> (Segment, Int)? in
            let segment: Segment
            if let open = current, open.end.load(ordering: .relaxed) + length <= segmentBytes {
                segment = open
            } else {
                // A file that cannot be made now is tried again at the next entry.
                guard let next = try? makeSegment() else { return nil }
                segment = next
                current = next
            }
            let offset = segment.end.load(ordering: .relaxed)
            segment.end.store(offset + length, ordering: .relaxed)
            counters.fileBytes.add(length, ordering: .relaxed)
            return (segment, offset)
        }
    }

    /// A new file with no name in ``directory``, readable and writable by this process only.
    private func makeSegment() throws(HTTPListenerError) -> Segment {
        var descriptor = Glibc.open(directory, Self.temporaryFile | O_RDWR | O_CLOEXEC, 0o600)
        if descriptor < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL) {
            // A file system without O_TMPFILE: a file made with a random name and unlinked at once.
            var template = Array((directory + "/.aasa-credentials-XXXXXX").utf8CString)
            descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
            if descriptor >= 0 {
                _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
                template.withUnsafeBufferPointer { _ = unlink($0.baseAddress!) }
            }
        }
        guard descriptor >= 0 else {
            throw HTTPListenerError(
                .startFailed,
                "the credential vault cannot make a file in \(directory): \(String(cString: strerror(errno)))")
        }
        return Segment(
            descriptor: descriptor, number: counters.segments.add(1, ordering: .relaxed).newValue, sealing: sealing)
    }

    /// Linux's `O_TMPFILE` (`__O_TMPFILE | O_DIRECTORY`, the same on x86-64 and arm64), which Glibc's module leaves
    /// out.
    private static let temporaryFile: Int32 = 0o20000000 | O_DIRECTORY

    /// Writes `bytes` whole at `offset`.
    private func write(_ bytes: [UInt8], to descriptor: Int32, at offset: Int) -> Bool {
        var done = 0
        while done < bytes.count {
            let written = bytes.withUnsafeBytes {
                pwrite(descriptor, $0.baseAddress! + done, $0.count - done, off_t(offset + done))
            }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { return false }
            done += written
        }
        return true
    }

    /// Zeroes what held a key before it is let go.
    static func erase(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { _ = $0.initializeMemory(as: UInt8.self, repeating: 0) }
    }
}

/// The key of one ``CredentialVault``, and what its files hold: shared by the vault and its files, so an entry opens
/// with its file alone. The key is written once, when made, and only read after: safe to share between threads.
private final class Sealing: @unchecked Sendable {
    let directory: String
    /// The AES-256 key, in memory that never moves (GnuTLS takes it by pointer), zeroed when the vault goes.
    private let key: UnsafeMutablePointer<UInt8>
    let counters = Counters()

    init(directory: String) throws(HTTPListenerError) {
        self.directory = directory
        key = .allocate(capacity: 32)
        guard gnutls_rnd(GNUTLS_RND_KEY, key, 32) == 0 else {
            key.deallocate()
            throw HTTPListenerError(.startFailed, "the credential vault could not make a key (GnuTLS's random source)")
        }
    }

    deinit {
        key.update(repeating: 0, count: 32)
        key.deallocate()
    }

    /// What the vault holds now, and how often sealing failed.
    final class Counters: Sendable {
        let entries = Atomic<Int>(0)
        let bytes = Atomic<Int>(0)
        let files = Atomic<Int>(0)
        let fileBytes = Atomic<Int>(0)
        let failures = Atomic<Int>(0)
        let segments = Atomic<UInt32>(0)
    }

    /// The leaf and key sealed at `entry`, read back and checked (``CredentialVault/Entry/open()``).
    func open(_ entry: CredentialVault.Entry) throws(HTTPListenerError) -> (leaf: [UInt8], key: PrivateKeyBytes) {
        var sealed = [UInt8](repeating: 0, count: Int(entry.length))
        var done = 0
        while done < sealed.count {
            let read = sealed.withUnsafeMutableBytes {
                pread(
                    entry.segment.descriptor, $0.baseAddress! + done, $0.count - done, off_t(entry.offset) + off_t(done)
                )
            }
            if read < 0 && errno == EINTR { continue }
            guard read > 0 else {
                let reason = read < 0 ? String(cString: strerror(errno)) : "the file ends before it"
                throw HTTPListenerError(
                    .unreadableCredential,
                    "its sealed copy in the credential vault (\(directory)) could not be read: \(reason)")
            }
            done += read
        }
        guard var plain = crypt(sealed, nonce: Self.nonce(entry.segment.number, Int(entry.offset)), sealing: false),
            plain.count >= 5
        else {
            throw HTTPListenerError(
                .unreadableCredential,
                "its sealed copy in the credential vault (\(directory)) is not what was sealed there (the file was "
                    + "changed under the server)")
        }
        defer { CredentialVault.erase(&plain) }
        let leafCount = plain.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(as: UInt32.self))) }
        guard leafCount <= plain.count - 5 else {
            throw HTTPListenerError(
                .unreadableCredential, "its sealed copy in the credential vault is not a credential")
        }
        let leaf = Array(plain[5..<(5 + leafCount)])
        let keyBytes = Array(plain[(5 + leafCount)...])
        return (leaf, plain[4] == 1 ? PrivateKeyBytes(keepingPEM: keyBytes) : PrivateKeyBytes(der: keyBytes))
    }

    /// AES-256-GCM over `input` (sealing: appending the tag; opening: checking and dropping it); `nil` when GnuTLS
    /// fails or the tag does not match.
    func crypt(_ input: [UInt8], nonce: [UInt8], sealing: Bool) -> [UInt8]? {
        var keyDatum = gnutls_datum_t(data: key, size: 32)
        var handle: gnutls_aead_cipher_hd_t?
        guard gnutls_aead_cipher_init(&handle, GNUTLS_CIPHER_AES_256_GCM, &keyDatum) >= 0, let handle else {
            return nil
        }
        defer { gnutls_aead_cipher_deinit(handle) }
        let tagBytes = CredentialVault.tagBytes
        guard sealing || input.count >= tagBytes else { return nil }
        var output = [UInt8](repeating: 0, count: sealing ? input.count + tagBytes : input.count - tagBytes)
        var outputLength = output.count
        let result = input.withUnsafeBytes { input in
            output.withUnsafeMutableBytes { output in
                sealing
                    ? gnutls_aead_cipher_encrypt(
                        handle, nonce, nonce.count, nil, 0, tagBytes, input.baseAddress, input.count,
                        output.baseAddress, &outputLength)
                    : gnutls_aead_cipher_decrypt(
                        handle, nonce, nonce.count, nil, 0, tagBytes, input.baseAddress, input.count,
                        output.baseAddress, &outputLength)
            }
        }
        guard result >= 0, outputLength == output.count else { return nil }
        return output
    }

    /// The nonce of the entry at `offset` of file `number`: each place is written once under the vault's key.
    static func nonce(_ number: UInt32, _ offset: Int) -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: 12)
        withUnsafeBytes(of: number.bigEndian) { nonce.replaceSubrange(0..<4, with: $0) }
        withUnsafeBytes(of: UInt64(offset).bigEndian) { nonce.replaceSubrange(4..<12, with: $0) }
        return nonce
    }
}
