internal import AASACore
internal import CGnuTLS
internal import CMicroHTTPD
internal import CShims.MicroHTTPD

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// ``HTTPRequest`` over a libmicrohttpd connection, valid only during one access-handler call.
///
/// Nothing is copied up front: the path and headers are borrowed from libmicrohttpd's connection
/// memory, so routing a request to a prepared response allocates nothing on the Swift side.
struct MHDRequest: HTTPRequest {
    /// The connection being served.
    let connection: OpaquePointer
    /// The request path as received (libmicrohttpd cut it at `?`; our unescape callback leaves it encoded).
    let url: UnsafePointer<CChar>
    /// The request method.
    let method: RequestMethod
    /// The method token as sent.
    let methodText: UnsafePointer<CChar>
    /// The raw query captured before libmicrohttpd parsed it, or `nil` when there was no `?`.
    let query: UnsafePointer<CChar>?
    /// Whether the listener serves TLS (only then is there an SNI to ask for).
    let isTLS: Bool
    /// The client a trusted proxy named (``ForwardedClient``), reported instead of the peer's address.
    var forwardedClient: IPAddress? = nil
    /// The body read for this request (only a route that accepts one gets any), else empty.
    var body: [UInt8] = []

    /// Classifies the method string from libmicrohttpd.
    static func method(_ text: UnsafePointer<CChar>) -> RequestMethod {
        if strcmp(text, "GET") == 0 { return .get }
        if strcmp(text, "HEAD") == 0 { return .head }
        if strcmp(text, "POST") == 0 { return .post }
        if strcmp(text, "PUT") == 0 { return .put }
        if strcmp(text, "DELETE") == 0 { return .delete }
        return .other
    }

    /// The method token as sent, for logs.
    var methodName: String { String(cString: methodText) }

    func withPath<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        body(UnsafeRawBufferPointer(start: url, count: strlen(url)))
    }

    func withHeader<R>(_ name: StaticString, _ body: (UnsafeRawBufferPointer?) -> R) -> R {
        var value: UnsafePointer<CChar>? = nil
        var size = 0
        // libmicrohttpd compares header names case-insensitively; the _n variant needs no NUL terminator.
        let found = name.withUTF8Buffer { key in
            key.withMemoryRebound(to: CChar.self) { key in
                MHD_lookup_connection_value_n(connection, .HEADER_KIND, key.baseAddress, key.count, &value, &size)
            }
        }
        guard found == .YES, let value else { return body(nil) }
        return body(UnsafeRawBufferPointer(start: value, count: size))
    }

    var rawQuery: String? {
        query.map { String(cString: $0) }
    }

    /// Normalised like a Host header (lower case, no trailing dot), and read from GnuTLS once per connection.
    var tlsServerName: String? {
        guard isTLS,
            let info = cshims_mhd_get_connection_info(connection, .CONNECTION_INFO_GNUTLS_SESSION),
            let session = info.pointee.tls_session
        else { return nil }
        guard let state = ConnectionState.of(connection) else {
            return ServerName.read(from: OpaquePointer(session)).flatMap(HostName.serverName)
        }
        return state.serverName(of: OpaquePointer(session))
    }

    var remoteAddress: String {
        if let forwardedClient { return forwardedClient.description }
        guard let info = cshims_mhd_get_connection_info(connection, .CONNECTION_INFO_CLIENT_ADDRESS),
            let address = info.pointee.client_addr
        else { return "" }
        return SocketAddress.text(address)
    }
}

/// Reads the SNI host name of a GnuTLS session.
enum ServerName {
    /// The DNS name the client sent in SNI, or `nil` when it sent none (or something that is not a DNS name).
    static func read(from session: gnutls_session_t) -> String? {
        // RFC 6066 host names are at most 255 bytes; GnuTLS adds a NUL.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { buffer -> String? in
            var length = buffer.count
            var type: UInt32 = 0
            guard gnutls_server_name_get(session, buffer.baseAddress, &length, &type, 0) == 0,
                type == GNUTLS_NAME_DNS.rawValue, length > 0
            else { return nil }
            return String(decoding: UnsafeBufferPointer(rebasing: buffer[0..<min(length, buffer.count)]), as: UTF8.self)
        }
    }
}
