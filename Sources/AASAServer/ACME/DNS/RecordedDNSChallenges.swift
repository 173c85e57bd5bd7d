import AASACore
import Logging

/// ``DNSChallenges`` with each record kept in its domain's ``ACMEHistory`` (the folder's `orders.json` or the store's
/// `acme_orders`) from just before it is written until it is removed: a record a crash or a failed removal left
/// behind is removed at the next start (``removeLeftovers()``), by whichever replica starts.
struct RecordedDNSChallenges: DNSChallengeResponder {
    let challenges: DNSChallenges
    let storage: any ACMEStorage
    let logger: Logger

    func answers(_ domain: String) -> Bool { challenges.answers(domain) }

    func present(domain: String, value: String) throws(ACMEFailure) -> DNSChallengeRecord {
        let record = try challenges.prepare(domain: domain, value: value)
        keep(record)
        do {
            try challenges.publish(record)
        } catch {
            // publish removed it again when it could; a record never written removes cleanly too.
            if (try? challenges.remove(record)) != nil { forget(record) }
            throw error
        }
        return record
    }

    func cleanup(_ record: DNSChallengeRecord) {
        if (try? challenges.remove(record)) != nil { forget(record) }
    }

    /// Removes the records earlier runs left (a crash mid-order, a removal that failed), each under its domain's
    /// order lock, so a record another replica's order is using now stays; returns how many were removed.
    /// `stopping` ends the sweep between two domains (the server is stopping).
    @discardableResult
    func removeLeftovers(stopping: () -> Bool = { false }) -> Int {
        var removed = 0
        for (domain, history) in storage.historiesWithChallengeRecords().sorted(by: { $0.key < $1.key }) {
            if stopping() { break }
            guard let lease = try? storage.lock(domain) else { continue }
            defer { lease.release() }
            // Read again under the lock: the records are what no order holds now.
            for record in storage.history(of: domain)?.challengeRecords ?? history.challengeRecords {
                guard (try? challenges.remove(record)) != nil else { continue }
                forget(record)
                removed += 1
                logger.info(
                    "ACME: removed a dns-01 record an earlier run left",
                    metadata: ["domain": "\(domain)", "name": "\(record.name)"])
            }
        }
        return removed
    }

    private func keep(_ record: DNSChallengeRecord) {
        var history = storage.history(of: record.domain) ?? ACMEHistory()
        history.challengeRecords.append(record)
        storage.save(history: history, of: record.domain)
    }

    private func forget(_ record: DNSChallengeRecord) {
        guard var history = storage.history(of: record.domain) else { return }
        history.challengeRecords.removeAll { $0 == record }
        storage.save(history: history == ACMEHistory() ? nil : history, of: record.domain)
    }
}
