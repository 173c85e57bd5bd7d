import AASACore
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One line per request on standard output, as JSON lines or in the common log format.
///
/// Query strings are left out unless asked for: hosted pages carry campaign and personal data in them.
public final class AccessLog: Sendable {
    /// The line format.
    public enum Format: String, Sendable, CaseIterable {
        /// One JSON object per line.
        case json
        /// NCSA common log format, as nginx and Apache write it.
        case common
    }

    /// The format written.
    public let format: Format
    /// Whether query strings are logged.
    public let includeQueries: Bool
    private let descriptor: Int32
    private let lock = Mutex(())

    /// Creates a log writing to `descriptor` (standard output by default).
    public init(format: Format, includeQueries: Bool = false, descriptor: Int32 = 1) {
        self.format = format
        self.includeQueries = includeQueries
        self.descriptor = descriptor
    }

    func write(_ request: some HTTPRequest, host: String, status: Int, bytes: Int, client: TrafficRecorder.ClientClass)
    {
        // Every field a client chose goes through LogEscaping: no control character reaches the log.
        var target = request.withPath { String(decoding: $0, as: UTF8.self) }
        if includeQueries, let query = request.rawQuery { target += "?" + query }
        target = LogEscaping.escape(target)
        let userAgent =
            request.withHeader("User-Agent") { $0.map { LogEscaping.escape(.init(rebasing: $0.prefix(512))) } } ?? ""
        let remote = LogEscaping.escape(request.remoteAddress)
        let host = LogEscaping.escape(host)
        let method = LogEscaping.escape(request.methodName)
        let now = Date()
        var line: String
        switch format {
        case .json:
            line = JSONWriter().string(
                .members([
                    ("time", .string(now.formatted(.iso8601))), ("remote", .string(remote)), ("host", .string(host)),
                    ("method", .string(method)), ("path", .string(target)),
                    ("status", .number(Double(status))),
                    ("bytes", .number(Double(bytes))), ("userAgent", .string(userAgent)),
                    ("client", .string(client.rawValue)),
                ]))
        case .common:
            // Backslashes are escaped already; quotes are escaped too so a request cannot end a field early.
            func quoted(_ text: String) -> String { text.replacingOccurrences(of: "\"", with: "\\\"") }
            line =
                "\(remote.isEmpty ? "-" : remote) - - [\(Self.commonTime(now))] \"\(quoted(method)) \(quoted(target)) HTTP/1.1\" \(status) \(bytes) \"-\" \"\(quoted(userAgent))\""
        }
        line += "\n"
        let bytes = Array(line.utf8)
        lock.withLock { _ in
            bytes.withUnsafeBytes { buffer in _ = Glibc.write(descriptor, buffer.baseAddress, buffer.count) }
        }
    }

    /// `10/Oct/2000:13:55:36 +0000`.
    static func commonTime(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%d/%b/%Y:%H:%M:%S +0000", &parts)
        return String(decoding: buffer.prefix(count).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
