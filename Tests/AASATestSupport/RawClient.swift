import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A plain TCP client for tests that need control over timing: trickled bytes, half-sent requests.
public final class RawClient {
    public let fd: Int32

    /// Connects to 127.0.0.1:`port`.
    public init(port: UInt16) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        // deinit closes the socket, also when this throws: closing it here too could close a descriptor another
        // thread has been given the same number since (a listener's connection, in the stop tests).
        guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Sends `text`; false when the server has closed the connection.
    @discardableResult
    public func send(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        return bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count
    }

    /// Whether the server has closed the connection (end of stream or reset), waiting up to `timeout` seconds.
    public func isClosed(within timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(max(1, deadline.timeIntervalSinceNow * 1000)))
            if ready <= 0 { continue }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { return true }
        }
        return false
    }

    /// Everything the server sends until it closes or `timeout` seconds pass.
    public func readAll(timeout: Double = 5) -> String {
        String(decoding: readAllBytes(timeout: timeout), as: UTF8.self)
    }

    /// Every byte the server sends until it closes or `timeout` seconds pass.
    public func readAllBytes(timeout: Double = 5) -> [UInt8] { read(timeout: timeout, untilIdle: false) }

    /// Reads one response whose head ends the read (for keep-alive exchanges with small bodies).
    public func readResponse(timeout: Double = 5) -> String {
        String(decoding: read(timeout: timeout, untilIdle: true), as: UTF8.self)
    }

    /// Reads until the server closes, `timeout` passes, or (`untilIdle`) 100 ms pass without data once some came.
    private func read(timeout: Double, untilIdle: Bool) -> [UInt8] {
        let deadline = Date().addingTimeInterval(timeout)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let wait = untilIdle ? 100 : Int32(max(1, deadline.timeIntervalSinceNow * 1000))
            guard poll(&poller, 1, wait) > 0 else {
                if untilIdle && !received.isEmpty { break }
                continue
            }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return received
    }
}
