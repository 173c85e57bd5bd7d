internal import CCurl
internal import CShims.Curl

/// A blocking HTTPS client on libcurl: one request per call, on the calling thread, every response read into memory
/// with a cap. Certificates are verified (against the system's trust store, or ``trustAnchors`` alone when given),
/// redirects are not followed (the caller sees them), and only `https` and `http` URLs are accepted.
public struct HTTPClient: Sendable {
    /// A PEM file of the only certificates to trust (a private CA, a test server's), or `nil` for the system's.
    public var trustAnchors: String?
    /// The longest a request may take, connection and TLS included.
    public var timeout: Duration = .seconds(30)
    /// The largest response body accepted; a larger one is an error, not a truncated body.
    public var maximumResponseBytes = 4 << 20
    /// The `User-Agent` sent.
    public var userAgent = "aasa-server"
    /// Addresses to use instead of DNS for some names (curl's `--resolve`), e.g. a test server on loopback.
    public var resolve: [(host: String, port: UInt16, address: String)] = []

    /// Creates a client.
    public init(trustAnchors: String? = nil) {
        self.trustAnchors = trustAnchors
    }

    /// Sends `request` and returns the response, whatever its status.
    ///
    /// - Throws: ``HTTPClientError`` when no response arrived (DNS, connection, TLS, timeout, a body over
    ///   ``maximumResponseBytes``).
    public func send(_ request: HTTPClientRequest) throws(HTTPClientError) -> HTTPClientResponse {
        _ = curlInitialized
        guard let handle = curl_easy_init() else {
            throw HTTPClientError(.other, url: request.url, reason: "libcurl could not create a handle")
        }
        defer { curl_easy_cleanup(handle) }
        let collector = ResponseCollector(limit: maximumResponseBytes)
        var headerList: UnsafeMutablePointer<curl_slist>?
        var resolveList: UnsafeMutablePointer<curl_slist>?
        defer {
            curl_slist_free_all(headerList)
            curl_slist_free_all(resolveList)
        }
        for (name, value) in request.headers { headerList = curl_slist_append(headerList, "\(name): \(value)") }
        for entry in resolve {
            resolveList = curl_slist_append(resolveList, "\(entry.host):\(entry.port):\(entry.address)")
        }
        var errorBuffer = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        let result: CURLcode = withExtendedLifetime(collector) {
            errorBuffer.withUnsafeMutableBufferPointer { errors in
                configure(handle, request, headers: headerList, collector: collector, errors: errors.baseAddress!)
                if resolveList != nil { cshims_curl_setopt_pointer(handle, CURLOPT_RESOLVE, resolveList) }
                return curl_easy_perform(handle)
            }
        }
        guard result == CURLE_OK else {
            let detail = String(decoding: errorBuffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let reason = detail.isEmpty ? String(cString: curl_easy_strerror(result)) : detail
            throw HTTPClientError(
                collector.exceeded ? .tooLarge : Self.code(of: result), url: request.url,
                reason: collector.exceeded ? "the response is larger than \(maximumResponseBytes) bytes" : reason)
        }
        var status = 0
        cshims_curl_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return HTTPClientResponse(status: status, headers: collector.headers, body: collector.body)
    }

    /// Sets every option of one transfer; strings are copied by libcurl (`CURLOPT_URL`, `CAINFO`, `USERAGENT`,
    /// `COPYPOSTFIELDS`), `headers` and `errors` live until the transfer ends.
    private func configure(
        _ handle: UnsafeMutableRawPointer, _ request: HTTPClientRequest, headers: UnsafeMutablePointer<curl_slist>?,
        collector: ResponseCollector, errors: UnsafeMutablePointer<CChar>
    ) {
        cshims_curl_setopt_pointer(handle, CURLOPT_URL, request.url)
        cshims_curl_setopt_pointer(handle, CURLOPT_PROTOCOLS_STR, "https,http")
        cshims_curl_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        cshims_curl_setopt_long(handle, CURLOPT_FOLLOWLOCATION, 0)
        cshims_curl_setopt_long(handle, CURLOPT_TIMEOUT_MS, Self.milliseconds(timeout))
        cshims_curl_setopt_pointer(handle, CURLOPT_USERAGENT, userAgent)
        cshims_curl_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errors)
        if let trustAnchors {
            cshims_curl_setopt_pointer(handle, CURLOPT_CAINFO, trustAnchors)
            cshims_curl_setopt_pointer(handle, CURLOPT_CAPATH, nil)
        }
        switch request.method {
        case .get: break
        case .head: cshims_curl_setopt_long(handle, CURLOPT_NOBODY, 1)
        case .post:
            cshims_curl_setopt_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count))
            if request.body.isEmpty {
                cshims_curl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, "")
            } else {
                _ = request.body.withUnsafeBytes {
                    cshims_curl_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, $0.baseAddress)
                }
            }
        }
        cshims_curl_setopt_pointer(handle, CURLOPT_HTTPHEADER, headers)
        let context = Unmanaged.passUnretained(collector).toOpaque()
        cshims_curl_setopt_write_callback(handle, CURLOPT_WRITEFUNCTION, bodyCallback)
        cshims_curl_setopt_pointer(handle, CURLOPT_WRITEDATA, context)
        cshims_curl_setopt_write_callback(handle, CURLOPT_HEADERFUNCTION, headerCallback)
        cshims_curl_setopt_pointer(handle, CURLOPT_HEADERDATA, context)
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds) * 1000 + Int(duration.components.attoseconds / 1_000_000_000_000_000)
    }

    /// The kind of failure a libcurl result code means.
    private static func code(of result: CURLcode) -> HTTPClientError.Code {
        switch result {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: .resolve
        case CURLE_COULDNT_CONNECT: .connect
        case CURLE_OPERATION_TIMEDOUT: .timeout
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE,
            CURLE_SSL_CERTPROBLEM:
            .tls
        case CURLE_URL_MALFORMAT, CURLE_UNSUPPORTED_PROTOCOL: .request
        default: .other
        }
    }
}

/// Initialises libcurl once per process, before the first handle (Swift runs a global's initialiser once,
/// thread-safely).
private let curlInitialized: Void = {
    _ = cshims_curl_global_init()
}()

/// What one transfer received; reached from libcurl's callbacks on the calling thread only.
private final class ResponseCollector {
    let limit: Int
    var body: [UInt8] = []
    var headers: [(name: String, value: String)] = []
    var exceeded = false

    init(limit: Int) {
        self.limit = limit
    }

    /// Takes one header line. A status line starts a new response (after a 100 Continue or a redirect), so only
    /// the final response's fields are kept.
    func header(_ line: String) {
        if line.hasPrefix("HTTP/") {
            headers = []
            return
        }
        guard let colon = line.firstIndex(of: ":") else { return }
        let name = String(line[..<colon])
        let value = line[line.index(after: colon)...].trimmingCharacters(in: " \t\r\n")
        headers.append((name, value))
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in set: String) -> String {
        String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}

/// libcurl's write callback: appends to the collector, or stops the transfer (returning 0) past the limit.
private let bodyCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
    data, size, count, context in
    guard let data, let context else { return 0 }
    let collector = Unmanaged<ResponseCollector>.fromOpaque(context).takeUnretainedValue()
    let length = size * count
    guard collector.body.count + length <= collector.limit else {
        collector.exceeded = true
        return 0
    }
    data.withMemoryRebound(to: UInt8.self, capacity: length) {
        collector.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: length))
    }
    return length
}

/// libcurl's header callback: one header line per call.
private let headerCallback: @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int =
    { data, size, count, context in
        guard let data, let context else { return 0 }
        let collector = Unmanaged<ResponseCollector>.fromOpaque(context).takeUnretainedValue()
        let length = size * count
        let line = data.withMemoryRebound(to: UInt8.self, capacity: length) {
            String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
        }
        collector.header(line)
        return length
    }
