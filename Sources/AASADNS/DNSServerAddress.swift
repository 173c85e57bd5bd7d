/// Where DNS messages go: a server's address and port, as an operator writes it (`HOST:PORT`, `[IPv6]:PORT`, or
/// `HOST` for port 53).
public struct DNSServerAddress: Sendable, Hashable, CustomStringConvertible {
    /// An IPv4 or IPv6 address, or a host name resolved when a message is sent.
    public var host: String
    public var port: UInt16

    public init(host: String, port: UInt16 = 53) {
        self.host = host
        self.port = port
    }

    /// Reads `HOST:PORT`, `[IPv6]:PORT`, a bare IPv6 address, or `HOST` (port 53).
    public init(parsing text: String) throws(DNSError) {
        func invalid(_ why: String) -> DNSError {
            DNSError(
                .configuration, "'\(text)' is not a DNS server address: \(why)",
                hint: "write HOST:PORT, [IPv6]:PORT or HOST (port 53), for example 127.0.0.1:53")
        }
        var host = Substring(text)
        var port: UInt16 = 53
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { throw invalid("no ']' after the IPv6 address") }
            let rest = host[host.index(after: close)...]
            host = host[host.index(after: host.startIndex)..<close]
            if !rest.isEmpty {
                guard rest.hasPrefix(":"), let number = UInt16(rest.dropFirst()), number > 0 else {
                    throw invalid("the port is not a number from 1 to 65535")
                }
                port = number
            }
        } else if host.filter({ $0 == ":" }).count == 1, let colon = host.firstIndex(of: ":") {
            guard let number = UInt16(host[host.index(after: colon)...]), number > 0 else {
                throw invalid("the port is not a number from 1 to 65535")
            }
            port = number
            host = host[..<colon]
        }
        guard !host.isEmpty, host.utf8.count <= 253,
            host.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") })
        else { throw invalid("no host") }
        self.host = String(host)
        self.port = port
    }

    /// `HOST:PORT`, with an IPv6 address in brackets.
    public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
}
