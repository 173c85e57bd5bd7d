import AASACore
import AASACurl
public import AASAOpenSSL
public import Foundation
import Synchronization

/// An ACME client (RFC 8555) for one account at one CA: the directory, nonces, the account, and the order of a
/// certificate through http-01 challenges. Synchronous: every call blocks its thread until the CA answered, so
/// callers run it on threads of their own (``ACMEManager``'s workers, or `certs acme`).
///
/// Requests are JWS-signed POSTs (ES256, ``JSONWebSignature``); a `badNonce` problem is retried at once with the
/// nonce that came with it (§6.5), and an account the CA no longer knows is registered again.
public final class ACMEClient: Sendable {
    /// The directory URL.
    public let directoryURL: String
    /// The account: its key, contact and registration.
    public let account: ACMEAccount
    /// The profile each new order asks for (`--acme-profile`), `nil` for the CA's default.
    public let profile: String?
    /// The binding newAccount carries (RFC 8555 §7.3.4), for a CA that requires one.
    let externalAccountBinding: ExternalAccountBinding?
    /// The options that give the binding and the profile, named by errors (the primary CA's or a fallback's).
    let options: OptionNames
    private let transport: any ACMETransport
    private let jwk: JSONWebKey
    /// Waits between polls, when given; tests give one so recorded exchanges need no real time. Without it a poll
    /// waits on ``pollStop``, which ``stopPolling()`` ends at once.
    let sleep: (@Sendable (Duration) -> Void)?
    /// Wakes a poll waiting between its requests once ``stopPolling()`` set ``pollingStopped``.
    let pollStop = NSCondition()
    let pollingStopped = Mutex(false)
    /// How long an authorization or order may stay pending or processing before the attempt fails.
    let pollTimeout: Duration
    private let state = Mutex(State())
    /// Held while the account registers, so workers ordering at once register it once.
    private let registration = NSLock()

    private struct State {
        var directory: ACMEDirectory?
        var nonces: [String] = []
    }

    /// Most attempts of one request whose nonce the CA rejects (RFC 8555 §6.5: a client should retry `badNonce`).
    static let badNonceAttempts = 16
    /// The content type of the certificate download (RFC 8555 §9.1).
    static let certificateChainType = "application/pem-certificate-chain"

    /// The command-line options an error about the binding or the profile tells the operator to fix.
    public struct OptionNames: Sendable {
        public var profile: String
        public var keyID: String
        public var keyFile: String

        public init(profile: String, keyID: String, keyFile: String) {
            self.profile = profile
            self.keyID = keyID
            self.keyFile = keyFile
        }

        /// The primary CA's: `--acme-profile`, `--acme-eab-kid`, `--acme-eab-hmac-key-file`.
        public static let primary = OptionNames(
            profile: "--acme-profile", keyID: "--acme-eab-kid", keyFile: "--acme-eab-hmac-key-file")
        /// The fallback CA's: `--acme-fallback-eab-kid`, `--acme-fallback-eab-hmac-key-file` (no profile of its own).
        public static let fallback = OptionNames(
            profile: "--acme-profile", keyID: "--acme-fallback-eab-kid",
            keyFile: "--acme-fallback-eab-hmac-key-file")
    }

    /// A client for the CA at `directoryURL`, signing with `account`'s key; each new order asks for `profile`, and
    /// newAccount carries `externalAccountBinding` when given.
    public init(
        directoryURL: String, account: ACMEAccount, transport: any ACMETransport, pollTimeout: Duration = .seconds(300),
        profile: String? = nil, externalAccountBinding: ExternalAccountBinding? = nil,
        options: OptionNames = .primary, sleep: (@Sendable (Duration) -> Void)? = nil
    ) throws(ACMEFailure) {
        self.directoryURL = directoryURL
        self.account = account
        self.profile = profile
        self.externalAccountBinding = externalAccountBinding
        self.options = options
        self.transport = transport
        self.sleep = sleep
        self.pollTimeout = pollTimeout
        do {
            jwk = try JSONWebKey(publicKeyOf: account.key)
        } catch {
            throw ACMEFailure(
                .storage, "the ACME account key is not ECDSA P-256", url: nil,
                hint: "remove the account key to let the server make a new one")
        }
    }

    /// Blocks the calling thread for `duration`, whatever ``stopPolling()`` says: a `sleep` to give the client.
    public static func sleep(_ duration: Duration) { Thread.sleep(forTimeInterval: duration.timeInterval) }

    /// The key authorization for `token`: what the http-01 answer holds (RFC 8555 §8.1).
    public func keyAuthorization(token: String) -> String { jwk.keyAuthorization(token: token) }

    // MARK: Directory and nonces

    /// The CA's directory, fetched once.
    public func directory() throws(ACMEFailure) -> ACMEDirectory {
        if let directory = state.withLock({ $0.directory }) { return directory }
        let response = try send(HTTPClientRequest(.get, url: directoryURL))
        guard response.status == 200 else {
            throw ACMEFailure(
                .protocolViolation, "the directory URL answered HTTP \(response.status), not an ACME directory",
                url: directoryURL, hint: "check the directory URL (--acme-directory)",
                problem: ACMEProblem(body: response.body, status: response.status))
        }
        let directory = try ACMEDirectory(url: directoryURL, body: response.body)
        state.withLock { $0.directory = directory }
        return directory
    }

    /// A nonce from the last responses, else a fresh one from newNonce.
    private func nonce() throws(ACMEFailure) -> String {
        if let nonce = state.withLock({ $0.nonces.popLast() }) { return nonce }
        let url = try directory().newNonce
        let response = try send(HTTPClientRequest(.head, url: url))
        guard let nonce = response.header("Replay-Nonce"), !nonce.isEmpty else {
            throw ACMEFailure(
                .protocolViolation, "newNonce answered HTTP \(response.status) without a Replay-Nonce header",
                url: url, hint: "check the directory URL (--acme-directory)")
        }
        return nonce
    }

    /// Keeps the response's `Replay-Nonce` for the next request.
    private func keepNonce(of response: HTTPClientResponse) {
        guard let nonce = response.header("Replay-Nonce"), !nonce.isEmpty else { return }
        state.withLock { state in
            state.nonces.append(nonce)
            if state.nonces.count > 16 { state.nonces.removeFirst() }
        }
    }

    // MARK: Signed requests

    /// How a request is signed: with the whole public key (newAccount), or by the account's URL.
    enum Signer {
        case jwk
        case account
    }

    /// POSTs `payload` (`nil`: POST-as-GET, an empty payload) signed for `url`, retrying `badNonce`; throws the
    /// CA's problem document as a ``ACMEFailure/Kind/problem`` failure for any status of 400 or more.
    func post(
        _ url: String, payload: JSONValue?, signer: Signer = .account, accept: String? = nil
    ) throws(ACMEFailure) -> HTTPClientResponse {
        try Self.requireHTTPS(url)
        let body = payload.map { JSONWriter(style: .compact).bytes($0) } ?? []
        for attempt in 1...Self.badNonceAttempts {
            let keyIdentifier: JSONWebSignature.KeyIdentifier
            switch signer {
            case .jwk: keyIdentifier = .jwk(jwk)
            case .account: keyIdentifier = .kid(try accountURL())
            }
            let jws: JSONWebSignature
            do {
                jws = try JSONWebSignature(
                    payload: body, key: account.key, keyIdentifier: keyIdentifier, nonce: try nonce(), url: url)
            } catch let failure as ACMEFailure {
                throw failure
            } catch {
                throw ACMEFailure(.storage, "could not sign a request: \(error)", url: url, hint: "report this")
            }
            let headers = [("Content-Type", "application/jose+json")] + (accept.map { [("Accept", $0)] } ?? [])
            let response = try send(
                HTTPClientRequest(
                    .post, url: url, headers: headers.map { (name: $0.0, value: $0.1) }, body: jws.jsonBytes))
            keepNonce(of: response)
            guard response.status >= 400 else { return response }
            let problem = ACMEProblem(body: response.body, status: response.status)
            if problem?.kind == "badNonce", attempt < Self.badNonceAttempts { continue }
            throw Self.failure(problem: problem, response: response, url: url)
        }
        preconditionFailure("the loop returns or throws")
    }

    /// Sends `request` once its URL is known to be HTTPS (``requireHTTPS(_:)``): the only way a request leaves.
    private func send(_ request: HTTPClientRequest) throws(ACMEFailure) -> HTTPClientResponse {
        try Self.requireHTTPS(request.url)
        return try transport.send(request)
    }

    /// Refuses any ACME resource URL that is not `https://` (RFC 8555 §6.1: every ACME resource is served over
    /// HTTPS), before anything is sent to it: a directory entry, a `Location`, an authorization, challenge,
    /// finalize or certificate URL, renewalInfo. Over plain HTTP, a signed account request would carry the
    /// contact e-mail, and every signed request the account's identity, in clear text.
    static func requireHTTPS(_ url: String) throws(ACMEFailure) {
        let scheme = "https://"
        guard url.count > scheme.count, url.prefix(scheme.count).lowercased() == scheme else {
            throw ACMEFailure(
                .protocolViolation, "the ACME server named a resource URL that is not https; nothing was sent to it",
                url: url,
                hint:
                    "every ACME resource must be HTTPS (RFC 8555 §6.1): check the directory URL (--acme-directory), "
                    + "or report it to the CA")
        }
    }

    /// The failure for a problem the CA answered at `url`, with the fix for the problems a user can act on.
    static func failure(problem: ACMEProblem?, response: HTTPClientResponse, url: String) -> ACMEFailure {
        guard let problem else {
            return ACMEFailure(
                .protocolViolation, "the ACME server answered HTTP \(response.status) without a problem document",
                url: url, hint: "check the directory URL (--acme-directory)", retryAfter: response.retryAfter())
        }
        let hint =
            switch problem.kind {
            case "rateLimited":
                "the CA's rate limit was reached; the server retries after the time the CA gave (see docs/operations.md, rate limits)"
            case "rejectedIdentifier", "unsupportedIdentifier":
                "the CA issues only for public DNS names it can reach; serve this domain with a certificate of your own in certs/<domain>/"
            case "malformed" where problem.detail.contains("identifier"):
                "the CA issues only for public DNS names it can reach; serve this domain with a certificate of your own in certs/<domain>/"
            case "invalidContact", "unsupportedContact":
                "pass a working contact address with --acme-email"
            case "userActionRequired", "agreementRequired":
                "accept the CA's terms of service with --acme-agree-tos"
            case "externalAccountRequired":
                "this CA requires an external account binding: pass the key ID and HMAC key it handed out with "
                    + "--acme-eab-kid and --acme-eab-hmac-key-file"
            case "invalidProfile":
                "ask for a profile the CA's directory lists (meta.profiles) with --acme-profile, or drop it"
            case "caa":
                "the domain's CAA records do not allow this CA; add it to them"
            case "dns":
                "the CA could not resolve the domain: point its DNS at this server"
            case "connection", "unauthorized", "incorrectResponse":
                "make sure port 80 of the domain reaches this server's HTTP listener (--http-port 80, or a port mapping)"
            case "serverInternal":
                "the CA had an internal error; the server retries later"
            default:
                "the server retries later; see the CA's problem document on /status"
            }
        return ACMEFailure(
            .problem, "the ACME server refused: \(problem.summary) [\(problem.kind)]", url: url, hint: hint,
            problem: problem, retryAfter: response.retryAfter())
    }

    /// The parsed JSON body of `response` to a request to `url`, or a protocol failure.
    func json(_ response: HTTPClientResponse, url: String) throws(ACMEFailure) -> JSONValue {
        guard let json = JSONValue.parse(response.body), case .object = json else {
            throw ACMEFailure(
                .protocolViolation,
                "the ACME server answered HTTP \(response.status) with a body that is not a JSON object",
                url: url, hint: "check the directory URL (--acme-directory)")
        }
        return json
    }

    // MARK: Account

    /// The account's URL: registered now (newAccount) unless the account already has one at this CA.
    public func accountURL() throws(ACMEFailure) -> String {
        if let url = account.url(at: directoryURL) { return url }
        registration.lock()
        defer { registration.unlock() }
        if let url = account.url(at: directoryURL) { return url }
        let directory = try directory()
        if directory.termsOfService != nil, !account.agreesToTerms {
            throw ACMEFailure(
                .configuration,
                "the CA requires agreeing to its terms of service (\(directory.termsOfService ?? ""))",
                url: directory.newAccount, hint: "read them and pass --acme-agree-tos")
        }
        try checkExternalAccountBinding()
        var payload: [(String, JSONValue)] = [("termsOfServiceAgreed", .bool(account.agreesToTerms))]
        if let email = account.email { payload.append(("contact", .strings(["mailto:" + email]))) }
        if let binding = externalAccountBinding {
            payload.append(
                ("externalAccountBinding", binding.jws(accountKey: jwk, newAccountURL: directory.newAccount)))
        }
        let response: HTTPClientResponse
        do {
            response = try post(directory.newAccount, payload: .members(payload), signer: .jwk)
        } catch let failure
            where externalAccountBinding != nil && failure.kind == .problem
            && ![
                "agreementRequired", "userActionRequired", "invalidContact", "unsupportedContact", "rateLimited",
                "serverInternal", "badNonce",
            ].contains(failure.problem?.kind ?? "")
        {
            // The CA refused the new account with the binding it carried: the key ID or the key is what to check.
            var refused = failure
            refused.hint =
                "the CA refused the external account binding: check the key ID (\(options.keyID)) and that "
                + "\(options.keyFile) holds the HMAC key the CA handed out with it"
            throw refused
        }
        guard let url = response.header("Location"), !url.isEmpty else {
            throw ACMEFailure(
                .protocolViolation, "newAccount answered HTTP \(response.status) without the account's Location",
                url: directory.newAccount, hint: "check the directory URL (--acme-directory)")
        }
        try Self.requireHTTPS(url)
        try account.remember(url: url, at: directoryURL)
        return url
    }

    // MARK: Renewal information

    /// The renewal window the CA suggests for `certificate` (ACME Renewal Information, RFC 9773), or `nil` when
    /// the directory offers none or the certificate has no authority key identifier.
    public func renewalWindow(for certificate: X509Certificate) throws(ACMEFailure) -> ClosedRange<Date>? {
        guard let base = try directory().renewalInfo, let certID = Self.certID(of: certificate) else { return nil }
        let url = base.hasSuffix("/") ? base + certID : base + "/" + certID
        let response = try send(HTTPClientRequest(.get, url: url))
        guard response.status == 200 else { return nil }
        let window = try json(response, url: url)[member: "suggestedWindow"]
        let formatter = ISO8601DateFormatter()
        func date(_ name: String) -> Date? {
            guard let text = window?[member: name]?.stringValue else { return nil }
            if let date = formatter.date(from: text) { return date }
            formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
            return formatter.date(from: text)
        }
        guard let start = date("start"), let end = date("end"), start <= end else {
            throw ACMEFailure(
                .protocolViolation, "renewalInfo has no valid suggestedWindow", url: url,
                hint: "the server renews by the certificate's lifetime instead")
        }
        return start...end
    }

    /// The certificate's ARI identifier (RFC 9773 §4.1): base64url of its authority key identifier, a dot, and
    /// base64url of its serial number's octets; `nil` without an authority key identifier.
    static func certID(of certificate: X509Certificate) -> String? {
        guard let identifier = certificate.authorityKeyIdentifier else { return nil }
        return Base64URL.encode(identifier) + "." + Base64URL.encode(certificate.serialNumberOctets)
    }

    /// Fails when the directory says accounts need an external account binding (`meta.externalAccountRequired`)
    /// and none is configured: the message names the options that give one.
    public func checkExternalAccountBinding() throws(ACMEFailure) {
        let directory = try directory()
        guard directory.externalAccountRequired, externalAccountBinding == nil else { return }
        throw ACMEFailure(
            .configuration, "the CA requires an external account binding (RFC 8555 §7.3.4), and none is configured",
            url: directory.newAccount,
            hint:
                "pass the key ID and the file holding the HMAC key the CA handed out with \(options.keyID) and "
                + "\(options.keyFile)")
    }

    // MARK: Profiles

    /// Fails unless the directory lists ``profile`` in `meta.profiles` (nothing to check without one): the
    /// message names the profile, the directory URL and the profiles it lists.
    public func checkProfile() throws(ACMEFailure) {
        guard let profile else { return }
        let listed = try directory().profiles
        guard listed[profile] == nil else { return }
        let offered =
            listed.isEmpty
            ? "lists no profiles" : "lists \(listed.keys.sorted().joined(separator: ", "))"
        throw ACMEFailure(
            .configuration,
            "the CA does not offer the profile '\(profile)' (\(options.profile)): its directory \(offered)",
            url: directoryURL,
            hint:
                listed.isEmpty
                ? "drop \(options.profile): this CA issues its default certificates only"
                : "pass one of the profiles the directory lists with \(options.profile), or drop it for the CA's default"
        )
    }
}
