/// What a server answered: the status, the header fields of the final response, and the body.
public struct HTTPClientResponse: Sendable {
    /// The HTTP status code.
    public var status: Int
    /// Header fields of the final response in order, names as sent.
    public var headers: [(name: String, value: String)]
    /// The body (empty for HEAD).
    public var body: [UInt8]

    /// Creates a response.
    public init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of the header field `name` (case-insensitive), or `nil`.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }
}
