#if canImport(Glibc)
    import Glibc
#endif

/// A minimal HTTP/1.0 GET over a TCP socket, so a container `HEALTHCHECK` can ask the admin listener
/// with the binary itself (the runtime image carries no curl).
public enum HealthProbe {
    /// The status code answered by `http://<address>:<port><path>`, or `nil` when nothing answered within
    /// `timeoutSeconds`.
    public static func status(address: String, port: UInt16, path: String, timeoutSeconds: Int = 3) -> Int? {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var results: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(address, String(port), &hints, &results) == 0, let first = results else { return nil }
        defer { freeaddrinfo(results) }
        let fd = socket(first.pointee.ai_family, first.pointee.ai_socktype, first.pointee.ai_protocol)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        guard connect(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) == 0 else { return nil }
        let request = Array(
            "GET \(path) HTTP/1.0\r\nHost: \(address)\r\nUser-Agent: aasa-server-healthcheck\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == request.count
        else {
            return nil
        }
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count > 12 else { return nil }
        // "HTTP/1.1 200 OK"
        let line = String(decoding: buffer[..<count], as: UTF8.self)
        let fields = line.split(separator: " ", maxSplits: 2)
        guard fields.count >= 2, fields[0].hasPrefix("HTTP/") else { return nil }
        return Int(fields[1])
    }
}
