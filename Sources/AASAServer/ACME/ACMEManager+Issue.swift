import AASACore
import AASAOpenSSL
import Foundation
import Logging
import Synchronization

/// One turn of a worker for a domain: the renewal window, the lock, the re-check, the turn under the order rate, the
/// order (at the fallback CA when the primary cannot issue), and keeping the certificate.
extension ACMEManager {
    /// What one turn of a worker did for a domain.
    enum Outcome {
        /// A certificate from the CA at `issuer` was kept; it is valid from `notBefore` to `notAfter`.
        case issued(notBefore: Date, notAfter: Date, issuer: String)
        /// Renewal information was asked (the CA's window, or `nil` when it offers none); the renewal is due then.
        case rescheduled(ClosedRange<Date>?, due: Date)
        /// The order waits for its turn: a token of the order rate, or the end of a pause.
        case waiting(until: Date)
        /// Another replica holds the domain's lock: it is ordering it now.
        case lockedElsewhere
        /// Another replica has just issued it (the certificate expiring then): the reload brings it.
        case issuedElsewhere(notAfter: Date?)
        /// The name failed recently (on any replica): its next attempt is due then.
        case deferred(ACMEHistory)
        /// The CA paused every new order (a rate limit) until then.
        case paused(until: Date, failure: ACMEFailure)
        /// The order failed; the history as kept.
        case failed(ACMEFailure, ACMEHistory)
        /// The storage could not be reached (the store is down): no failure of the domain's; it is tried again then.
        case storageUnavailable(until: Date, ACMEFailure)
        /// dns-01 cannot be answered yet (the tenant's CNAME is missing, the lookups failed): no order was placed
        /// and nothing counts as a failure; the delegation is looked up again then.
        case awaitingDelegation(DNSDelegation, until: Date)
    }

    /// The longest wait between two lookups of a delegation that is not usable.
    static let longestDelegationWait: TimeInterval = 3600

    /// The wait before the next lookup of a delegation that was unusable `waits` times in a row: `--acme-retry-min`,
    /// doubled each time up to an hour, so domains whose owners never add their CNAME cost a lookup an hour each.
    static func delegationWait(after waits: Int, minimumRetry: Duration) -> TimeInterval {
        min(minimumRetry.timeInterval * Double(1 << min(waits, 20)), longestDelegationWait)
    }

    /// How long a domain waits when the storage could not be reached before its turn.
    static let storageRetry: TimeInterval = 30

    /// Runs one turn for `domain` at `now`; an `explicit` one (`certs acme`) does not wait for the failure schedule,
    /// only for the CA's limit on failed validations.
    func turn(_ domain: String, now: Date, explicit: Bool = false) -> Outcome {
        do {
            return try renewOrOrder(domain, now: now, explicit: explicit)
        } catch {
            return .failed(error, recordFailure(error, of: domain, now: now))
        }
    }

    private func renewOrOrder(_ domain: String, now: Date, explicit: Bool) throws(ACMEFailure) -> Outcome {
        let entry = queue.reading { $0[domain] }
        var replacing: X509Certificate?
        if let entry, let due = entry.due, entry.notAfter != nil, !entry.forced {
            replacing = storage.leaf(of: domain)
            if let nextCheck = entry.nextCheck, entry.failures == 0, nextCheck <= now || due <= now,
                let leaf = replacing
            {
                // The CA's window wins; a CA without renewal information (or that cannot answer now) leaves the
                // lifetime rule's date.
                let window = renewalWindow(of: domain, leaf, now: now)
                let next =
                    window.map {
                        schedule.renewal(
                            domain: domain, notBefore: leaf.notBefore, notAfter: leaf.notAfter, suggested: $0,
                            issuedHere: entry.issuedHere)
                    } ?? due
                if next > now { return .rescheduled(window, due: next) }
            }
        }
        if let dns, dns.answers(domain) {
            let delegation = dns.delegation(of: domain)
            queue.withItems {
                $0[domain]?.delegation = delegation
                if delegation.isUsable { $0[domain]?.delegationWaits = 0 }
            }
            guard delegation.isUsable else {
                return .awaitingDelegation(
                    delegation,
                    until: now.addingTimeInterval(
                        Self.delegationWait(after: entry?.delegationWaits ?? 0, minimumRetry: settings.minimumRetry)))
            }
        }
        let taken: ACMELease?
        do {
            taken = try storage.lock(domain)
        } catch {
            return .storageUnavailable(until: now.addingTimeInterval(Self.storageRetry), error)
        }
        guard let lease = taken else { return .lockedElsewhere }
        defer { lease.release() }
        // Another replica may have issued or failed it since this one planned it.
        storage.refresh()
        if let record = storage.record(of: domain), record.issued != entry?.recordIssued,
            record.issued > now.addingTimeInterval(-86_400)
        {
            return .issuedElsewhere(notAfter: storage.leaf(of: domain)?.notAfter)
        }
        if let history = storage.history(of: domain),
            explicit ? history.validationAllowed(now: now) > now : (history.nextAttempt ?? now) > now
        {
            return .deferred(history)
        }
        let exempt = entry?.isExemptRenewal(now: now) ?? false
        var useFallback = false
        if !exempt {
            let wait: Date?
            do {
                wait = try storage.pacing { state in
                    var current = state ?? PacingState(rate: settings.orderRate, now: now)
                    defer { state = current }
                    return pacer.take(&current, now: now)
                }
            } catch {
                return .storageUnavailable(until: now.addingTimeInterval(Self.storageRetry), error)
            }
            if let wait {
                // A pause longer than the fallback waits for sends the order to the fallback CA instead.
                let paused = storage.lastPacing?.pausedUntil
                guard let fallback = settings.fallback, self.fallback != nil, let paused, paused == wait,
                    paused.timeIntervalSince(now) > fallback.after.timeInterval
                else { return .waiting(until: wait) }
                useFallback = true
            }
        }
        let key: PrivateKey
        do {
            key = try PrivateKey.generate(.ecdsaP256)
        } catch {
            throw ACMEFailure(.storage, "\(domain): could not generate a key: \(error)", hint: "report this")
        }
        let names = orderedNames(domain)
        var ordering = useFallback ? fallback! : client
        logger.info(
            "ACME: ordering a certificate", metadata: ["domain": "\(domain)", "ca": "\(ordering.directoryURL)"])
        let chain: [UInt8]
        do {
            chain = try ordering.obtainCertificate(
                for: names, key: key, challenges: responder, dns: recordedDNS,
                // Only the CA that issued a certificate knows it to replace.
                replacing: entry?.status.issuer.map { $0 == ordering.directoryURL } ?? !useFallback ? replacing : nil)
        } catch {
            if let pause = pauseIfRateLimited(error, now: now),
                !(fallback != nil && !useFallback && longPause(pause, now))
            {
                return .paused(until: pause, failure: error.about(domain))
            }
            guard let fallback, !useFallback, error.isCAsOwn || pauseIfRateLimited(error, now: now) != nil else {
                throw error.about(domain)
            }
            logger.warning(
                "ACME: the CA could not issue; ordering from the fallback CA",
                metadata: ["domain": "\(domain)", "reason": "\(error.about(domain))", "ca": "\(fallback.directoryURL)"])
            ordering = fallback
            do {
                chain = try fallback.obtainCertificate(for: names, key: key, challenges: responder, dns: recordedDNS)
            } catch {
                throw error.about(domain)
            }
        }
        let (notBefore, notAfter) = try Self.check(chain: chain, key: key, names: names)
        try storage.save(
            chain: chain, key: key, domain: domain,
            record: CertificateRecord(directoryURL: ordering.directoryURL, issued: Date(), names: names))
        // The failures are over; a dns-01 record that could not be removed stays listed for the next start.
        var left = ACMEHistory()
        left.challengeRecords = storage.history(of: domain)?.challengeRecords ?? []
        storage.save(history: left.challengeRecords.isEmpty ? nil : left, of: domain)
        return .issued(notBefore: notBefore, notAfter: notAfter, issuer: ordering.directoryURL)
    }

    /// The renewal window the CA suggests for `leaf`, as the fleet last asked it: asked again (and kept for the
    /// fleet) once it is ``renewalInfoInterval`` old or was asked for another certificate; `nil` when the CA offers
    /// none or cannot answer now.
    private func renewalWindow(of domain: String, _ leaf: X509Certificate, now: Date) -> ClosedRange<Date>? {
        var history = storage.history(of: domain) ?? ACMEHistory()
        let certificate = ACMEClient.certID(of: leaf)
        if let checked = history.windowCheckedAt, history.windowCertificate == certificate,
            now.timeIntervalSince(checked) < Self.renewalInfoInterval
        {
            return history.renewalWindow
        }
        do {
            history.renewalWindow = try client.renewalWindow(for: leaf)
        } catch {
            return nil
        }
        history.windowCertificate = certificate
        history.windowCheckedAt = now
        storage.save(history: history, of: domain)
        return history.renewalWindow
    }

    /// Whether a pause until `until` is longer than the fallback waits for.
    private func longPause(_ until: Date, _ now: Date) -> Bool {
        guard let fallback = settings.fallback else { return false }
        return until.timeIntervalSince(now) > fallback.after.timeInterval
    }

    /// Pauses every new order of the fleet when `failure` is the CA's rate limit (a `rateLimited` problem, or `429`
    /// or `503` with `Retry-After`), and returns until when.
    private func pauseIfRateLimited(_ failure: ACMEFailure, now: Date) -> Date? {
        let status = failure.problem?.status
        guard failure.problem?.kind == "rateLimited" || status == 429 || (status == 503 && failure.retryAfter != nil)
        else { return nil }
        let until = failure.retryAfter ?? now.addingTimeInterval(Self.defaultPause)
        let reason = failure.message + (failure.url.map { " (\($0))" } ?? "")
        _ = try? storage.pacing { state in
            var current = state ?? PacingState(rate: settings.orderRate, now: now)
            pacer.pause(&current, until: until, reason: reason, now: now)
            state = current
        }
        logger.warning(
            "ACME: the CA's rate limit pauses every new order",
            metadata: ["until": "\(ISO8601DateFormatter().string(from: until))", "reason": "\(reason)"])
        return until
    }

    /// Keeps a failure in the name's history (shared by the fleet) and returns it: the next attempt after 1 minute,
    /// 10 minutes, 100 minutes, then daily, and never a sixth failed validation within the hour.
    private func recordFailure(_ failure: ACMEFailure, of domain: String, now: Date) -> ACMEHistory {
        var history = storage.history(of: domain) ?? ACMEHistory()
        history.failures += 1
        history.failedValidations = history.recentValidations(now: now)
        if failure.isValidation { history.failedValidations.append(now) }
        let next = schedule.retry(failures: history.failures, now: now, retryAfter: failure.retryAfter)
        history.nextAttempt = max(next, history.validationAllowed(now: now))
        history.lastError = failure.about(domain).description
        history.lastProblem = failure.problem?.document
        storage.save(history: history, of: domain)
        return history
    }

    /// Checks the downloaded `chain` against `key` and the `names` ordered (the first is the certificate's folder);
    /// returns its validity.
    static func check(chain: [UInt8], key: PrivateKey, names: [String]) throws(ACMEFailure) -> (
        notBefore: Date, notAfter: Date
    ) {
        let domain = names[0]
        let leaf: X509Certificate
        do {
            leaf = try X509Certificate(pemEncoded: chain)
            try key.checkMatches(leaf)
        } catch {
            throw ACMEFailure(
                .protocolViolation, "\(domain): the CA's certificate cannot be used: \(error)",
                hint: "the server orders again later")
        }
        let listed = Set(leaf.subjectAlternativeNames.dnsNames.map { $0.lowercased() })
        guard leaf.covers(hostname: domain), names.allSatisfy({ !$0.hasPrefix("*.") || listed.contains($0) }) else {
            throw ACMEFailure(
                .protocolViolation,
                "\(domain): the CA's certificate does not cover \(names.joined(separator: " and "))",
                hint: "the server orders again later")
        }
        return (leaf.notBefore, leaf.notAfter)
    }

    /// Records what a turn did in the domain's entry, and places the queue again.
    func finish(_ domain: String, _ outcome: Outcome, now: Date) {
        var issuedDomain = false
        queue.withItems { entries in
            guard var entry = entries[domain] else { return }
            entry.inProgress = false
            switch outcome {
            case .issued(let notBefore, let notAfter, let issuer):
                orders.withLock { $0[.valid, default: 0] += 1 }
                if dns?.answers(domain) == true { dnsOrders.withLock { $0[.valid, default: 0] += 1 } }
                entry.failures = 0
                entry.forced = false
                entry.issuedHere = now
                entry.notAfter = notAfter
                entry.suggested = nil
                entry.nextCheck = now.addingTimeInterval(Self.renewalInfoInterval)
                entry.due = schedule.renewal(
                    domain: domain, notBefore: notBefore, notAfter: notAfter, issuedHere: now)
                // `valid` once a reload serves it (``update(domains:certificates:now:)``); until then the state
                // stays pending or renewing, and the planning waits for it.
                entry.awaitingReload = notAfter
                entry.status.nextRenewal = entry.due
                entry.status.issuer = issuer
                entry.status.lastError = nil
                entry.status.lastProblem = nil
                issuedDomain = true
            case .rescheduled(let window, let due):
                entry.suggested = window
                entry.nextCheck = now.addingTimeInterval(Self.renewalInfoInterval)
                entry.due = due
                entry.status.state = .valid
                entry.status.nextRenewal = entry.due
            case .waiting:
                // The queue gives it its slot again below.
                entry.status.state = entry.status.expiry == nil ? .pending : .renewing
            case .lockedElsewhere:
                entry.due = now.addingTimeInterval(Self.lockedElsewhereRetry)
                entry.status.nextRenewal = entry.due
            case .issuedElsewhere(let notAfter):
                entry.issuedHere = now
                entry.awaitingReload = notAfter ?? now
                entry.failures = 0
            case .deferred(let history):
                entry.failures = history.failures
                entry.due = history.nextAttempt
                entry.status.state = .failed
                entry.status.nextRenewal = history.nextAttempt
                entry.status.lastError = history.lastError
                entry.status.lastProblem = history.lastProblem
            case .awaitingDelegation(let delegation, let until):
                entry.due = until
                entry.delegation = delegation
                entry.delegationWaits += 1
                entry.status.state = entry.status.expiry == nil ? .pending : .renewing
                entry.status.nextRenewal = until
                entry.status.lastError =
                    "\(domain): dns-01 cannot be answered: \(delegation.message); looked up again at "
                    + ISO8601DateFormatter().string(from: until) + "; fix: \(delegation.fix)"
            case .storageUnavailable(let until, let failure):
                entry.due = until
                entry.status.nextRenewal = until
                entry.status.lastError = failure.description
            case .paused(let until, let failure):
                entry.due = until
                entry.status.state = entry.status.expiry == nil ? .pending : .renewing
                entry.status.nextRenewal = until
                entry.status.lastError = failure.description
                entry.status.lastProblem = failure.problem?.document
            case .failed(let failure, let history):
                orders.withLock { $0[.failed, default: 0] += 1 }
                if dns?.answers(domain) == true { dnsOrders.withLock { $0[.failed, default: 0] += 1 } }
                entry.failures = history.failures
                entry.due = history.nextAttempt
                entry.status.state = .failed
                entry.status.nextRenewal = entry.due
                entry.status.lastError = failure.about(domain).description
                entry.status.lastProblem = failure.problem?.document
                logger.error(
                    "ACME: no certificate",
                    metadata: [
                        "domain": "\(domain)", "reason": "\(failure.about(domain))",
                        "retry": "\(entry.due.map { ISO8601DateFormatter().string(from: $0) } ?? "")",
                    ])
            }
            entries[domain] = entry
            lineUp(&entries, now: now)
        }
        if issuedDomain {
            logger.info("ACME: certificate issued", metadata: ["domain": "\(domain)"])
            issued(domain)
        }
    }
}

extension ACMEFailure {
    /// Whether the CA could not validate the name (its DNS, port 80, a redirect): the tenant's to fix, never a reason
    /// to switch CA.
    var isValidation: Bool {
        if kind == .challenge { return true }
        return ["connection", "dns", "unauthorized", "incorrectResponse", "caa", "tls"].contains(problem?.kind ?? "")
    }

    /// Whether the failure is the CA's own: a server error or the CA unreachable, which the fallback CA may not share.
    var isCAsOwn: Bool {
        if kind == .network { return true }
        if problem?.kind == "serverInternal" { return true }
        return (problem?.status ?? 0) >= 500 && problem?.kind != "rateLimited"
    }
}
