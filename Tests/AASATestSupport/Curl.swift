import Foundation

/// One HTTP exchange made with the real curl binary.
public struct CurlResponse: Sendable {
    /// Status code (0 when the request failed before a response, see `error`).
    public var status: Int
    /// Response headers, names lower-cased; repeated names keep the last value.
    public var headers: [String: String]
    /// Every header line as received.
    public var rawHeaders: [String]
    /// Body bytes.
    public var body: [UInt8]
    /// curl's error text when it failed.
    public var error: String
    /// The body as text.
    public var text: String { String(decoding: body, as: UTF8.self) }
}

/// Real HTTP(S) requests through curl: TLS verification against a CA file, SNI through `--resolve`.
public enum Curl {
    /// Requests `url`. For HTTPS, `resolve` maps the URL's host to 127.0.0.1 so SNI and Host carry the name. The
    /// request may take `maxTime` seconds of a fast machine (scaled by ``TestTime``).
    public static func request(
        _ url: String, method: String = "GET", headers: [String] = [], caFile: String? = nil,
        resolve: (host: String, port: UInt16)? = nil, extra: [String] = [], maxTime: Double = 10
    ) throws -> CurlResponse {
        let headerFile = NSTemporaryDirectory() + "curl-headers-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: headerFile) }
        let seconds = String(Int(TestTime.seconds(maxTime).rounded(.up)))
        var arguments = ["-sS", "--max-time", seconds, "-D", headerFile, "-o", "-", "--proto", "=http,https"]
        if method == "HEAD" { arguments.append("-I") } else if method != "GET" { arguments += ["-X", method] }
        for header in headers { arguments += ["-H", header] }
        if let caFile { arguments += ["--cacert", caFile] }
        if let resolve { arguments += ["--resolve", "\(resolve.host):\(resolve.port):127.0.0.1"] }
        arguments += extra
        arguments.append(url)
        let output = try Command.run("curl", arguments, timeout: maxTime + 10)
        let headerText = (try? String(contentsOfFile: headerFile, encoding: .utf8)) ?? ""
        let lines = headerText.split(separator: "\r\n", omittingEmptySubsequences: true).map(String.init)
        var status = 0
        var headers: [String: String] = [:]
        for line in lines {
            if line.hasPrefix("HTTP/") {
                status = Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
            } else if let colon = line.firstIndex(of: ":") {
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
                    in: .whitespaces)
            }
        }
        return CurlResponse(
            status: status, headers: headers, rawHeaders: lines, body: method == "HEAD" ? [] : output.stdoutBytes,
            error: output.status == 0 ? "" : output.stderr)
    }
}
