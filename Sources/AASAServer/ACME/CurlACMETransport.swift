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
    public func send(_ request: HTTPClientRequest) throws(ACMEFailure) -> HTTPClientResponse {
        do {
            return try client.send(request)
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
