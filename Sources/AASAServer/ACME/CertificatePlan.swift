import AASACore
import Foundation

/// What ``ACMEManager`` is to do for one domain, from the certificates served now: leave the operator's
/// certificate alone, order one, or renew the server's own when it is due.
struct CertificatePlan {
    var status: DomainCertificateStatus
    var due: Date?
    /// The server's own certificate in service, to renew.
    var served: ACMEManager.ServedCertificate?
    var notAfter: Date?
    /// The server's certificate came from another directory (a trial against a staging CA): replace it now.
    var fromOtherCA = false
    /// The record of the server's certificate: who issued it, and when.
    var record: CertificateRecord?

    /// What to do for `domain`, whose certificate `storage` keeps: `own` is the certificate of its own folder (when
    /// it covers it), `covering` the certificate its handshakes get; `directories` are the CAs the server orders from
    /// now (the primary, and the fallback).
    static func make(
        _ domain: String, own: ACMEManager.ServedCertificate?, covering: ACMEManager.ServedCertificate?,
        storage: any ACMEStorage, directories: [String], now: Date
    ) -> CertificatePlan {
        let folder = storage.place(of: domain)
        if storage.hasOperatorCertificate(domain) {
            let usable = own.map { $0.notAfter > now } ?? false
            return CertificatePlan(
                status: DomainCertificateStatus(
                    source: .files, state: usable ? .valid : .failed, expiry: own?.notAfter,
                    lastError: usable
                        ? nil
                        : "\(domain): the operator's certificate in '\(folder)' "
                            + (own == nil
                                ? "does not serve this name (for other names, or failing to load: see its folder on /status)"
                                : "has expired")
                            + "; it is never replaced: renew it, or remove its files to let --acme manage the domain"),
                due: nil, notAfter: own?.notAfter)
        }
        if let covering, covering.folder != domain, storage.record(of: covering.folder) == nil,
            covering.notAfter > now
        {
            return CertificatePlan(
                status: DomainCertificateStatus(source: .files, state: .valid, expiry: covering.notAfter), due: nil,
                notAfter: covering.notAfter)
        }
        guard let own, own.notAfter > now else {
            return CertificatePlan(
                status: DomainCertificateStatus(source: .acme, state: .pending, expiry: nil, nextRenewal: now),
                due: now,
                notAfter: own?.notAfter)
        }
        let record = storage.record(of: domain)
        let fromOtherCA = record.map { !directories.contains($0.directoryURL) } ?? false
        var status = DomainCertificateStatus(
            source: .acme, state: .valid, expiry: own.notAfter, nextRenewal: fromOtherCA ? now : nil)
        status.issuer = record?.directoryURL
        return CertificatePlan(
            status: status, due: fromOtherCA ? now : own.notAfter, served: own, notAfter: own.notAfter,
            fromOtherCA: fromOtherCA, record: record)
    }
}
