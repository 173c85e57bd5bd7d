/// Why a DNS lookup or update failed, with what to do about it.
public struct DNSError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable {
        /// A setting cannot work: an address, a key file, a name.
        case configuration
        /// No answer: the server is unreachable, or did not answer in time.
        case network
        /// The server answered with an error code (`rcode`).
        case answered
        /// The server refused the key that signed an update (TSIG), or its answer's signature did not verify.
        case key
    }

    public var kind: Kind
    public var message: String
    public var hint: String
    /// The answer's response code (`NOERROR`, `REFUSED`, `NOTAUTH`, …) when the server answered.
    public var rcode: String?

    public init(_ kind: Kind, _ message: String, hint: String, rcode: String? = nil) {
        self.kind = kind
        self.message = message
        self.hint = hint
        self.rcode = rcode
    }

    public var description: String { "\(message); fix: \(hint)" }
}
