/// The request a page is rendered for, as the banner's `app-argument` and the landing page's URL see it.
public struct PageRequest: Sendable, Hashable {
    /// The URL: `https://` + the domain (+ the port the client used, unless 443) + raw path + `?` + raw query.
    public var url: [UInt8]
    /// The raw path as sent.
    public var path: [UInt8]
    /// The raw query, without `?`; empty when there is none.
    public var query: [UInt8]

    /// Builds the request's canonical URL. The host is the configured domain, never the `Host` header's
    /// text; only a numeric port is taken from it.
    public init(domain: String, port: String? = nil, path: [UInt8], query: String?) {
        var url = Array("https://".utf8) + Array(domain.utf8)
        if let port, port != "443", !port.isEmpty, port.utf8.count <= 5,
            port.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
        {
            url += Array(":\(port)".utf8)
        }
        url += path
        if let query {
            url.append(UInt8(ascii: "?"))
            url += Array(query.utf8)
        }
        self.url = url
        self.path = path
        self.query = Array((query ?? "").utf8)
    }
}
