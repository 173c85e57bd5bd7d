/// Why a text has no QR code: the stable ``code``, a reason naming the value and the limit.
public struct QRCodeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What failed.
    public enum Code: String, Sendable {
        /// The text is over ``QRCode/maximumTextBytes``; refused before libqrencode is called.
        case textTooLong = "qr-text-too-long"
        /// The text is empty.
        case emptyText = "qr-text-empty"
        /// libqrencode returned no symbol (`errno` says why: `ENOMEM`, `EINVAL`, `ERANGE`).
        case encodingFailed = "qr-encoding-failed"
    }

    /// What failed.
    public let code: Code
    /// What failed, on which value, and how to fix it.
    public let reason: String

    /// Creates an error.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "[\(code.rawValue)] \(reason)" }

    /// Equal when the codes are.
    public static func == (lhs: QRCodeError, rhs: QRCodeError) -> Bool { lhs.code == rhs.code }
}
