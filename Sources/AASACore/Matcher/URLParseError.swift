/// Why a string could not be used as a URL to match; the CLI maps it to exit status 2.
public struct URLParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What was wrong.
    public enum Code: Sendable, Hashable {
        /// The input was empty or only whitespace.
        case empty
        /// No `scheme:` and not a path starting with `/`.
        case missingScheme
        /// A scheme other than `http`/`https` (universal links are web URLs, spec §2.10).
        case unsupportedScheme(String)
        /// No `//host` after the scheme.
        case missingHost
        /// The host contains spaces or control characters.
        case invalidHost(String)
        /// The port is not a number from 0 to 65535.
        case invalidPort(String)
        /// Longer than ``MatchURL/maximumLength`` bytes: no rule is tried, as for a URL no rule claims.
        case tooLong(Int)
    }

    /// The stable code.
    public var code: Code
    /// The text that was given.
    public var input: String

    /// Creates an error.
    public init(_ code: Code, input: String) {
        self.code = code
        self.input = input
    }

    /// A message saying what is wrong and how to fix it.
    public var description: String {
        switch code {
        case .empty:
            return "the URL is empty; give an https URL such as https://example.com/path"
        case .missingScheme:
            return
                "'\(input)' has no scheme; give an https URL such as https://example.com/path, or a path starting with /"
        case .unsupportedScheme(let scheme):
            return "'\(input)' uses scheme '\(scheme)'; universal links are http(s) URLs"
        case .missingHost:
            return "'\(input)' has no host; write it as https://host/path"
        case .invalidHost(let host):
            return "'\(input)' has an invalid host '\(host)'"
        case .invalidPort(let port):
            return "'\(input)' has an invalid port '\(port)'"
        case .tooLong(let length):
            return
                "the URL is \(length) bytes long, over the limit of \(MatchURL.maximumLength): no rule is tried, and the server answers it as a URL no app claims (404 instead of the landing page)"
        }
    }
}
