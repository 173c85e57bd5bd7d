import AASACore
import AASACurl
import AASAOpenSSL
import AASATestSupport
import Foundation
import Logging
import Synchronization
import Testing

@testable import AASAServer

/// A CA's side of an exchange, recorded: each request the client must send (method and URL) and the answer it gets.
/// Checks every JWS the client signs: the nonce is the last one the CA gave, the `url` is the request's, and the key
/// is named by `jwk` for newAccount and by the account URL (`kid`) for everything else (RFC 8555 §6.2, §6.5).
final class RecordedCA: ACMETransport, @unchecked Sendable {
    struct Step {
        var method: HTTPClientRequest.Method
        var url: String
        var status: Int = 200
        var headers: [(name: String, value: String)] = []
        var body: String = ""
        /// Checks the request's payload (decoded), when given.
        var payload: (@Sendable (String) -> Void)?
    }

    private let steps = Mutex<[Step]>([])
    private let nonces = Mutex<(issued: Int, lastGiven: String?)>((0, nil))
    let accountURL = "https://ca.test/acme/acct/1"
    /// The protected headers the client sent, in order.
    let headers = Mutex<[[String: String]]>([])
    /// The URL of every request the client sent, in order.
    let sent = Mutex<[String]>([])

    init(_ steps: [Step]) { self.steps.withLock { $0 = steps } }

    var remaining: Int { steps.withLock { $0.count } }

    func send(_ request: HTTPClientRequest) throws(ACMEFailure) -> HTTPClientResponse {
        sent.withLock { $0.append(request.url) }
        let step = steps.withLock { $0.isEmpty ? nil : $0.removeFirst() }
        guard let step else {
            Issue.record("unexpected \(request.method.rawValue) \(request.url)")
            throw ACMEFailure(.network, "no more recorded steps", url: request.url, hint: "")
        }
        #expect(request.method == step.method && request.url == step.url, "expected \(step.method) \(step.url)")
        if request.method == .post { check(request, step) }
        let nonce = nonces.withLock { nonces -> String in
            nonces.issued += 1
            nonces.lastGiven = "nonce-\(nonces.issued)"
            return nonces.lastGiven!
        }
        return HTTPClientResponse(
            status: step.status, headers: step.headers + [("Replay-Nonce", nonce)], body: Array(step.body.utf8))
    }

    private func check(_ request: HTTPClientRequest, _ step: Step) {
        #expect(request.headers.contains { $0.name == "Content-Type" && $0.value == "application/jose+json" })
        guard case .object(let members)? = JSONValue.parse(request.body),
            let protected = members.first(where: { $0.key == "protected" })?.value.value.stringValue,
            let payload = members.first(where: { $0.key == "payload" })?.value.value.stringValue,
            let header = Base64URL.decode(protected).flatMap(JSONValue.parse),
            let payloadBytes = Base64URL.decode(payload)
        else {
            Issue.record("not a flattened JWS: \(String(decoding: request.body, as: UTF8.self))")
            return
        }
        let fields = [
            "alg": header[member: "alg"]?.stringValue ?? "", "nonce": header[member: "nonce"]?.stringValue ?? "",
            "url": header[member: "url"]?.stringValue ?? "", "kid": header[member: "kid"]?.stringValue ?? "",
            "jwk": header[member: "jwk"] == nil ? "" : "present",
        ]
        headers.withLock { $0.append(fields) }
        #expect(fields["alg"] == "ES256")
        #expect(fields["url"] == request.url)
        #expect(fields["nonce"] == nonces.withLock { $0.lastGiven }, "a nonce the CA gave last")
        if request.url.hasSuffix("/new-acct") {
            #expect(fields["jwk"] == "present" && fields["kid"] == "")
        } else {
            #expect(fields["kid"] == accountURL && fields["jwk"] == "")
        }
        step.payload?(String(decoding: payloadBytes, as: UTF8.self))
    }

    // MARK: Recorded answers, in Let's Encrypt's shapes

    static let directory = Step(
        method: .get, url: "https://ca.test/directory",
        body: """
            {"keyChange":"https://ca.test/acme/key-change","meta":{"caaIdentities":["ca.test"],
            "termsOfService":"https://ca.test/terms.pdf","website":"https://ca.test"},
            "newAccount":"https://ca.test/acme/new-acct","newNonce":"https://ca.test/acme/new-nonce",
            "newOrder":"https://ca.test/acme/new-order","renewalInfo":"https://ca.test/acme/renewal-info",
            "revokeCert":"https://ca.test/acme/revoke-cert"}
            """)
    static let nonce = Step(method: .head, url: "https://ca.test/acme/new-nonce")
    static let newAccount = Step(
        method: .post, url: "https://ca.test/acme/new-acct", status: 201,
        headers: [("Location", "https://ca.test/acme/acct/1")], body: #"{"status":"valid"}"#)
    static func newOrder(_ status: Int = 201) -> Step {
        Step(
            method: .post, url: "https://ca.test/acme/new-order", status: status,
            headers: [("Location", "https://ca.test/acme/order/1/7")],
            body: """
                {"status":"pending","expires":"2026-12-02T00:00:00Z","identifiers":[{"type":"dns","value":"shop.example"}],
                "authorizations":["https://ca.test/acme/authz/1/9"],"finalize":"https://ca.test/acme/finalize/1/7"}
                """,
            payload: { #expect($0 == #"{"identifiers":[{"type":"dns","value":"shop.example"}]}"#) })
    }
    static func authorization(_ status: String, error: String? = nil) -> Step {
        let challengeError = error.map { #","error":"# + $0 } ?? ""
        return Step(
            method: .post, url: "https://ca.test/acme/authz/1/9",
            body: """
                {"identifier":{"type":"dns","value":"shop.example"},"status":"\(status)","expires":"2026-12-02T00:00:00Z",
                "challenges":[{"type":"dns-01","url":"https://ca.test/acme/chall/1/9/d","status":"pending","token":"dnsToken"},
                {"type":"http-01","url":"https://ca.test/acme/chall/1/9/h","status":"\(status)","token":"Tok-en_1"\(challengeError)}]}
                """, payload: { #expect($0 == "") })
    }
    static let respond = Step(
        method: .post, url: "https://ca.test/acme/chall/1/9/h",
        body: #"{"type":"http-01","status":"processing","token":"Tok-en_1"}"#, payload: { #expect($0 == "{}") })
    static func order(_ status: String) -> Step {
        Step(
            method: .post, url: "https://ca.test/acme/order/1/7",
            body: """
                {"status":"\(status)","authorizations":["https://ca.test/acme/authz/1/9"],
                "finalize":"https://ca.test/acme/finalize/1/7","certificate":"https://ca.test/acme/cert/abc"}
                """, payload: { #expect($0 == "") })
    }
    static let finalize = Step(
        method: .post, url: "https://ca.test/acme/finalize/1/7", headers: [("Retry-After", "0")],
        body: #"{"status":"processing"}"#, payload: { #expect($0.hasPrefix(#"{"csr":""#)) })
    static let download = Step(
        method: .post, url: "https://ca.test/acme/cert/abc",
        headers: [("Content-Type", "application/pem-certificate-chain")],
        body: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n", payload: { #expect($0 == "") })
    static func problem(_ url: String, status: Int, type: String, detail: String, headers: [(String, String)] = [])
        -> Step
    {
        Step(
            method: .post, url: url, status: status,
            headers: [("Content-Type", "application/problem+json")] + headers.map { (name: $0.0, value: $0.1) },
            body: #"{"type":"urn:ietf:params:acme:error:\#(type)","detail":"\#(detail)","status":\#(status)}"#)
    }
}

/// The answers a client published and withdrew.
final class RecordingResponder: ChallengeResponder, @unchecked Sendable {
    let events = Mutex<[String]>([])
    func publish(token: String, keyAuthorization: String, domain: String) {
        events.withLock { $0.append("publish \(domain) \(token) \(keyAuthorization)") }
    }
    func withdraw(token: String, domain: String) { events.withLock { $0.append("withdraw \(domain) \(token)") } }
}

@Suite struct ACMEClientTests {
    static func client(_ ca: RecordedCA, agrees: Bool = true) throws -> ACMEClient {
        let account = ACMEAccount(
            key: try PrivateKey.generate(.ecdsaP256), email: "ops@example.com", agreesToTerms: agrees)
        return try ACMEClient(
            directoryURL: "https://ca.test/directory", account: account, transport: ca, sleep: { _ in })
    }

    static let happyPath: [RecordedCA.Step] = [
        RecordedCA.directory, RecordedCA.nonce, RecordedCA.newAccount, RecordedCA.newOrder(),
        RecordedCA.authorization("pending"), RecordedCA.respond, RecordedCA.authorization("valid"),
        RecordedCA.order("ready"), RecordedCA.finalize, RecordedCA.order("valid"), RecordedCA.download,
    ]

    @Test func anOrderGoesThroughEveryStepOfRFC8555WithTheHTTP01Answer() throws {
        let ca = RecordedCA(Self.happyPath)
        let client = try Self.client(ca)
        let responder = RecordingResponder()
        let chain = try client.obtainCertificate(
            for: ["shop.example"], key: try PrivateKey.generate(.ecdsaP256), challenges: responder)
        #expect(String(decoding: chain, as: UTF8.self).hasPrefix("-----BEGIN CERTIFICATE-----"))
        #expect(ca.remaining == 0)
        let authorization = client.keyAuthorization(token: "Tok-en_1")
        #expect(
            responder.events.withLock { $0 }
                == ["publish shop.example Tok-en_1 \(authorization)", "withdraw shop.example Tok-en_1"])
        // The key authorization is the token and the account key's RFC 7638 thumbprint.
        #expect(authorization.hasPrefix("Tok-en_1.") && authorization.count == "Tok-en_1.".count + 43)
        #expect(client.account.url(at: "https://ca.test/directory") == ca.accountURL)
    }

    /// RFC 8555 §6.1: every ACME resource is HTTPS. A URL the CA (or whoever answers for it) names over plain http,
    /// wherever it appears, fails the order naming it, and nothing is sent to it: neither the contact e-mail nor a
    /// signed request.
    @Test(arguments: [
        "https://ca.test/acme/new-nonce", "https://ca.test/acme/new-acct", "https://ca.test/acme/new-order",
        "https://ca.test/acme/renewal-info", "https://ca.test/acme/acct/1", "https://ca.test/acme/order/1/7",
        "https://ca.test/acme/authz/1/9", "https://ca.test/acme/chall/1/9/h", "https://ca.test/acme/finalize/1/7",
        "https://ca.test/acme/cert/abc",
    ])
    func aResourceURLThatIsNotHTTPSFailsTheOrderBeforeAnythingIsSentToIt(url: String) throws {
        let plain = "http://" + url.dropFirst("https://".count)
        let ca = RecordedCA(
            Self.happyPath.map { step in
                var step = step
                step.body = step.body.replacingOccurrences(of: url, with: plain)
                step.headers = step.headers.map { (name: $0.name, value: $0.value == url ? plain : $0.value) }
                return step
            })
        let client = try Self.client(ca)
        let key = try PrivateKey.generate(.ecdsaP256)
        do {
            _ = try client.obtainCertificate(for: ["shop.example"], key: key, challenges: RecordingResponder())
            Issue.record("ordered a certificate through \(plain)")
        } catch {
            #expect(error.url == plain)
            #expect(error.kind == .protocolViolation)
            #expect(error.description.contains("not https; nothing was sent to it"), "\(error)")
        }
        let sent = ca.sent.withLock { $0 }
        #expect(!sent.isEmpty && sent.allSatisfy { $0.hasPrefix("https://") }, "\(sent)")
    }

    @Test func aBadNonceIsRetriedAtOnceWithTheNonceThatCameWithIt() throws {
        var steps = Self.happyPath
        steps.insert(
            RecordedCA.problem(
                "https://ca.test/acme/new-order", status: 400, type: "badNonce",
                detail: "JWS has an invalid anti-replay nonce"),
            at: 3)
        let ca = RecordedCA(steps)
        _ = try Self.client(ca).obtainCertificate(
            for: ["shop.example"], key: try PrivateKey.generate(.ecdsaP256), challenges: RecordingResponder())
        #expect(ca.remaining == 0)
    }

    @Test func aChallengeTheCACouldNotValidateNamesTheURLItTriedAndWhatItGot() throws {
        let detail =
            #"{"type":"urn:ietf:params:acme:error:unauthorized","detail":"Invalid response from http://shop.example/.well-known/acme-challenge/Tok-en_1: 404","status":403}"#
        let ca = RecordedCA(Array(Self.happyPath.prefix(6)) + [RecordedCA.authorization("invalid", error: detail)])
        let responder = RecordingResponder()
        let failure = try #require(
            throws: ACMEFailure.self,
            performing: {
                try Self.client(ca).obtainCertificate(
                    for: ["shop.example"], key: try PrivateKey.generate(.ecdsaP256), challenges: responder)
            })
        #expect(failure.kind == .challenge)
        #expect(
            failure.message.hasPrefix(
                "shop.example: the CA could not validate http://shop.example/.well-known/acme-challenge/Tok-en_1: Invalid response"
            ))
        #expect(failure.hint.contains("port 80 of shop.example"))
        #expect(failure.problem?.kind == "unauthorized")
        #expect(failure.problem?.document.contains("Invalid response from") == true)
        // The answer is withdrawn even when validation fails.
        #expect(responder.events.withLock { $0.last } == "withdraw shop.example Tok-en_1")
    }

    @Test func aRateLimitCarriesTheCAsRetryAfterAndItsDocumentVerbatim() throws {
        let ca = RecordedCA([
            RecordedCA.directory, RecordedCA.nonce, RecordedCA.newAccount,
            RecordedCA.problem(
                "https://ca.test/acme/new-order", status: 429, type: "rateLimited",
                detail: "too many certificates already issued for \\\"example\\\"", headers: [("Retry-After", "3600")]),
        ])
        let failure = try #require(
            throws: ACMEFailure.self,
            performing: {
                try Self.client(ca).obtainCertificate(
                    for: ["shop.example"], key: try PrivateKey.generate(.ecdsaP256), challenges: RecordingResponder())
            })
        #expect(failure.kind == .problem && failure.problem?.kind == "rateLimited")
        #expect(failure.problem?.status == 429)
        #expect(failure.problem?.document.hasPrefix(#"{"type":"urn:ietf:params:acme:error:rateLimited""#) == true)
        let retryAfter = try #require(failure.retryAfter)
        #expect(abs(retryAfter.timeIntervalSinceNow - 3600) < 60)
        #expect(failure.hint.contains("rate limit"))
        // The backoff honours it.
        let schedule = RenewalSchedule()
        #expect(schedule.retry(failures: 1, now: Date(), retryAfter: retryAfter) == retryAfter)
    }

    /// A `Retry-After` no CA means (the largest integer, a year past 9999): read as the longest wait, 30 days, so the
    /// pause it sets stays a time `/status` and `/metrics` can show.
    @Test(arguments: ["9223372036854775807", "Fri, 31 Dec 99999 23:59:59 GMT", "Fri, 31 Dec 9999 23:59:59 GMT"])
    func aRetryAfterPastItsBoundIsReadAsThirtyDays(_ value: String) throws {
        let ca = RecordedCA([
            RecordedCA.directory, RecordedCA.nonce, RecordedCA.newAccount,
            RecordedCA.problem(
                "https://ca.test/acme/new-order", status: 429, type: "rateLimited", detail: "slow down",
                headers: [("Retry-After", value)]),
        ])
        let failure = try #require(
            throws: ACMEFailure.self,
            performing: {
                try Self.client(ca).obtainCertificate(
                    for: ["shop.example"], key: try PrivateKey.generate(.ecdsaP256), challenges: RecordingResponder())
            })
        let retryAfter = try #require(failure.retryAfter)
        #expect(abs(retryAfter.timeIntervalSinceNow - 30 * 86_400) < 60, "\(retryAfter)")
    }

    @Test func anAccountTheCANoLongerKnowsIsRegisteredAgain() throws {
        var steps = Array(Self.happyPath.prefix(3))
        steps.append(
            RecordedCA.problem(
                "https://ca.test/acme/new-order", status: 400, type: "accountDoesNotExist", detail: "unknown account"))
        steps += [RecordedCA.newAccount] + Self.happyPath.dropFirst(3)
        let ca = RecordedCA(steps)
        _ = try Self.client(ca).obtainCertificate(
            for: ["shop.example"], key: try PrivateKey.generate(.ecdsaP256), challenges: RecordingResponder())
        #expect(ca.remaining == 0)
    }

    @Test func termsNotAcceptedAndAURLThatIsNotACMEAreRefusedWithTheFix() throws {
        let terms = try #require(
            throws: ACMEFailure.self,
            performing: { try Self.client(RecordedCA([RecordedCA.directory]), agrees: false).accountURL() })
        #expect(terms.kind == .configuration && terms.hint.contains("--acme-agree-tos"))
        #expect(terms.message.contains("https://ca.test/terms.pdf"))
        let html = RecordedCA.Step(method: .get, url: "https://ca.test/directory", body: "<html>welcome</html>")
        let notACME = try #require(
            throws: ACMEFailure.self, performing: { try Self.client(RecordedCA([html])).directory() })
        #expect(notACME.kind == .protocolViolation && notACME.message.contains("not an ACME directory"))
        #expect(notACME.url == "https://ca.test/directory")
    }

    @Test func renewalInformationIsAskedByTheCertificatesAuthorityKeyAndSerial() throws {
        let folder = TemporaryDirectory("aasa-ari")
        let authority = try DevCertificateAuthority.loadOrCreate(directory: folder.path + "/ca")
        let leaf = try authority.issue(names: ["shop.example"]).certificate
        // RFC 9773 §4.1: base64url(keyIdentifier) "." base64url(serial's DER content octets).
        let serialHex =
            try Command.run("openssl", ["x509", "-noout", "-serial"], input: Array(leaf.pemEncoded().utf8))
            .stdout.split(separator: "=").last.map { $0.trimmingCharacters(in: .whitespacesAndNewlines) } ?? ""
        var octets = leaf.serialNumberOctets
        if octets.first == 0, octets.count > 1, octets[1] >= 0x80 { octets.removeFirst() }
        #expect(octets.map { String(format: "%02X", $0) }.joined() == serialHex)
        let keyIdentifier = try #require(leaf.authorityKeyIdentifier)
        let certID = Base64URL.encode(keyIdentifier) + "." + Base64URL.encode(leaf.serialNumberOctets)
        let ca = RecordedCA([
            RecordedCA.directory,
            RecordedCA.Step(
                method: .get, url: "https://ca.test/acme/renewal-info/" + certID,
                body: #"{"suggestedWindow":{"start":"2027-01-10T00:00:00Z","end":"2027-01-12T00:00:00Z"}}"#),
        ])
        let window = try #require(try Self.client(ca).renewalWindow(for: leaf))
        #expect(ISO8601DateFormatter().string(from: window.lowerBound) == "2027-01-10T00:00:00Z")
        #expect(ISO8601DateFormatter().string(from: window.upperBound) == "2027-01-12T00:00:00Z")
        // The window wins over the lifetime rule, at a point fixed per domain.
        let due = RenewalSchedule().renewal(
            domain: "shop.example", notBefore: leaf.notBefore, notAfter: leaf.notAfter, suggested: window)
        #expect(window.contains(due))
        #expect(
            due
                == RenewalSchedule().renewal(
                    domain: "shop.example", notBefore: leaf.notBefore, notAfter: leaf.notAfter, suggested: window))
    }
}

@Suite struct ACMEManagerTests {
    /// A certificate the server obtained from `directory`, 90 days long, in its folder with its record.
    static func managedCertificate(in certs: String, directory: String) throws -> X509Certificate {
        let authority = try DevCertificateAuthority.loadOrCreate(directory: certs + "/../ca")
        let issued = try authority.issue(names: ["shop.example"], validityDays: 90)
        let folder = certs + "/shop.example"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try AtomicFile.write(Array(issued.certificatePEM().utf8), to: folder + "/fullchain.pem")
        try AtomicFile.write(Array(issued.privateKeyPEM().utf8), to: folder + "/privkey.pem", mode: 0o600)
        try AtomicFile.write(
            CertificateRecord(directoryURL: directory, issued: Date(), names: ["shop.example"]).bytes,
            to: CertificateFile.acmeRecord.path(in: folder))
        return issued.certificate
    }

    static func manager(_ ca: RecordedCA, certs: String) throws -> ACMEManager {
        ACMEManager(
            settings: ACMESettings(), client: try ACMEClientTests.client(ca), certificateDirectory: certs,
            logger: Logger(label: "test"), issued: { _ in })
    }

    static func served(_ leaf: X509Certificate) -> ACMEManager.ServedCertificate {
        ACMEManager.ServedCertificate(
            folder: "shop.example", subjectAlternativeNames: leaf.subjectAlternativeNames, notBefore: leaf.notBefore,
            notAfter: leaf.notAfter)
    }

    @Test func theCAsRenewalWindowIsAskedEverySixHoursAndMovesTheRenewal() throws {
        let folder = TemporaryDirectory("aasa-ari-manager")
        let certs = folder.path + "/certs"
        let leaf = try Self.managedCertificate(in: certs, directory: "https://ca.test/directory")
        let now = Date()
        let certID =
            Base64URL.encode(try #require(leaf.authorityKeyIdentifier)) + "."
            + Base64URL.encode(leaf.serialNumberOctets)
        let formatter = ISO8601DateFormatter()
        let window = (now.addingTimeInterval(40 * 86_400), now.addingTimeInterval(41 * 86_400))
        let ca = RecordedCA([
            RecordedCA.directory,
            RecordedCA.Step(
                method: .get, url: "https://ca.test/acme/renewal-info/" + certID,
                body:
                    #"{"suggestedWindow":{"start":"\#(formatter.string(from: window.0))","end":"\#(formatter.string(from: window.1))"}}"#
            ),
        ])
        let manager = try Self.manager(ca, certs: certs)
        manager.update(domains: ["shop.example"], certificates: [Self.served(leaf)], now: now)
        // Planned by the lifetime: a third before expiry, spread by at most a tenth of that.
        let planned = try #require(manager.statuses["shop.example"])
        #expect(planned.source == .acme && planned.state == .valid)
        let byLifetime = try #require(planned.nextRenewal)
        #expect(byLifetime <= leaf.notAfter.addingTimeInterval(-30 * 86_400 + 60))
        #expect(byLifetime >= leaf.notAfter.addingTimeInterval(-33 * 86_400 - 60))
        // Nothing to do yet; within six hours the CA is asked, and its earlier window wins. Nothing is ordered.
        #expect(manager.runDue(now: now).isEmpty)
        let asked = manager.runDue(now: now.addingTimeInterval(6 * 3600 + 1))
        #expect(asked.map(\.domain) == ["shop.example"] && asked.first?.failure == nil)
        let moved = try #require(manager.statuses["shop.example"]?.nextRenewal)
        #expect(moved >= window.0.addingTimeInterval(-1) && moved <= window.1.addingTimeInterval(1), "\(moved)")
        #expect(ca.remaining == 0 && manager.orderCounts.isEmpty)
        // Another replica of the same state (here a second manager on the folder) takes the window it kept, and asks
        // the CA nothing: the recorded CA has no answer left.
        let other = try Self.manager(RecordedCA([RecordedCA.directory]), certs: certs)
        other.update(domains: ["shop.example"], certificates: [Self.served(leaf)], now: now)
        let shared = other.runDue(now: now.addingTimeInterval(6 * 3600 + 1))
        #expect(shared.map(\.domain) == ["shop.example"] && shared.first?.failure == nil, "\(shared)")
        let kept = try #require(other.statuses["shop.example"]?.nextRenewal)
        #expect(kept >= window.0.addingTimeInterval(-1) && kept <= window.1.addingTimeInterval(1), "\(kept)")
    }

    @Test func aCertificateFromAnotherDirectoryIsReplacedAtOnceAndAnOperatorsNever() throws {
        let folder = TemporaryDirectory("aasa-other-ca")
        let certs = folder.path + "/certs"
        let leaf = try Self.managedCertificate(in: certs, directory: "https://staging.ca.test/directory")
        let now = Date()
        let manager = try Self.manager(RecordedCA([]), certs: certs)
        manager.update(domains: ["shop.example"], certificates: [Self.served(leaf)], now: now)
        #expect(manager.statuses["shop.example"]?.nextRenewal == now)
        // Without the record the same files are the operator's: never renewed.
        try FileManager.default.removeItem(atPath: CertificateFile.acmeRecord.path(in: certs + "/shop.example"))
        let operators = try Self.manager(RecordedCA([]), certs: certs)
        operators.update(domains: ["shop.example"], certificates: [Self.served(leaf)], now: now)
        let status = try #require(operators.statuses["shop.example"])
        #expect(status.source == .files && status.state == .valid && status.nextRenewal == nil)
        #expect(operators.runDue(now: now.addingTimeInterval(365 * 86_400)).isEmpty)
    }
}

@Suite struct RenewalScheduleTests {
    @Test func renewalStartsWhenAThirdOfTheLifetimeRemainsSpreadAcrossDomains() {
        let notBefore = Date(timeIntervalSince1970: 1_800_000_000)
        let notAfter = notBefore.addingTimeInterval(90 * 86_400)
        let schedule = RenewalSchedule()
        let dates = (0..<500).map {
            schedule.renewal(domain: "d\($0).example", notBefore: notBefore, notAfter: notAfter)
        }
        let latest = notAfter.addingTimeInterval(-30 * 86_400)
        let earliest = latest.addingTimeInterval(-3 * 86_400)
        #expect(dates.allSatisfy { $0 <= latest && $0 >= earliest })
        // Spread: 500 domains issued together do not renew in the same hour.
        let hours = Set(dates.map { Int($0.timeIntervalSince1970 / 3600) })
        #expect(hours.count > 50, "\(hours.count) distinct hours")
        // --acme-renew-before replaces the third.
        let wide = RenewalSchedule(renewBefore: .seconds(45 * 86_400))
        #expect(
            wide.renewal(domain: "a.example", notBefore: notBefore, notAfter: notAfter)
                <= notAfter.addingTimeInterval(-45 * 86_400))
        // A certificate this process just obtained is not renewed again before a tenth of its lifetime.
        let forced = RenewalSchedule(renewBefore: .seconds(1000 * 86_400))
        let issued = notBefore
        #expect(
            forced.renewal(domain: "a.example", notBefore: notBefore, notAfter: notAfter, issuedHere: issued)
                == issued.addingTimeInterval(9 * 86_400))
    }

    @Test func failuresAreRetriedAfterOneTenAndAHundredMinutesThenDaily() {
        let schedule = RenewalSchedule(minimumRetry: .seconds(60))
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let delays = (1...6).map { schedule.retry(failures: $0, now: now, retryAfter: nil).timeIntervalSince(now) }
        #expect(delays == [60, 600, 6000, 86_400, 86_400, 86_400])
        // A Retry-After later than the schedule wins; an earlier one does not shorten it.
        #expect(
            schedule.retry(failures: 1, now: now, retryAfter: now.addingTimeInterval(10)) == now.addingTimeInterval(60))
        #expect(
            schedule.retry(failures: 1, now: now, retryAfter: now.addingTimeInterval(900))
                == now.addingTimeInterval(900))
    }
}

@Suite struct ChallengeAnswerTests {
    @Test func theWebrootAnswersTokensFromItsFolderOnly() throws {
        let folder = TemporaryDirectory("aasa-webroot")
        let webroot = WebrootChallenges(root: folder.path)
        try webroot.publish(token: "abc_DEF-123", keyAuthorization: "abc_DEF-123.thumb", domain: "shop.example")
        #expect(webroot.answer(token: "abc_DEF-123") == Array("abc_DEF-123.thumb".utf8))
        // Tokens are base64url: no path can be named through one.
        for token in ["../secret", "a/b", "", ".hidden", "x y"] { #expect(webroot.answer(token: token) == nil) }
        // A link out of the folder is not followed; a file too large is not read.
        _ = try folder.write("secret.txt", "private")
        try FileManager.default.createSymbolicLink(
            atPath: folder.path + "/.well-known/acme-challenge/linked", withDestinationPath: folder.path + "/secret.txt"
        )
        #expect(webroot.answer(token: "linked") == nil)
        _ = try folder.write(".well-known/acme-challenge/huge", String(repeating: "x", count: 5000))
        #expect(webroot.answer(token: "huge") == nil)
        webroot.withdraw(token: "abc_DEF-123", domain: "shop.example")
        #expect(webroot.answer(token: "abc_DEF-123") == nil)
    }
}

/// The ACME client over real HTTPS (libcurl, a CA of the test's own) against a CA that names plain http:// resources:
/// the order fails naming the URL, and the plain HTTP port never sees a connection.
@Suite(.serialized) struct ACMEPlainResourceTests {
    /// A TCP socket listening on loopback that never answers: a connection to it shows something was sent.
    final class Trap {
        let socket: Int32
        let port: UInt16

        init() throws {
            let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            socket = fd
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, $0, &length) == 0
                }
            }
            guard bound else { throw POSIXError(.EADDRINUSE) }
            port = UInt16(bigEndian: address.sin_port)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }

        deinit { close(socket) }

        /// Whether anything connected.
        var wasReached: Bool {
            let accepted = accept(socket, nil, nil)
            if accepted >= 0 { close(accepted) }
            return accepted >= 0
        }
    }

    /// The directory is the only document the client reads before it signs anything (the fake CA, a listener of
    /// this server, refuses request bodies, so the resources met later are covered by ACMEClientTests' recorded CA).
    @Test(arguments: ["newNonce", "newAccount"])
    func aPlainHTTPResourceIsRefusedAndNothingIsSentToIt(which: String) throws {
        let fake = try FakeEndpoint()
        let trap = try Trap()
        let https = "https://127.0.0.1:\(fake.port)"
        let plain = "http://127.0.0.1:\(trap.port)/acme/\(which)"
        let resources = ["newNonce": https + "/nonce", "newAccount": https + "/new-acct", "newOrder": https + "/order"]
            .merging([which: plain]) { _, new in new }
        fake.set(
            "/directory",
            FakeEndpoint.Answer(
                headers: [HTTPHeader("Content-Type", "application/json")],
                body: "{" + resources.map { "\"\($0.key)\":\"\($0.value)\"" }.joined(separator: ",") + "}"))
        fake.set("/nonce", FakeEndpoint.Answer(headers: [HTTPHeader("Replay-Nonce", "n0nce")]))
        var client = HTTPClient(trustAnchors: fake.caFile)
        client.timeout = .seconds(3)
        let account = ACMEAccount(
            key: try PrivateKey.generate(.ecdsaP256), email: "ops@example.com", agreesToTerms: true)
        let acme = try ACMEClient(
            directoryURL: https + "/directory", account: account, transport: CurlACMETransport(client: client),
            sleep: { _ in })
        let key = try PrivateKey.generate(.ecdsaP256)
        do {
            _ = try acme.obtainCertificate(for: ["shop.example"], key: key, challenges: RecordingResponder())
            Issue.record("ordered a certificate through \(plain)")
        } catch {
            #expect(error.url == plain, "\(error)")
            #expect(error.description.contains("not https; nothing was sent to it"), "\(error)")
        }
        #expect(!trap.wasReached, "a request went to \(plain)")
    }
}
