import AASACore
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Who the admin listener answers: requests addressed to it by a name it knows, and, when a token is set,
/// only callers that present it for the routes that reveal configuration and traffic.
///
/// **Host** (against DNS rebinding): a web page can make a browser send requests to the admin listener under
/// the page's own DNS name, once that name resolves to the listener's address; the browser then lets the
/// page read the answers. Such a request carries the page's name in `Host`, so only these are answered:
/// `localhost`, any IP literal (`127.0.0.1`, `[::1]`, the bind address, a pod's address that the kubelet and
/// Prometheus use: an IP literal cannot be rebound, since a page can only be served from a name), and the
/// names given with `--admin-host`. Port, case and a trailing dot are ignored. Anything else, and a request
/// without `Host`, gets 421.
///
/// **Site** (against cross-site requests): a web page the operator visits can make the browser send requests to
/// the admin listener under its own name (`http://127.0.0.1:9090/match?url=…` in an `<img>`, a form, a `fetch`),
/// costing CPU or acting on the operator's behalf even when it cannot read the answer. Browsers say where such
/// a request comes from, so every route but the probes refuses one (403) whose `Sec-Fetch-Site` is anything but
/// `same-origin` or `none` (typed or bookmarked), or whose `Origin` is not this listener's own
/// (`http://` and the request's `Host`). Requests without either header (curl, Prometheus, the kubelet) pass.
///
/// **Token** (`--admin-token-file`, ``tokens``): every route of ``AdminRoute/table`` then needs
/// `Authorization: Bearer <token>` with one of the tokens (401 with `WWW-Authenticate: Bearer` otherwise) unless it
/// is declared ``AdminRoute/Access/open``: `/healthz` and `/readyz` for probes, and `/`, the dashboard, which holds no
/// data: its script asks for the token and sends it with each request. Any token opens the token routes; the tenant
/// API (`/api/v1/`) also learns which one (``caller(authorization:)``) and checks its scope. A path not in the table
/// is 404 for everyone. The comparison takes the same time whatever the presented token and whichever token it is.
public struct AdminAccess: Sendable {
    /// Host names answered besides `localhost` and IP literals, normalised like a `Host` header.
    public var hostNames: Set<String>
    /// The bearer tokens any of which opens the protected routes; none: the routes are open to every caller the
    /// listener answers, and the tenant API is off.
    public var tokens: [AdminToken]

    /// Creates the access rules with at most one token, a `write` token named `admin` (a bare token file's);
    /// `hostNames` are normalised (port, case, trailing dot ignored).
    public init(hostNames: [String] = [], token: [UInt8]? = nil) {
        self.init(
            hostNames: hostNames, tokens: token.map { [AdminToken(name: "admin", scope: .write, bytes: $0)] } ?? [])
    }

    /// Creates the access rules with `tokens`; `hostNames` are normalised (port, case, trailing dot ignored).
    public init(hostNames: [String] = [], tokens: [AdminToken]) {
        self.hostNames = Set(hostNames.compactMap(HostName.normalized))
        self.tokens = tokens
    }

    /// What to do with a request.
    public enum Verdict: Equatable, Sendable {
        /// Answer it.
        case allowed
        /// 421: the `Host` is not one of this listener's names (or missing).
        case misdirected
        /// 401: the route needs the token and the request did not present it.
        case unauthorized
        /// 403: a browser sent the request for a page of another site (`Sec-Fetch-Site`, `Origin`).
        case crossSite
    }

    /// The verdict for a request to `path` with these raw `Host`, `Authorization`, `Sec-Fetch-Site` and `Origin`
    /// values: the route ``AdminRoute/table`` declares for `path` decides the token and the cross-site refusal; a
    /// path not in it is refused cross-site and otherwise allowed (to be answered 404).
    public func verdict(
        path: String, host: UnsafeRawBufferPointer?, authorization: UnsafeRawBufferPointer?,
        fetchSite: UnsafeRawBufferPointer? = nil, origin: UnsafeRawBufferPointer? = nil
    ) -> Verdict {
        decide(path: path, host: host, authorization: authorization, fetchSite: fetchSite, origin: origin).verdict
    }

    /// The verdict, and the caller whose token the request presented when the route needs one (`nil` for an open
    /// route, without tokens, or with no token that matches).
    func decide(
        path: String, host: UnsafeRawBufferPointer?, authorization: UnsafeRawBufferPointer?,
        fetchSite: UnsafeRawBufferPointer?, origin: UnsafeRawBufferPointer?
    ) -> (verdict: Verdict, caller: AdminCaller?) {
        guard let host, let name = HostName.normalized(host), answers(name) else { return (.misdirected, nil) }
        let route = AdminRoute.declared(path)
        if route?.answersCrossSite != true {
            if let fetchSite, !Self.isSameOrigin(fetchSite: fetchSite) { return (.crossSite, nil) }
            if let origin, !Self.isOwn(origin: origin, host: host) { return (.crossSite, nil) }
        }
        guard !tokens.isEmpty, let route, route.access != .open else { return (.allowed, nil) }
        let caller = caller(authorization: authorization)
        return (caller == nil ? .unauthorized : .allowed, caller)
    }

    /// The holder of the token that `authorization` (`Bearer <token>`, the scheme case-insensitive, RFC 9110
    /// §11.1) presents, or `nil` when it presents none of ``tokens``.
    ///
    /// The SHA-256 of what was presented is compared with every token's, every byte of each, whichever matches:
    /// the time taken says nothing about how much of a token was right, its length, or which token it was.
    public func caller(authorization: UnsafeRawBufferPointer?) -> AdminCaller? {
        guard !tokens.isEmpty, let authorization, authorization.count > 7,
            authorization.prefix(7).map({ $0 | 0x20 }) == Array("bearer ".utf8)
        else { return nil }
        let presented = SHA256.digest(Array(authorization.dropFirst(7).drop { $0 == UInt8(ascii: " ") }))
        var found = -1
        for (index, token) in tokens.enumerated() {
            var difference: UInt8 = 0
            for byte in 0..<presented.count { difference |= token.digest[byte] ^ presented[byte] }
            // Branch-free: keeps the index where the difference is 0 (names are unique, tokens too).
            let mask = -Int(difference == 0 ? 1 : 0)
            found = (found & ~mask) | (index & mask)
        }
        return found < 0 ? nil : AdminCaller(name: tokens[found].name, scope: tokens[found].scope)
    }

    /// Whether `Sec-Fetch-Site` says the request comes from this listener's own pages (`same-origin`) or from no
    /// page at all (`none`: typed, bookmarked). `same-site` is refused too: a site ignores the port, so any other
    /// service on `localhost` is the same site.
    static func isSameOrigin(fetchSite: UnsafeRawBufferPointer) -> Bool {
        let value = fetchSite.map { $0 | 0x20 }
        return value == Array("same-origin".utf8) || value == Array("none".utf8)
    }

    /// Whether `Origin` is this listener's own: `http://` and the request's `Host` (case ignored, and the default
    /// port 80 either way). `null` (a sandboxed page, a redirect across sites) is not.
    static func isOwn(origin: UnsafeRawBufferPointer, host: UnsafeRawBufferPointer) -> Bool {
        func authority(_ bytes: some Collection<UInt8>) -> String {
            let text = String(decoding: bytes, as: UTF8.self).lowercased()
            return text.hasSuffix(":80") ? String(text.dropLast(3)) : text
        }
        let scheme = Array("http://".utf8)
        guard origin.count > scheme.count, origin.prefix(scheme.count).map({ $0 | 0x20 }) == scheme else {
            return false
        }
        return authority(origin.dropFirst(scheme.count)) == authority(host)
    }

    /// Whether a normalised host name is one of this listener's.
    func answers(_ name: String) -> Bool {
        name == "localhost" || IPAddress(name) != nil || hostNames.contains(name)
    }
}
