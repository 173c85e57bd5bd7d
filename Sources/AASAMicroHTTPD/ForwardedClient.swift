internal import AASACore
internal import CMicroHTTPD
internal import CShims.MicroHTTPD

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The client behind a trusted proxy: read from the request's forwarding headers when the connection's peer is
/// one of ``ListenerConfiguration/trustedProxies`` (``ForwardedHeaders`` decides which address counts).
enum ForwardedClient {
    /// The forwarded client's address, or `nil` when the peer is not trusted or its headers name no client.
    static func address(of connection: OpaquePointer, trusting proxies: [IPNetwork]) -> IPAddress? {
        guard let info = cshims_mhd_get_connection_info(connection, .CONNECTION_INFO_CLIENT_ADDRESS),
            let address = info.pointee.client_addr, let peer = SocketAddress.ipAddress(address),
            proxies.contains(where: { $0.contains(peer) })
        else { return nil }
        let headers = ForwardingHeaderValues.read(connection)
        return ForwardedHeaders.client(
            xForwardedFor: headers.xForwardedFor, forwarded: headers.forwarded, trusted: proxies)
    }
}
