internal import COpenSSL

/// A failure in certificate or key handling, with a stable code, a human reason and OpenSSL's own diagnostics.
///
/// Equality compares ``code`` only, so callers and tests can match on the kind of failure without
/// depending on OpenSSL's wording.
public struct OpenSSLError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable, machine-readable identifier for the kind of failure.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The identifier, e.g. `malformed-pem`.
        public let rawValue: String

        /// Creates a code from its identifier.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The input is not valid PEM, or holds no object of the expected kind.
        public static let malformedPEM = Code(rawValue: "malformed-pem")
        /// The input is not valid DER.
        public static let malformedDER = Code(rawValue: "malformed-der")
        /// A PEM chain contained no certificate.
        public static let emptyChain = Code(rawValue: "empty-chain")
        /// A private key does not belong to the certificate it is paired with.
        public static let keyMismatch = Code(rawValue: "key-mismatch")
        /// A name cannot be put into a certificate (not a DNS name or IP literal).
        public static let invalidName = Code(rawValue: "invalid-name")
        /// A requested validity period is out of range.
        public static let invalidValidity = Code(rawValue: "invalid-validity")
        /// A key is of a type the operation does not support (e.g. RSA where ES256 needs ECDSA P-256).
        public static let unsupportedKey = Code(rawValue: "unsupported-key")
        /// Key generation failed.
        public static let keyGeneration = Code(rawValue: "key-generation")
        /// Building or signing a certificate failed.
        public static let certificateCreation = Code(rawValue: "certificate-creation")
        /// Encoding an object (PEM, DER, digest) failed.
        public static let encoding = Code(rawValue: "encoding")
        /// Reading or writing a file failed.
        public static let fileSystem = Code(rawValue: "file-system")
        /// Creating a CMS signature failed.
        public static let signing = Code(rawValue: "signing")
        /// Files on disk are inconsistent (e.g. a CA certificate without its key).
        public static let inconsistentFiles = Code(rawValue: "inconsistent-files")
        /// An OCSP response does not answer for the certificate, is not `good`, is out of date or badly signed.
        public static let ocspResponse = Code(rawValue: "ocsp-response")

        /// The identifier.
        public var description: String { rawValue }
    }

    /// What kind of failure this is.
    public let code: Code
    /// What failed, on which value, and how to fix it.
    public let reason: String
    /// OpenSSL's error queue at the time of the failure, oldest first (may be empty).
    public let openSSLErrors: [String]

    /// Creates an error; the OpenSSL error queue is drained into ``openSSLErrors``.
    init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
        self.openSSLErrors = OpenSSLError.drainErrorQueue()
    }

    /// `[code] reason (openssl: ...)`: the severity is the printer's to add, so a message that wraps it says
    /// `error:` once.
    public var description: String {
        var text = "[\(code)] \(reason)"
        if !openSSLErrors.isEmpty {
            text += " (openssl: \(openSSLErrors.joined(separator: "; ")))"
        }
        return text
    }

    /// Errors are equal when their codes are.
    public static func == (lhs: OpenSSLError, rhs: OpenSSLError) -> Bool { lhs.code == rhs.code }

    /// Empties this thread's OpenSSL error queue and returns its entries as text.
    ///
    /// The only place that reads the queue: every failure goes through ``init(_:_:)``, and
    /// successful paths that expect queued noise (e.g. the end of a PEM chain) call this to discard it.
    @discardableResult
    static func drainErrorQueue() -> [String] {
        var messages: [String] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            messages.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        return messages
    }
}
