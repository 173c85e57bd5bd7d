/// One outbound HTTP request: method, URL, headers and body.
public struct HTTPClientRequest: Sendable {
    /// The request method.
    public enum Method: String, Sendable {
        case get = "GET"
        case head = "HEAD"
        case post = "POST"
    }

    /// The method.
    public var method: Method
    /// The absolute `https://` (or `http://`) URL.
    public var url: String
    /// Header fields, in order (`Content-Type: application/jose+json` is `("Content-Type", "application/jose+json")`).
    public var headers: [(name: String, value: String)]
    /// The body (POST only).
    public var body: [UInt8]

    /// Creates a request.
    public init(
        _ method: Method = .get, url: String, headers: [(name: String, value: String)] = [], body: [UInt8] = []
    ) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}
