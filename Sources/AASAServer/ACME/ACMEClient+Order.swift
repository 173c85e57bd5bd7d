import AASACore
import AASACurl
public import AASAOpenSSL
import Foundation
import Synchronization

/// Ordering a certificate (RFC 8555 §7.4): the order, its authorizations and their http-01 or dns-01 challenges, the
/// polls while the CA works, the finalization and the download.
extension ACMEClient {

    /// Orders a certificate for `names` with `key` (RFC 8555 §7.4): answers each pending authorization's http-01
    /// challenge through `challenges`, or its dns-01 challenge through `dns` (a wildcard name's always, and every
    /// name `dns` answers), finalizes with a CSR, and downloads the chain (PEM, leaf first).
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
        dns: (any DNSChallengeResponder)? = nil, replacing: X509Certificate? = nil
    ) throws(ACMEFailure) -> [UInt8] {
        let solvers = Solvers(http: challenges, dns: dns)
        try checkProfile()
        let replaces = try replacing.flatMap { certificate throws(ACMEFailure) in
            try directory().renewalInfo == nil ? nil : Self.certID(of: certificate)
        }
        do {
            return try orderOnce(names, key: key, challenges: solvers, replaces: replaces)
        } catch let failure where failure.problem?.kind == "accountDoesNotExist" {
            try account.forget(at: directoryURL)
            return try orderOnce(names, key: key, challenges: solvers, replaces: replaces)
        }
    }

    /// ``order(_:key:challenges:replaces:)``, again without `replaces` when the CA says the certificate was
    /// already replaced.
    private func orderOnce(_ names: [String], key: PrivateKey, challenges: Solvers, replaces: String?)
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

    private func order(_ names: [String], key: PrivateKey, challenges: Solvers, replaces: String?)
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

    /// The answerers of an order's challenges.
    struct Solvers {
        var http: any ChallengeResponder
        var dns: (any DNSChallengeResponder)?
    }

    /// Brings one authorization to `valid`: nothing to do when it is; else its challenge (dns-01 for a wildcard name
    /// and the names `dns` answers, http-01 otherwise) is published, answered, polled, and withdrawn.
    private func authorize(_ url: String, challenges solvers: Solvers) throws(ACMEFailure) {
        let authorization = try json(post(url, payload: nil), url: url)
        let status = authorization[member: "status"]?.stringValue
        if status == "valid" { return }
        let domain = authorization[member: "identifier"]?[member: "value"]?.stringValue ?? "?"
        let wildcard = authorization[member: "wildcard"] == .bool(true)
        let shown = wildcard ? "*.\(domain)" : domain
        let offered = authorization[member: "challenges"]?.arrayValue ?? []
        guard status == "pending" else {
            throw ACMEFailure(
                .challenge, "\(shown): the authorization is \(status ?? "without a status")", url: url,
                hint: "the server orders again later")
        }
        let type = wildcard || solvers.dns?.answers(domain) == true ? "dns-01" : "http-01"
        guard let challenge = offered.first(where: { $0[member: "type"]?.stringValue == type }),
            let challengeURL = challenge[member: "url"]?.stringValue,
            let token = challenge[member: "token"]?.stringValue, Self.isToken(token)
        else {
            let types = offered.compactMap { $0[member: "type"]?.stringValue }.joined(separator: ", ")
            throw ACMEFailure(
                .challenge, "\(shown): the CA offers no usable \(type) challenge (offered: \(types))", url: url,
                hint: type == "dns-01"
                    ? "use a CA that offers dns-01 for this name"
                    : "answer this name with dns-01 (--acme-dns-names), or use a CA that offers http-01 for it")
        }
        let keyAuthorization = keyAuthorization(token: token)
        let checked: String
        if type == "dns-01" {
            guard let dns = solvers.dns else {
                throw ACMEFailure(
                    .configuration, "\(shown): a wildcard name is validated with dns-01 only, which is not configured",
                    url: url, hint: "give --acme-dns-server and --acme-dns-tsig-key-file, or --acme-dns-hook")
            }
            // RFC 8555 §8.4: the TXT value is the base64url SHA-256 digest of the key authorization.
            let value = Base64URL.encode(SHA256Digest.bytes(of: Array(keyAuthorization.utf8)))
            let record = try dns.present(domain: domain, value: value)
            defer { dns.cleanup(record) }
            checked =
                "the TXT record at _acme-challenge.\(domain)"
                + (DNSDelegation.challengeName(of: domain) == record.name ? "" : " (CNAME \(record.name))")
            try answer(url, challengeURL: challengeURL, domain: shown, checked: checked, dns: true)
        } else {
            try solvers.http.publish(token: token, keyAuthorization: keyAuthorization, domain: domain)
            defer { solvers.http.withdraw(token: token, domain: domain) }
            checked = "http://\(domain)/.well-known/acme-challenge/\(token)"
            try answer(url, challengeURL: challengeURL, domain: shown, checked: checked, dns: false)
        }
    }

    /// Tells the CA the challenge at `challengeURL` is ready and polls the authorization at `url` until it is valid;
    /// a failure names what the CA `checked` and the CA's problem.
    private func answer(_ url: String, challengeURL: String, domain: String, checked: String, dns: Bool)
        throws(ACMEFailure)
    {
        _ = try post(challengeURL, payload: .members([]))
        let final = try poll(url, while: ["pending", "processing"], what: "authorization")
        guard final[member: "status"]?.stringValue == "valid" else {
            let error =
                final[member: "challenges"]?.arrayValue?.first { $0[member: "url"]?.stringValue == challengeURL }?[
                    member: "error"]
            let problem = error.flatMap { ACMEProblem(body: JSONWriter(style: .compact).bytes($0), status: 403) }
            throw ACMEFailure(
                .challenge,
                "\(domain): the CA could not validate \(checked): "
                    + (problem?.summary ?? "the authorization is \(final[member: "status"]?.stringValue ?? "?")"),
                url: challengeURL,
                hint: dns
                    ? "check that the TXT record is published where the CA's resolvers look (CAA records allowing the CA, "
                        + "the CNAME from _acme-challenge, the zone's name servers)"
                    : Self.validationHint(domain, problem), problem: problem)
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
