internal import AASACore
internal import CMicroHTTPD
internal import CShims

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// IP socket addresses for binding and for reporting client addresses.
enum SocketAddress {
    /// A parsed bind address; `storage` holds a `sockaddr_in` or `sockaddr_in6` with the port set.
    struct Bind {
        var storage = sockaddr_storage()
        var isIPv6 = false
    }

    /// Parses an IPv4 or IPv6 literal (brackets allowed) into a bind address for `port`.
    static func bind(_ text: String, port: UInt16) -> Bind? {
        var literal = Substring(text)
        if literal.hasPrefix("["), literal.hasSuffix("]") { literal = literal.dropFirst().dropLast() }
        var result = Bind()
        var v4 = in_addr()
        if inet_pton(AF_INET, String(literal), &v4) == 1 {
            withUnsafeMutableBytes(of: &result.storage) { raw in
                let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self)
                address.pointee.sin_family = sa_family_t(AF_INET)
                address.pointee.sin_port = port.bigEndian
                address.pointee.sin_addr = v4
            }
            return result
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, String(literal), &v6) == 1 {
            withUnsafeMutableBytes(of: &result.storage) { raw in
                let address = raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self)
                address.pointee.sin6_family = sa_family_t(AF_INET6)
                address.pointee.sin6_port = port.bigEndian
                address.pointee.sin6_addr = v6
            }
            result.isIPv6 = true
            return result
        }
        return nil
    }

    /// `bind` with its port replaced.
    static func withPort(_ bind: Bind, _ port: UInt16) -> Bind {
        var copy = bind
        withUnsafeMutableBytes(of: &copy.storage) { raw in
            if bind.isIPv6 {
                raw.baseAddress!.assumingMemoryBound(to: sockaddr_in6.self).pointee.sin6_port = port.bigEndian
            } else {
                raw.baseAddress!.assumingMemoryBound(to: sockaddr_in.self).pointee.sin_port = port.bigEndian
            }
        }
        return copy
    }

    /// The wildcard address (`0.0.0.0`, or `::` when `ipv6`) with `port`.
    static func any(port: UInt16, ipv6: Bool) -> Bind {
        bind(ipv6 ? "::" : "0.0.0.0", port: port)!
    }

    /// `SOCK_STREAM` as `socket(2)` takes it (qualified: with whole-module optimisation the bare name is
    /// not found on Linux, where the C headers of libmicrohttpd are imported beside Glibc).
    #if canImport(Glibc)
        static let streamType = Int32(Glibc.SOCK_STREAM.rawValue)
    #else
        static let streamType = SOCK_STREAM
    #endif

    /// Whether this host can open IPv6 sockets (decides dual-stack binding when no address is given).
    static let ipv6Available: Bool = {
        let fd = socket(AF_INET6, streamType, 0)
        guard fd >= 0 else { return false }
        close(fd)
        return true
    }()

    /// The address as text (`192.0.2.1`, `2001:db8::1`); IPv4-mapped IPv6 from dual-stack sockets as plain IPv4.
    static func text(_ address: UnsafePointer<sockaddr>) -> String {
        var buffer = (
            Int64(0), Int64(0), Int64(0), Int64(0), Int64(0), Int64(0), Int64(0), Int64(0)
        )  // 64 bytes on the stack, > INET6_ADDRSTRLEN
        return withUnsafeMutableBytes(of: &buffer) { raw -> String in
            let chars = raw.baseAddress!.assumingMemoryBound(to: CChar.self)
            let ok: Bool
            switch Int32(address.pointee.sa_family) {
            case AF_INET:
                // Formatted by hand: inet_ntop goes through sprintf, and this runs for every fetch logged.
                return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                    withUnsafeBytes(of: v4.pointee.sin_addr) { Self.dottedQuad($0) }
                }
            case AF_INET6:
                var mappedText: String?
                ok = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                    withUnsafePointer(to: v6.pointee.sin6_addr) { pointer in
                        let bytes = UnsafeRawPointer(pointer).assumingMemoryBound(to: UInt8.self)
                        let mapped =
                            (0..<10).allSatisfy { bytes[$0] == 0 } && bytes[10] == 0xff && bytes[11] == 0xff
                        if mapped {  // an IPv4 client of a dual-stack listener
                            mappedText = Self.dottedQuad(UnsafeRawBufferPointer(start: bytes + 12, count: 4))
                            return true
                        }
                        return inet_ntop(AF_INET6, pointer, chars, 64) != nil
                    }
                }
                if let mappedText { return mappedText }
            default:
                ok = false
            }
            return ok ? String(cString: chars) : ""
        }
    }

    /// The address as an ``IPAddress`` (IPv4-mapped IPv6 as IPv4), or `nil` for another family.
    static func ipAddress(_ address: UnsafePointer<sockaddr>) -> IPAddress? {
        switch Int32(address.pointee.sa_family) {
        case AF_INET:
            return address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { v4 in
                withUnsafeBytes(of: v4.pointee.sin_addr) { IPAddress(bytes: Array($0)) }
            }
        case AF_INET6:
            return address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { v6 in
                withUnsafeBytes(of: v6.pointee.sin6_addr) { IPAddress(bytes: Array($0)) }
            }
        default:
            return nil
        }
    }

    /// `a.b.c.d` for the four bytes of an IPv4 address.
    static func dottedQuad(_ bytes: UnsafeRawBufferPointer) -> String {
        String(unsafeUninitializedCapacity: 15) { out in
            var count = 0
            for index in 0..<4 {
                if index > 0 {
                    out[count] = UInt8(ascii: ".")
                    count += 1
                }
                let value = bytes[index]
                if value >= 100 {
                    out[count] = 48 + value / 100
                    count += 1
                }
                if value >= 10 {
                    out[count] = 48 + value / 10 % 10
                    count += 1
                }
                out[count] = 48 + value % 10
                count += 1
            }
            return count
        }
    }
}
