public import AASACurl

/// The ACME transport over libcurl (``HTTPClient``): HTTPS to the CA, trusting the system's anchors or
/// `--acme-ca-file`.
public struct CurlACMETransport: ACMETransport {
    /// The client the requests go through.
    public var client: HTTPClient

    /// A transport through `client`.
    public init(client: HTTPClient) {
        self.client = client
    }

    /// Sends `request`; an unanswered request becomes a network failure naming the URL and the likely fix.
    public func send(_ request: ACMERequest) throws(ACMEFailure) -> ACMEResponse {
        var headers: [(name: String, value: String)] = []
        if request.method == .post { headers.append(("Content-Type", "application/jose+json")) }
        if let accept = request.accept { headers.append(("Accept", accept)) }
        let method: HTTPClientRequest.Method =
            switch request.method {
            case .get: .get
            case .head: .head
            case .post: .post
            }
        do {
            let response = try client.send(
                HTTPClientRequest(method, url: request.url, headers: headers, body: request.body))
            return ACMEResponse(status: response.status, headers: response.headers, body: response.body)
        } catch {
            let hint =
                switch error.code {
                case .resolve: "check the directory URL (--acme-directory) and this machine's DNS"
                case .connect, .timeout: "check that the ACME server is up and reachable from this machine"
                case .tls:
                    "the ACME server's certificate did not verify: pass its CA with --acme-ca-file, or fix the URL"
                case .tooLarge, .request, .other: "check the directory URL (--acme-directory)"
                }
            throw ACMEFailure(
                .network, "could not reach the ACME server: \(error.reason)", url: request.url, hint: hint)
        }
    }
}
