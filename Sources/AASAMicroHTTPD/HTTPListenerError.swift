internal import CMicroHTTPD
internal import CShims.MicroHTTPD

/// A failure to start or reconfigure an ``HTTPListener``, with a stable code and a human reason.
///
/// Equality compares ``code`` only.
public struct HTTPListenerError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A stable, machine-readable identifier for the kind of failure.
    public struct Code: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
        /// The identifier, e.g. `address-in-use`.
        public let rawValue: String

        /// Creates a code from its identifier.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// Another process (or listener) already listens on the port.
        public static let addressInUse = Code(rawValue: "address-in-use")
        /// The bind address is not an IPv4 or IPv6 literal.
        public static let invalidBindAddress = Code(rawValue: "invalid-bind-address")
        /// libmicrohttpd refused to start the daemon for another reason (see the reason text).
        public static let startFailed = Code(rawValue: "start-failed")
        /// A response could not be turned into a libmicrohttpd response (e.g. a forbidden header).
        public static let invalidResponse = Code(rawValue: "invalid-response")
        /// A certificate chain could not be loaded into GnuTLS.
        public static let invalidCertificate = Code(rawValue: "invalid-certificate")
        /// A private key could not be loaded into GnuTLS (not PEM, encrypted, an unsupported type).
        public static let invalidPrivateKey = Code(rawValue: "invalid-private-key")
        /// A private key does not belong to the leaf certificate it is paired with.
        public static let keyMismatch = Code(rawValue: "key-mismatch")
        /// A credential's copy in its ``CredentialVault`` could not be read back, or is not what was sealed there.
        public static let unreadableCredential = Code(rawValue: "unreadable-credential")
        /// The certificate table has no entry or names a missing default entry.
        public static let invalidCertificateTable = Code(rawValue: "invalid-certificate-table")
        /// The operation needs TLS but the listener serves plain HTTP.
        public static let notTLS = Code(rawValue: "not-tls")

        /// The identifier.
        public var description: String { rawValue }
    }

    /// What kind of failure this is.
    public let code: Code
    /// What failed, on which value, and how to fix it.
    public let reason: String

    /// Creates an error.
    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    /// `[code] reason`: the severity is the printer's to add, so a message that wraps it says `error:` once.
    public var description: String { "[\(code)] \(reason)" }

    /// Errors are equal when their codes are.
    public static func == (lhs: HTTPListenerError, rhs: HTTPListenerError) -> Bool { lhs.code == rhs.code }
}

/// The one place where libmicrohttpd's failure signals (`NULL`, `MHD_NO`) become Swift errors.
enum MHDCheck {
    /// Returns `pointer`, or throws `error()` when libmicrohttpd returned `NULL`.
    static func notNull<T>(_ pointer: T?, _ error: @autoclosure () -> HTTPListenerError) throws -> T {
        guard let pointer else { throw error() }
        return pointer
    }

    /// Throws `error()` unless libmicrohttpd returned `MHD_YES`.
    static func yes(_ result: MHD_Result, _ error: @autoclosure () -> HTTPListenerError) throws {
        guard result == .YES else { throw error() }
    }
}
