import AASATestSupport
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One answer as a client saw it: status and body bytes.
struct Answer: Hashable, Sendable, CustomStringConvertible {
    var status: Int
    var body: [UInt8]

    /// The 404 every host that is not configured gets.
    static let unknownHost = Answer(status: 404, body: Array("unknown host\n".utf8))

    /// A 200 with `body`.
    static func ok(_ body: [UInt8]) -> Answer { Answer(status: 200, body: body) }

    /// The body as text.
    var text: String { String(decoding: body, as: UTF8.self) }

    var description: String { "\(status) \(String(decoding: body.prefix(120), as: UTF8.self))" }
}

/// A plain HTTP/1.1 client over a real socket, one connection per request: much lighter than starting curl,
/// so a background loop can send hundreds of requests while a test changes files.
enum HTTPProbe {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// A TCP socket connected to 127.0.0.1:`port`; the caller closes it.
    static func connect(port: UInt16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw Failure(description: "connect: \(reason)")
        }
        return fd
    }

    /// `GET path` on 127.0.0.1:`port` with `Host: host`; the whole response is read and its length checked.
    static func get(port: UInt16, host: String, path: String) throws -> Answer {
        let fd = try connect(port: port)
        defer { close(fd) }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = Array("GET \(path) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n".utf8)
        guard request.withUnsafeBytes({ send(fd, $0.baseAddress, $0.count, 0) }) == request.count else {
            throw Failure(description: "send: \(String(cString: strerror(errno)))")
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16384)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { throw Failure(description: "recv: \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            response += buffer[0..<count]
        }
        let separator = Array("\r\n\r\n".utf8)
        guard let end = response.indices.first(where: { response[$0...].starts(with: separator) }) else {
            throw Failure(description: "incomplete response: \(String(decoding: response, as: UTF8.self))")
        }
        let head = String(decoding: response[..<end], as: UTF8.self).split(separator: "\r\n")
        let body = Array(response[(end + 4)...])
        guard let statusLine = head.first, statusLine.hasPrefix("HTTP/1.1 "),
            let status = Int(statusLine.dropFirst(9).prefix(3))
        else { throw Failure(description: "bad status line: \(head.first ?? "")") }
        let length = head.dropFirst().first { $0.lowercased().hasPrefix("content-length:") }
            .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }
        guard length == body.count else {
            throw Failure(
                description: "body of \(body.count) bytes, Content-Length \(length.map(String.init) ?? "none")")
        }
        return Answer(status: status, body: body)
    }
}

/// Requests sent in a loop on a background thread while a test changes files, each answer checked against
/// what may be served at that moment: the state before the change or the state after it, never anything else.
final class Traffic: Sendable {
    private struct State {
        var phase = 0
        /// Phase → the answers allowed while it lasts.
        var allowed: [Int: Set<Answer>] = [:]
        var requests = 0
        var failures: [String] = []
        var running = true
    }

    let name: String
    /// Fewest requests the loop must have sent by ``stop()`` for the test to mean anything.
    let minimumRequests: Int
    private let state: Mutex<State>
    private let finished = DispatchSemaphore(value: 0)

    /// Starts sending requests with `fetch`, accepting only `allowed` until ``expect(_:)`` says otherwise.
    init(
        _ name: String, allowed: Set<Answer>, minimumRequests: Int = 20,
        fetch: @escaping @Sendable () throws -> Answer
    ) {
        self.name = name
        self.minimumRequests = minimumRequests
        state = Mutex(State(allowed: [0: allowed]))
        let thread = Thread { [self] in
            while state.withLock({ $0.running }) {
                let before = state.withLock { $0.phase }
                let answer: Result<Answer, any Error> = Result { try fetch() }
                state.withLock { state in
                    state.requests += 1
                    // A request that overlapped a phase change may see anything allowed in the phases it spanned.
                    let allowed = (before...state.phase).reduce(into: Set<Answer>()) {
                        $0.formUnion(state.allowed[$1] ?? [])
                    }
                    switch answer {
                    case .success(let answer) where allowed.contains(answer): break
                    case .success(let answer):
                        state.failures.append("\(name) request \(state.requests): unexpected \(answer)")
                    case .failure(let error):
                        state.failures.append("\(name) request \(state.requests): failed: \(error)")
                    }
                }
                usleep(2000)  // leave the shared CPUs to the server and the reload
            }
            finished.signal()
        }
        thread.start()
    }

    /// From now on, accept only `allowed` (typically the answer before a change and the answer after it).
    func expect(_ allowed: Set<Answer>) {
        state.withLock { state in
            state.phase += 1
            state.allowed[state.phase] = allowed
        }
    }

    /// Stops the loop and returns how many requests it sent and what went wrong.
    func stop() -> (requests: Int, failures: [String]) {
        state.withLock { $0.running = false }
        finished.wait()
        return state.withLock { ($0.requests, $0.failures) }
    }
}

/// Polls `condition` every 20 ms until it holds or `seconds` (of a fast machine, scaled by ``TestTime``) have passed
/// since `start`; returns how long it took.
func waitUntil(
    _ seconds: Double, since start: ContinuousClock.Instant = .now, _ condition: () throws -> Bool
) rethrows -> Duration? {
    let deadline = start + .milliseconds(Int(TestTime.seconds(seconds) * 1000))
    while true {
        if try condition() { return start.duration(to: .now) }
        if ContinuousClock.now >= deadline { return nil }
        usleep(20_000)
    }
}
