/// The request a page is rendered for, as the banner's `app-argument` and the landing page's URL see it.
public struct PageRequest: Sendable, Hashable {
    /// The URL: the domain's canonical origin `https://<domain>`, then the raw path, `?` and the raw query.
    public var url: [UInt8]
    /// The raw path as sent.
    public var path: [UInt8]
    /// The raw query, without `?`; empty when there is none.
    public var query: [UInt8]

    /// Builds the request's canonical URL. The origin is the configured domain's, never anything of the `Host`
    /// header (neither its name nor its port): the page is the same whatever `Host` said, so a shared cache that
    /// keys on the path alone can never be taught another origin (the page is cached with `max-age` and no
    /// `Vary`).
    public init(domain: String, path: [UInt8], query: String?) {
        var url = Array("https://".utf8) + Array(domain.utf8)
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
