public import AASACore
public import Foundation

extension ServerStatus {
    /// What `/status` adds to the status of the last load at request time.
    public struct LiveView: Sendable {
        /// ACME's certificate status of each domain, replacing the load's.
        public var certificates: [String: DomainCertificateStatus] = [:]
        /// ACME's figures (`serve --acme`): the `acme` member, its queue and order counts; `nil` without ACME.
        public var acme: ACMEFigures?
        /// The background CDN check's latest observations: each checked domain's `cdn` member.
        public var cdn: [String: (apple: CDNObservation?, google: CDNObservation?)] = [:]
        /// The latest starts and reloads, newest first: the `reloads` member.
        public var reloads: [ReloadRecord] = []
        /// The apps each domain's served files name (``PublishedDomain/servedApps``), asked only for the domains
        /// listed: each one's `services` member.
        public var apps: @Sendable (String) -> [(service: String, apps: [String])] = { _ in [] }
        /// The credential endpoints each domain serves (``PublishedDomain/credentialEndpoints``), asked only for
        /// the domains listed: each one's `endpoints` member.
        public var endpoints: @Sendable (String) -> CredentialEndpoints? = { _ in nil }
        /// What the replica knows of its store (`serve --store`): the `store` member; `nil` without a store.
        public var store: StoreStatus?
        /// The time certificate expiry is counted from.
        public var now = Date()

        /// Nothing live: the status of the load alone.
        public init() {}
    }

    /// The `/status` document for `query`: pretty-printed JSON, dates in ISO 8601 UTC.
    ///
    /// Members: `started`, `lastReload`, `reloads` (the history, newest first), `summary` (domains by state,
    /// certificates expiring within ``CertificateCheck/expiryWarningDays`` days or failing), `acme` (with
    /// `--acme`: the queue of new orders and the order counts), `page` (with a
    /// paging query), `domains` (in the query's order) and `certificates` (all, or with a paging query the folders
    /// the page's domains use). docs/operations.md describes every member.
    public func json(query: StatusQuery = .all, live: LiveView = LiveView()) -> [UInt8] {
        // One formatter for the whole document, and each distinct date formatted once: with thousands of
        // domains, a formatter per date cost more than everything else in the document.
        let formatter = Self.makeFormatter()
        var formatted: [Date: String] = [:]
        func date(_ value: Date?) -> JSONValue {
            guard let value else { return .null }
            if let text = formatted[value] { return .string(text) }
            let text = formatter.string(from: value)
            formatted[value] = text
            return .string(text)
        }
        let (page, matching) = query.select(domains, certificates: live.certificates)
        let usedFolders = Set(page.compactMap(\.certificateFolder))
        let listedCertificates = query.isPaged ? certificates.filter { usedFolders.contains($0.folder) } : certificates
        var members: [(String, JSONValue)] = [
            ("started", date(started)),
            ("lastReload", lastReload.jsonValue(date: date)),
            ("reloads", .array(live.reloads.map { JSONNode($0.jsonValue(date: date)) })),
            ("summary", summary(at: live.now)),
        ]
        if let shard {
            members.append(
                ("shard", .members([("index", .number(Double(shard.index))), ("count", .number(Double(shard.count)))])))
        }
        if let store = live.store { members.append(("store", store.jsonValue(date: date))) }
        if let acme = live.acme { members.append(("acme", acme.jsonValue(date: date))) }
        if query.isPaged {
            members.append(
                (
                    "page",
                    .members([
                        ("offset", .number(Double(query.offset))),
                        ("limit", query.limit.map { .number(Double($0)) } ?? .null),
                        ("matching", .number(Double(matching))), ("total", .number(Double(domains.count))),
                    ])
                ))
        }
        members += [
            ("domains", .members(page.map { ($0.domain, $0.jsonValue(live: live, date: date)) })),
            ("certificates", .members(listedCertificates.map { ($0.folder, $0.jsonValue(date: date)) })),
        ]
        return JSONWriter(style: .pretty).bytes(.members(members))
    }

    /// Domains by state, and certificates that need attention: serving a leaf that expires within
    /// ``CertificateCheck/expiryWarningDays`` days (or has expired), or whose latest files failed to load.
    private func summary(at now: Date) -> JSONValue {
        var states = Dictionary(uniqueKeysWithValues: DomainState.State.allCases.map { ($0, 0) })
        for domain in domains { states[domain.state, default: 0] += 1 }
        let soon = now.addingTimeInterval(Double(CertificateCheck.expiryWarningDays) * 86_400)
        return .members([
            ("domains", .number(Double(domains.count))),
            ("states", .members(DomainState.State.allCases.map { ($0.rawValue, .number(Double(states[$0] ?? 0))) })),
            (
                "certificatesExpiringSoon",
                .number(Double(certificates.count { $0.serving && ($0.notAfter.map { $0 < soon } ?? false) }))
            ),
            ("certificateErrors", .number(Double(certificates.count { !$0.errors.isEmpty }))),
        ])
    }
}

extension ServerStatus.DomainState {
    /// The domain's member of `/status`' `domains`.
    func jsonValue(live: ServerStatus.LiveView, date: (Date?) -> JSONValue) -> JSONValue {
        var members: [(String, JSONValue)] = [
            ("state", .string(state.rawValue)),
            ("published", .bool(published)),
            ("lastGoodLoad", date(lastGoodLoad)),
            ("errors", .strings(errors.map(\.description))),
        ]
        if let removedSince { members.append(("removedSince", date(removedSince))) }
        if let lastChange {
            members.append(
                (
                    "lastChange",
                    .members(
                        [("time", date(lastChange.time)), ("summary", .string(lastChange.diff.summary))]
                            + lastChange.diff.members(limit: DomainChange.listed))
                ))
        }
        if let certificate = live.certificates[domain] ?? certificate {
            members.append(("certificate", certificate.jsonValue(date: date)))
        }
        if let certificateFolder { members.append(("certificateFolder", .string(certificateFolder))) }
        let apps = live.apps(domain)
        if !apps.isEmpty { members.append(("services", .members(apps.map { ($0.service, .strings($0.apps)) }))) }
        if let endpoints = live.endpoints(domain) { members.append(("endpoints", endpoints.jsonValue)) }
        if let pair = live.cdn[domain] {
            members.append(
                (
                    "cdn",
                    .members(
                        [("apple", pair.apple?.jsonValue(date: date) ?? .null)]
                            + (pair.google.map { [("google", $0.jsonValue(date: date))] } ?? []))
                ))
        }
        return .members(members)
    }
}

extension DomainCertificateStatus {
    /// The domain's `certificate` member of `/status`.
    fileprivate func jsonValue(date: (Date?) -> JSONValue) -> JSONValue {
        .members([
            ("source", .string(source.rawValue)),
            ("state", .string(state.rawValue)),
            ("expiry", date(expiry)),
            ("nextRenewal", date(nextRenewal)),
            ("lastError", lastError.map { .string($0) } ?? .null),
            ("lastProblem", lastProblem.map { .string($0) } ?? .null),
            ("queuePosition", queuePosition.map { .number(Double($0)) } ?? .null),
            ("eta", date(eta)),
            ("issuer", issuer.map { .string($0) } ?? .null),
            ("challenge", challenge.map { .string($0) } ?? .null),
            ("delegation", delegation?.jsonValue ?? .null),
            ("wildcard", wildcard.map { .string($0) } ?? .null),
        ])
    }
}

extension DNSDelegation {
    /// A dns-01 domain's `certificate.delegation` member of `/status`.
    fileprivate var jsonValue: JSONValue {
        .members([
            ("state", .string(state.rawValue)),
            ("name", .string(name)),
            ("target", .string(target)),
            ("zone", zone.map { .string($0) } ?? .null),
            ("record", record.map { .string($0) } ?? .null),
            ("updatable", updatable.map { .bool($0) } ?? .null),
            ("message", .string(message)),
        ])
    }
}

extension ACMEFigures {
    /// `/status`' `acme`: `queue` (``ACMEQueueStatus``) and `orders`, the orders finished by result.
    fileprivate func jsonValue(date: (Date?) -> JSONValue) -> JSONValue {
        .members([
            (
                "queue",
                .members([
                    ("pending", .number(Double(queue.pending))),
                    ("ratePerHour", queue.ratePerHour.map { .number($0) } ?? .null),
                    ("pausedUntil", date(queue.pausedUntil)),
                    ("pauseReason", queue.pauseReason.map { .string($0) } ?? .null),
                    ("etaSeconds", queue.etaSeconds.map { .number(Double($0)) } ?? .null),
                ])
            ),
            (
                "orders",
                .members(ACMEOrderResult.allCases.map { ($0.rawValue, .number(Double(orders[$0.rawValue] ?? 0))) })
            ),
        ])
    }
}

extension ServerStatus.CertificateState {
    /// The folder's member of `/status`' `certificates`.
    fileprivate func jsonValue(date: (Date?) -> JSONValue) -> JSONValue {
        .members([
            ("serving", .bool(serving)),
            ("names", .strings(names)),
            ("fingerprint", fingerprint.map { .string($0) } ?? .null),
            ("notAfter", date(notAfter)),
            ("lastGoodLoad", date(lastGoodLoad)),
            ("errors", .strings(errors.map(\.description))),
            ("warnings", .strings(warnings.map(\.description))),
        ])
    }
}

extension ServerStatus.LoadOutcome {
    /// `/status`' `lastReload`.
    fileprivate func jsonValue(date: (Date?) -> JSONValue) -> JSONValue {
        .members([
            ("time", date(time)),
            ("trigger", .string(trigger.rawValue)),
            ("result", .string(result.rawValue)),
            ("errors", .strings(errors.map(\.description))),
            ("warnings", .strings(warnings.map(\.description))),
        ])
    }
}

extension ServerStatus.ReloadRecord {
    /// One entry of `/status`' `reloads`.
    fileprivate func jsonValue(date: (Date?) -> JSONValue) -> JSONValue {
        .members([
            ("time", date(time)),
            ("trigger", .string(trigger.rawValue)),
            ("result", .string(result.rawValue)),
            ("seconds", .number((seconds * 1000).rounded() / 1000)),
            ("errors", .number(Double(errors))),
            ("warnings", .number(Double(warnings))),
            ("changed", .strings(changed)),
        ])
    }
}
