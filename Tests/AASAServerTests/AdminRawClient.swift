import Foundation

/// A plain TCP client that sends a request head and reads what comes back, for heads curl will not send alone.
final class AdminRawClient {
    let fd: Int32

    init(port: UInt16) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard fd >= 0, connected == 0 else { throw POSIXError(.ECONNREFUSED) }
    }

    deinit { if fd >= 0 { close(fd) } }

    func send(_ text: String) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Everything until the server closes, or 5 s.
    func readAll() -> String { read(untilIdle: false) }

    /// What arrives until 100 ms pass without more (a response head such as `100 Continue`), or 5 s.
    func readHead() -> String { read(untilIdle: true) }

    private func read(untilIdle: Bool) -> String {
        let deadline = Date().addingTimeInterval(5)
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, untilIdle ? 100 : 1000) > 0 else {
                if untilIdle && !received.isEmpty { break }
                continue
            }
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }
}
