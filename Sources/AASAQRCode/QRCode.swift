private import CQREncode

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A QR code symbol (ISO/IEC 18004), made by libqrencode: the only type that calls it.
///
/// The text is encoded as 8-bit bytes (`QRcode_encodeData`, so any byte, NUL included, is data) at error
/// correction level M (15 % of the symbol may be lost), in the smallest version that holds it.
///
/// Thread safety: libqrencode keeps no state between calls except its Reed-Solomon tables, which it initialises
/// under a `pthread` mutex (Debian builds it with `HAVE_LIBPTHREAD`; the library links `pthread_mutex_lock`), and it
/// reports errors through `errno`, which is per thread. Each call allocates its own input and symbol, and this type
/// frees both before returning, so values may be made on any thread at once.
public struct QRCode: Sendable, Hashable {
    /// The most bytes of text encoded: a URL of 2,048 bytes fits version 40 at level M (2,331 bytes at most),
    /// and is longer than any URL a browser keeps for sharing. Longer text is refused before libqrencode runs.
    public static let maximumTextBytes = 2048

    /// The modules on each side (21 for version 1, up to 177 for version 40).
    public let size: Int
    /// The QR version, 1–40.
    public let version: Int
    /// Row by row, `true` for a dark module.
    public let modules: [Bool]

    /// Encodes `text` (its UTF-8 bytes).
    ///
    /// - Throws: ``QRCodeError`` when the text is empty, over ``maximumTextBytes`` (checked before the C call), or
    ///   libqrencode fails.
    public init(text: String) throws(QRCodeError) {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { throw QRCodeError(.emptyText, "a QR code needs at least one byte of text") }
        guard bytes.count <= Self.maximumTextBytes else {
            throw QRCodeError(
                .textTooLong,
                "the text is \(bytes.count) bytes; a QR code is made for at most \(Self.maximumTextBytes) bytes "
                    + "(shorten the URL)")
        }
        let made: (size: Int, version: Int, modules: [Bool])? = bytes.withUnsafeBufferPointer { buffer in
            // Version 0: the smallest that holds the data.
            guard let symbol = QRcode_encodeData(Int32(buffer.count), buffer.baseAddress, 0, QR_ECLEVEL_M) else {
                return nil
            }
            defer { QRcode_free(symbol) }
            let width = Int(symbol.pointee.width)
            let data = UnsafeBufferPointer(start: symbol.pointee.data, count: width * width)
            // Bit 0 of each byte is the module's colour; the other bits say what kind of module it is.
            return (width, Int(symbol.pointee.version), data.map { $0 & 1 == 1 })
        }
        guard let made else {
            let reason = String(cString: strerror(errno))
            throw QRCodeError(.encodingFailed, "libqrencode could not encode \(bytes.count) bytes: \(reason)")
        }
        (size, version, modules) = made
    }

    /// Whether the module at `column`, `row` is dark.
    public func isDark(column: Int, row: Int) -> Bool { modules[row * size + column] }
}
