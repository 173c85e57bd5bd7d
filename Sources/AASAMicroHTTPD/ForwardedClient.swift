internal import AASACore
internal import CMicroHTTPD
internal import CShims.MicroHTTPD
import Synchronization

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

/// Every value of `X-Forwarded-For` and of `Forwarded`, in the order received.
///
/// libmicrohttpd's lookup returns only the first header of a name, but a proxy that adds its own header line
/// (rather than appending to the client's) puts the one to believe last; so all are collected.
struct ForwardingHeaderValues {
    var xForwardedFor: [String] = []
    var forwarded: [String] = []

    /// Collects them from `connection`'s request headers.
    static func read(_ connection: OpaquePointer) -> ForwardingHeaderValues {
        var values = ForwardingHeaderValues()
        withUnsafeMutablePointer(to: &values) { pointer in
            _ = MHD_get_connection_values_n(connection, .HEADER_KIND, collect, pointer)
        }
        return values
    }

    /// libmicrohttpd's iterator: capture-free, the collection arrives as `cls` (valid for the call above).
    private static let collect: MHD_KeyValueIteratorN = { cls, _, key, keySize, value, valueSize in
        guard let cls, let key, let value else { return .YES }
        let values = cls.assumingMemoryBound(to: ForwardingHeaderValues.self)
        let name = UnsafeRawBufferPointer(start: key, count: keySize)
        let text = { String(decoding: UnsafeRawBufferPointer(start: value, count: valueSize), as: UTF8.self) }
        if equalsIgnoringCase(name, "x-forwarded-for") {
            values.pointee.xForwardedFor.append(text())
        } else if equalsIgnoringCase(name, "forwarded") {
            values.pointee.forwarded.append(text())
        }
        // Enough for any real chain; a client cannot make us collect without bound.
        return values.pointee.xForwardedFor.count + values.pointee.forwarded.count < 64 ? .YES : .NO
    }

    private static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ name: StaticString) -> Bool {
        name.withUTF8Buffer { name in
            bytes.count == name.count && zip(bytes, name).allSatisfy { $0 | 0x20 == $1 | 0x20 }
        }
    }
}

/// How many requests from each forwarded client address are in progress on one listener, against a limit.
///
/// libmicrohttpd's per-address connection limit counts TCP peers, and behind a proxy every client shares the
/// proxy's address. For requests from a trusted proxy this counts per forwarded address instead: a request is
/// in progress from the moment it is routed until its response has been handed to the socket (or the
/// connection ends), and a request beyond the limit gets 429 at once.
final class ForwardedClientLimiter: Sendable {
    /// Most requests in progress per forwarded address.
    let limit: Int
    private let counts = Mutex<[IPAddress: Int]>([:])

    init(limit: Int) {
        self.limit = limit
    }

    /// Counts a request from `client`; `false` (and nothing counted) when it already has `limit` in progress.
    func admit(_ client: IPAddress) -> Bool {
        counts.withLock { counts in
            let current = counts[client, default: 0]
            guard current < limit else { return false }
            counts[client] = current + 1
            return true
        }
    }

    /// The request from `client` that ``admit(_:)`` counted has finished.
    func release(_ client: IPAddress) {
        counts.withLock { counts in
            let remaining = counts[client, default: 1] - 1
            counts[client] = remaining > 0 ? remaining : nil
        }
    }
}
