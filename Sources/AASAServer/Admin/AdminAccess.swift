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
/// **Token** (`--admin-token-file`): every route of ``AdminRoute/table`` then needs `Authorization: Bearer <token>`
/// (401 with `WWW-Authenticate: Bearer` otherwise) unless it is declared ``AdminRoute/Access/open``: `/healthz`
/// and `/readyz` for probes, and `/`, the dashboard, which holds no data: its script asks for the token and sends
/// it with each request. A path not in the table is 404 for everyone. The comparison takes the same time whatever
/// the presented token.
public struct AdminAccess: Sendable {
    /// Host names answered besides `localhost` and IP literals, normalised like a `Host` header.
    public var hostNames: Set<String>
    /// The bearer token required for the protected routes, or `nil` for none.
    public var token: [UInt8]?

    /// Creates the access rules; `hostNames` are normalised (port, case, trailing dot ignored).
    public init(hostNames: [String] = [], token: [UInt8]? = nil) {
        self.hostNames = Set(hostNames.compactMap(HostName.normalized))
        self.token = token
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
        guard let host, let name = HostName.normalized(host), answers(name) else { return .misdirected }
        let route = AdminRoute.byPath[path]
        if route?.answersCrossSite != true {
            if let fetchSite, !Self.isSameOrigin(fetchSite: fetchSite) { return .crossSite }
            if let origin, !Self.isOwn(origin: origin, host: host) { return .crossSite }
        }
        guard let token, let route, route.access != .open else { return .allowed }
        return Self.presents(token, in: authorization) ? .allowed : .unauthorized
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

    /// Whether `authorization` is `Bearer <token>` (scheme case-insensitive, RFC 9110 §11.1), comparing the
    /// SHA-256 of what was presented with the token's, every byte, so the time taken says nothing about how
    /// much of the token was right (nor about its length).
    static func presents(_ token: [UInt8], in authorization: UnsafeRawBufferPointer?) -> Bool {
        guard let authorization, authorization.count > 7,
            authorization.prefix(7).map({ $0 | 0x20 }) == Array("bearer ".utf8)
        else { return false }
        let presented = Array(authorization.dropFirst(7).drop { $0 == UInt8(ascii: " ") })
        let expected = SHA256.digest(token)
        let actual = SHA256.digest(presented)
        var difference: UInt8 = 0
        for index in expected.indices { difference |= expected[index] ^ actual[index] }
        return difference == 0
    }

    /// Why a token file was refused.
    public struct TokenFileError: Error, CustomStringConvertible, Sendable {
        /// The message: the file, what is wrong and how to fix it.
        public var description: String
    }

    /// Reads the token from `path`: its content without the trailing newline (or CR LF).
    ///
    /// - Throws: ``TokenFileError`` when the file cannot be read, is empty, is larger than 4 KiB, or other
    ///   users can read it (the rule of ``PrivateKeyPermissions``: a group the server runs with may).
    public static func readToken(path: String) throws(TokenFileError) -> [UInt8] {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw TokenFileError(
                description: "\(path): error: cannot read the admin token file: \(String(cString: strerror(errno)))")
        }
        let mode = UInt32(info.st_mode) & 0o7777
        if let exposure = PrivateKeyPermissions.exposure(
            mode: mode, group: UInt32(info.st_gid), processGroups: PrivateKeyPermissions.processGroups())
        {
            throw TokenFileError(
                description: "\(path): error: the admin token file has mode \(String(mode, radix: 8)): \(exposure), "
                    + "so other users on this machine can read the token; fix: chmod 600 \(path)")
        }
        guard info.st_size <= 4096, let data = FileManager.default.contents(atPath: path) else {
            throw TokenFileError(
                description: "\(path): error: the admin token file is not a readable file of at most 4096 bytes")
        }
        var token = [UInt8](data)
        if token.last == UInt8(ascii: "\n") { token.removeLast() }
        if token.last == UInt8(ascii: "\r") { token.removeLast() }
        guard !token.isEmpty else {
            throw TokenFileError(
                description: "\(path): error: the admin token file is empty; fix: write a token into it, e.g. "
                    + "openssl rand -hex 32 > \(path) && chmod 600 \(path)")
        }
        guard token.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw TokenFileError(
                description: "\(path): error: the admin token must be printable ASCII without spaces (it is sent in "
                    + "an Authorization header); fix: openssl rand -hex 32 > \(path)")
        }
        return token
    }
}
