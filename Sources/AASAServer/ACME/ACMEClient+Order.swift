import AASACore
import AASACurl
public import AASAOpenSSL
import Foundation
import Synchronization

/// Ordering a certificate (RFC 8555 §7.4): the order, its authorizations and their http-01 challenges, the polls
/// while the CA works, the finalization and the download.
extension ACMEClient {

    /// Orders a certificate for `names` with `key` (RFC 8555 §7.4): answers each pending authorization's http-01
    /// challenge through `challenges`, finalizes with a CSR, and downloads the chain (PEM, leaf first).
    ///
    /// An account the CA does not know (it lost its state, or the account was deactivated) is registered again
    /// and the order started over, once.
    ///
    /// The order asks for ``profile`` when set (a profile the directory does not list fails before anything is
    /// sent). A renewal names the certificate it replaces in `replacing`: when the directory offers renewalInfo and
    /// the certificate has an authority key identifier, the order carries `replaces` (RFC 9773 §5), which Let's
    /// Encrypt exempts from its limits; if the CA answers that it was already replaced (`alreadyReplaced`, or 409),
    /// the order is placed once more without it.
    public func obtainCertificate(
        for names: [String], key: PrivateKey, challenges: any ChallengeResponder,
        replacing: X509Certificate? = nil
    ) throws(ACMEFailure) -> [UInt8] {
        try checkProfile()
        let replaces = try replacing.flatMap { certificate throws(ACMEFailure) in
            try directory().renewalInfo == nil ? nil : Self.certID(of: certificate)
        }
        do {
            return try orderOnce(names, key: key, challenges: challenges, replaces: replaces)
        } catch let failure where failure.problem?.kind == "accountDoesNotExist" {
            try account.forget(at: directoryURL)
            return try orderOnce(names, key: key, challenges: challenges, replaces: replaces)
        }
    }

    /// ``order(_:key:challenges:replaces:)``, again without `replaces` when the CA says the certificate was
    /// already replaced.
    private func orderOnce(_ names: [String], key: PrivateKey, challenges: any ChallengeResponder, replaces: String?)
        throws(ACMEFailure) -> [UInt8]
    {
        do {
            return try order(names, key: key, challenges: challenges, replaces: replaces)
        } catch let failure
            where replaces != nil && failure.url == (try? directory().newOrder)
            && (failure.problem?.kind == "alreadyReplaced" || failure.problem?.status == 409)
        {
            return try order(names, key: key, challenges: challenges, replaces: nil)
        }
    }

    private func order(_ names: [String], key: PrivateKey, challenges: any ChallengeResponder, replaces: String?)
        throws(ACMEFailure) -> [UInt8]
    {
        let directory = try directory()
        let identifiers = names.map { JSONValue.members([("type", .string("dns")), ("value", .string($0))]) }
        var members: [(String, JSONValue)] = [("identifiers", .array(identifiers.map { JSONNode($0) }))]
        if let profile { members.append(("profile", .string(profile))) }
        if let replaces { members.append(("replaces", .string(replaces))) }
        let created = try post(directory.newOrder, payload: .members(members))
        guard let orderURL = created.header("Location") else {
            throw ACMEFailure(
                .protocolViolation, "newOrder answered HTTP \(created.status) without the order's Location",
                url: directory.newOrder, hint: "check the directory URL (--acme-directory)")
        }
        var order = try json(created, url: orderURL)
        for authorization in order[member: "authorizations"]?.arrayValue?.compactMap(\.stringValue) ?? [] {
            try authorize(authorization, challenges: challenges)
        }
        order = try poll(orderURL, while: ["pending"], what: "order")
        try expect(order, status: "ready", url: orderURL, what: "order")
        guard let finalize = order[member: "finalize"]?.stringValue else {
            throw ACMEFailure(
                .protocolViolation, "the order has no finalize URL", url: orderURL,
                hint: "check the directory URL (--acme-directory)")
        }
        let csr: CertificateSigningRequest
        do {
            csr = try CertificateSigningRequest(key: key, dnsNames: names)
        } catch {
            throw ACMEFailure(.storage, "could not build the CSR: \(error)", hint: "report this")
        }
        _ = try post(finalize, payload: .members([("csr", .string(csr.base64URL))]))
        order = try poll(orderURL, while: ["ready", "processing"], what: "order")
        try expect(order, status: "valid", url: orderURL, what: "order")
        guard let certificateURL = order[member: "certificate"]?.stringValue else {
            throw ACMEFailure(
                .protocolViolation, "the valid order has no certificate URL", url: orderURL,
                hint: "check the directory URL (--acme-directory)")
        }
        let download = try post(certificateURL, payload: nil, accept: Self.certificateChainType)
        guard download.body.starts(with: Array("-----BEGIN CERTIFICATE-----".utf8)) else {
            throw ACMEFailure(
                .protocolViolation, "the certificate download is not a PEM chain", url: certificateURL,
                hint: "check the directory URL (--acme-directory)")
        }
        return download.body
    }

    /// Brings one authorization to `valid`: nothing to do when it is; else its http-01 challenge is published,
    /// answered, polled, and withdrawn.
    private func authorize(_ url: String, challenges responder: any ChallengeResponder) throws(ACMEFailure) {
        let authorization = try json(post(url, payload: nil), url: url)
        let status = authorization[member: "status"]?.stringValue
        if status == "valid" { return }
        let domain = authorization[member: "identifier"]?[member: "value"]?.stringValue ?? "?"
        let offered = authorization[member: "challenges"]?.arrayValue ?? []
        guard status == "pending" else {
            throw ACMEFailure(
                .challenge, "\(domain): the authorization is \(status ?? "without a status")", url: url,
                hint: "the server orders again later")
        }
        guard let challenge = offered.first(where: { $0[member: "type"]?.stringValue == "http-01" }),
            let challengeURL = challenge[member: "url"]?.stringValue,
            let token = challenge[member: "token"]?.stringValue, Self.isToken(token)
        else {
            let types = offered.compactMap { $0[member: "type"]?.stringValue }.joined(separator: ", ")
            throw ACMEFailure(
                .challenge, "\(domain): the CA offers no usable http-01 challenge (offered: \(types))", url: url,
                hint: "aasa-server answers http-01 only; use a CA that offers it for this name")
        }
        try responder.publish(token: token, keyAuthorization: keyAuthorization(token: token), domain: domain)
        defer { responder.withdraw(token: token, domain: domain) }
        _ = try post(challengeURL, payload: .members([]))
        let final = try poll(url, while: ["pending", "processing"], what: "authorization")
        guard final[member: "status"]?.stringValue == "valid" else {
            let error =
                final[member: "challenges"]?.arrayValue?.first { $0[member: "url"]?.stringValue == challengeURL }?[
                    member: "error"]
            let problem = error.flatMap { ACMEProblem(body: JSONWriter(style: .compact).bytes($0), status: 403) }
            throw ACMEFailure(
                .challenge,
                "\(domain): the CA could not validate http://\(domain)/.well-known/acme-challenge/\(token): "
                    + (problem?.summary ?? "the authorization is \(final[member: "status"]?.stringValue ?? "?")"),
                url: challengeURL, hint: Self.validationHint(domain, problem), problem: problem)
        }
    }

    /// The fix for a validation the CA could not complete, from what it says: the domain's DNS, port 80, or a
    /// redirect of the challenge elsewhere.
    static func validationHint(_ domain: String, _ problem: ACMEProblem?) -> String {
        let detail = problem?.detail.lowercased() ?? ""
        if detail.contains("redirect") {
            return "http://\(domain)/.well-known/acme-challenge/ is redirected away from this server: answer it here "
                + "(a redirect to https://\(domain)/ on this server is fine; to another host is not)"
        }
        if problem?.kind == "dns" || detail.contains("no such host") || detail.contains("nxdomain") {
            return
                "the CA could not resolve \(domain): point its DNS (A/AAAA records) at this server or its load balancer"
        }
        return "make sure port 80 of \(domain) reaches this server's HTTP listener (--http-port 80, or a port mapping, "
            + "not blocked by a firewall) and that its DNS points here"
    }

    /// POSTs-as-GET `url` until its status leaves `pending`, waiting as `Retry-After` says (1 to 10 s, 1 s without
    /// it); fails once ``pollTimeout`` has passed.
    private func poll(_ url: String, while pending: Set<String>, what: String) throws(ACMEFailure) -> JSONValue {
        let deadline = ContinuousClock.now + pollTimeout
        while true {
            let response = try post(url, payload: nil)
            let object = try json(response, url: url)
            let status = object[member: "status"]?.stringValue ?? ""
            guard pending.contains(status) else { return object }
            guard ContinuousClock.now < deadline else {
                throw ACMEFailure(
                    .protocolViolation, "the \(what) stayed \(status) for \(pollTimeout)", url: url,
                    hint: "the CA is slow; the server orders again later")
            }
            let wait = response.retryAfter().map { $0.timeIntervalSinceNow } ?? 1
            let pause = Duration.milliseconds(CheckedNumber.clamped(wait * 1000, to: 1000...10_000))
            if let sleep { sleep(pause) } else { waitUnlessStopped(pause) }
            if pollingStopped.withLock({ $0 }) {
                throw ACMEFailure(
                    .network, "the \(what) was still \(status) when the server stopped", url: url,
                    hint: "the server orders again after its next start")
            }
        }
    }

    /// Ends every poll at its next wait, with a failure: for a server stopping while an order is in flight, so its
    /// ACME workers end within a request instead of after ``pollTimeout``.
    public func stopPolling() {
        pollingStopped.withLock { $0 = true }
        pollStop.lock()
        pollStop.broadcast()
        pollStop.unlock()
    }

    /// Waits for `duration`, or until ``stopPolling()``.
    private func waitUnlessStopped(_ duration: Duration) {
        let until = Date().addingTimeInterval(duration.timeInterval)
        pollStop.lock()
        defer { pollStop.unlock() }
        while !pollingStopped.withLock({ $0 }), Date() < until { _ = pollStop.wait(until: until) }
    }

    /// Fails unless `object` has `status`, with the CA's `error` when it gave one.
    private func expect(_ object: JSONValue, status: String, url: String, what: String) throws(ACMEFailure) {
        let actual = object[member: "status"]?.stringValue ?? "?"
        guard actual != status else { return }
        let problem = object[member: "error"].flatMap {
            ACMEProblem(body: JSONWriter(style: .compact).bytes($0), status: 403)
        }
        throw ACMEFailure(
            .problem, "the \(what) is \(actual), not \(status)" + (problem.map { ": \($0.summary)" } ?? ""), url: url,
            hint: "the server orders again later", problem: problem)
    }

    /// Whether `token` is base64url text (RFC 8555 §8.3), so it can name a file and a path segment safely.
    static func isToken(_ token: String) -> Bool {
        !token.isEmpty && token.utf8.count <= 256 && token.utf8.allSatisfy(Base64URL.isAlphabet)
    }
}
