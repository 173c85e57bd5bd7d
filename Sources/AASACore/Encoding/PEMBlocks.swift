#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The blocks of a PEM file (RFC 7468): each `-----BEGIN LABEL-----` … `-----END LABEL-----`, base64 decoded.
///
/// Text outside the blocks is skipped, as OpenSSL and GnuTLS skip it (`openssl x509 -text` output before a
/// block, comments). A block with RFC 1421 headers (`Proc-Type:`, a legacy encrypted key) is refused: no
/// certificate carries them.
///
/// Pure Swift, so that what reads certificate chains in Swift (the certificate summary a start reads, the
/// GnuTLS import that shares intermediates between chains) splits them the same way.
public struct PEMBlocks: Sendable {
    /// One block: its label (`CERTIFICATE`) and its decoded bytes.
    public struct Block: Sendable {
        /// The label between `-----BEGIN ` and `-----`.
        public var label: String
        /// The base64 body, decoded.
        public var bytes: [UInt8]

        /// Whether this is a certificate as OpenSSL and GnuTLS read a chain (`CERTIFICATE` or the legacy
        /// `X509 CERTIFICATE`; other blocks in a chain file are skipped).
        public var isCertificate: Bool { Self.isCertificate(label) }

        /// Whether a block labelled `label` is a certificate (``isCertificate``).
        static func isCertificate(_ label: String) -> Bool { label == "CERTIFICATE" || label == "X509 CERTIFICATE" }
    }

    /// Why the text is not PEM.
    public struct Failure: Error, Sendable {
        /// Which block, and what is wrong with it.
        public var reason: String
    }

    /// Every block, in file order.
    public let blocks: [Block]

    /// Splits `text` into blocks and decodes each.
    ///
    /// One pass over the lines; a block's body is decoded straight from the text between its two boundary
    /// lines (every certificate folder is read this way at each start, twice).
    public init(_ text: [UInt8]) throws(Failure) {
        try self.init(text, recurring: .shared)
    }

    /// ``init(_:)``, with a chain's intermediates decoded once in `recurring`: a certificate block after another
    /// (never a key, nor a leaf).
    init(_ text: [UInt8], recurring: RecurringPEMBodies) throws(Failure) {
        var blocks: [Block] = []
        var afterCertificate = false
        var open: (label: ArraySlice<UInt8>, bodyStart: Int)? = nil
        var lineStart = text.startIndex
        while lineStart < text.endIndex {
            let lineEnd = Self.lineEnd(in: text, from: lineStart)
            let next = lineEnd < text.endIndex ? lineEnd + 1 : lineEnd
            // Only a line that starts with a dash can be a boundary: the body's lines are passed at their first byte.
            guard text[lineStart] == UInt8(ascii: "-") else {
                lineStart = next
                continue
            }
            var line = text[lineStart..<lineEnd]
            while let last = line.last, last == UInt8(ascii: "\r") || last == UInt8(ascii: " ") || last == 9 {
                line = line.dropLast()
            }
            if let block = open {
                if let label = Self.boundary(line, "-----END ") {
                    guard label == block.label else {
                        throw Failure(
                            reason:
                                "block \(blocks.count + 1) begins as \(String(decoding: block.label, as: UTF8.self)) "
                                + "but ends as \(String(decoding: label, as: UTF8.self))")
                    }
                    let body = text[block.bodyStart..<lineStart]
                    let name = String(decoding: label, as: UTF8.self)
                    let isCertificate = Block.isCertificate(name)
                    // A certificate after a certificate is a chain's intermediate, the same in many files; anything
                    // else (a key above all, which is never kept in memory beyond its reading) is decoded here.
                    let decoded =
                        isCertificate && afterCertificate
                        ? recurring.bytes(of: body, decode: Base64.decode) : Base64.decode(body)
                    afterCertificate = afterCertificate || isCertificate
                    // A header line's `:` is not base64 either: the body is looked at again only when it fails.
                    guard let bytes = decoded else {
                        guard !body.contains(UInt8(ascii: ":")) else {
                            throw Failure(reason: "block \(blocks.count + 1) has PEM headers (encrypted or legacy PEM)")
                        }
                        throw Failure(reason: "block \(blocks.count + 1) is not valid base64")
                    }
                    blocks.append(Block(label: name, bytes: bytes))
                    open = nil
                }
            } else if let label = Self.boundary(line, "-----BEGIN ") {
                open = (label, next)
            }
            lineStart = next
        }
        if open != nil { throw Failure(reason: "block \(blocks.count + 1) has no END line") }
        self.blocks = blocks
    }

    /// Where the line of `text` starting at `start` ends: its newline, or the end of the text. Found by `memchr`: a
    /// chain's lines were looked through byte by byte, then again by the base64 decoder.
    private static func lineEnd(in text: [UInt8], from start: Int) -> Int {
        text.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress, start < buffer.count,
                let newline = memchr(base + start, Int32(UInt8(ascii: "\n")), buffer.count - start)
            else { return buffer.count }
            return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(newline))
        }
    }

    /// The label of a `-----BEGIN LABEL-----` (or END) line, or `nil` when `line` is not one.
    private static func boundary(_ line: ArraySlice<UInt8>, _ prefix: StaticString) -> ArraySlice<UInt8>? {
        let head = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        let dashes = 5
        guard line.count >= head.count + dashes, line.starts(with: head),
            line.suffix(dashes).allSatisfy({ $0 == UInt8(ascii: "-") })
        else { return nil }
        return line.dropFirst(head.count).dropLast(dashes)
    }
}

/// Base64 (RFC 4648 §4) as PEM bodies use it.
enum Base64 {
    /// Each byte's 6-bit value, or one of the markers below: a start decodes two PEM files of every certificate
    /// folder, and a table lookup is a fraction of a branch per byte.
    private static let values: [UInt8] = (0...255).map { byte -> UInt8 in
        switch UInt8(byte) {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): UInt8(byte) - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): UInt8(byte) - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt8(byte) - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        case UInt8(ascii: "/"): 63
        case UInt8(ascii: "="): padding
        case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\r"), UInt8(ascii: "\n"): whitespace
        default: invalid
        }
    }
    private static let padding: UInt8 = 0xFD
    private static let whitespace: UInt8 = 0xFE
    private static let invalid: UInt8 = 0xFF

    /// The decoded bytes of `text`, ignoring whitespace; `nil` when it holds anything else, or bad padding.
    static func decode(_ text: ArraySlice<UInt8>) -> [UInt8]? {
        values.withUnsafeBufferPointer { values in
            text.withUnsafeBufferPointer { input -> [UInt8]? in
                var failed = false
                var bits = 0
                var padding = 0
                let output = [UInt8](unsafeUninitializedCapacity: input.count / 4 * 3 + 3) { output, written in
                    var accumulator: UInt32 = 0
                    var count = 0
                    var index = 0
                    while index < input.count {
                        // Four characters of the alphabet at a group's start are three bytes at once: a PEM line is
                        // sixteen such groups.
                        if bits == 0, padding == 0, index + 4 <= input.count {
                            let (a, b, c, d) = (
                                values[Int(input[index])], values[Int(input[index + 1])],
                                values[Int(input[index + 2])], values[Int(input[index + 3])]
                            )
                            // Every marker is 0xFD or above: the four are of the alphabet when their bits are.
                            if a | b | c | d < 64 {
                                output[count] = a << 2 | b >> 4
                                output[count + 1] = b << 4 | c >> 2
                                output[count + 2] = c << 6 | d
                                count += 3
                                index += 4
                                continue
                            }
                        }
                        let byte = input[index]
                        index += 1
                        let value = values[Int(byte)]
                        if value < 64 {
                            // Data after padding is not base64.
                            guard padding == 0 else {
                                failed = true
                                break
                            }
                            accumulator = accumulator << 6 | UInt32(value)
                            bits += 6
                            if bits >= 8 {
                                bits -= 8
                                output[count] = UInt8(truncatingIfNeeded: accumulator >> UInt32(bits))
                                count += 1
                            }
                        } else if value == Self.padding {
                            padding += 1
                        } else if value == Self.invalid {
                            failed = true
                            break
                        }
                    }
                    written = count
                }
                // What is left is 0, 2 (one `=`…) or 4 bits; six bits left over is a lone character.
                guard !failed, bits < 6, padding <= 2,
                    (bits == 0 && padding == 0) || (padding > 0 && (bits / 2) == padding)
                else { return nil }
                return output
            }
        }
    }
}
