import AASACore
import AASAOpenSSL
import Foundation

/// Where ACME keeps what must outlive one order and be shared by every replica that orders: the account, the
/// certificates the server obtained, the pacing of new orders (``PacingState``) and each name's failures
/// (``ACMEHistory``). ``FolderACMEStorage`` keeps them in the certificate folder for one server;
/// ``StoreACMEStorage`` in the store for a fleet, with a lock per certificate.
protocol ACMEStorage: Sendable {
    /// Where the state is, as messages name it (`certs/acme/`, `host:port/database`).
    var location: String { get }

    /// Where `domain`'s certificate is, as messages name it.
    func place(of domain: String) -> String

    /// The account whose key every order signs with, made and kept on first use: one per fleet, so any replica
    /// computes the http-01 answer of any order (RFC 8555 §8.3).
    func account(email: String?, agreesToTerms: Bool) throws(ACMEFailure) -> ACMEAccount

    /// Brings what this storage knows of the certificates up to date before a plan (the store: the rows changed since
    /// the last call); cheap when nothing changed.
    func refresh()
    /// The record of `domain`'s certificate when the server obtained it; `nil` otherwise.
    func record(of domain: String) -> CertificateRecord?
    /// Whether `domain` has a certificate of the operator's (files, or a pushed certificate, without a record): the
    /// server never replaces it.
    func hasOperatorCertificate(_ domain: String) -> Bool
    /// The leaf of the certificate the server obtained for `domain`, as stored now.
    func leaf(of domain: String) -> X509Certificate?
    /// Keeps a certificate just issued, with its key and record, where every replica serves it from.
    func save(chain: [UInt8], key: PrivateKey, domain: String, record: CertificateRecord) throws(ACMEFailure)

    /// Takes the lock on ordering `domain`; `nil` when another replica holds it. Released by ``ACMELease/release()``,
    /// or when the replica holding it dies.
    ///
    /// - Throws: a ``ACMEFailure/Kind/storage`` failure when the storage cannot be reached.
    func lock(_ domain: String) throws(ACMEFailure) -> ACMELease?

    /// Runs `body` on the pacing state (`nil` before the first order ever) and keeps what it leaves, as one step no
    /// other replica interleaves with.
    func pacing<Value>(_ body: (inout PacingState?) -> Value) throws(ACMEFailure) -> Value
    /// The pacing state as last read or written, without a round trip (`/status`); `nil` before the first.
    var lastPacing: PacingState? { get }

    /// `domain`'s failures, when it has any.
    func history(of domain: String) -> ACMEHistory?
    /// Keeps `history` for `domain` (`nil`: it has none any more, after a certificate was issued).
    func save(history: ACMEHistory?, of domain: String)
    /// The histories that hold dns-01 records not yet removed, by domain.
    func historiesWithChallengeRecords() -> [String: ACMEHistory]
}

/// The lock on ordering one certificate (``ACMEStorage/lock(_:)``).
final class ACMELease: Sendable {
    private let releasing: @Sendable () -> Void

    /// A lease that runs `release` once released.
    init(release: @escaping @Sendable () -> Void = {}) {
        releasing = release
    }

    /// Releases the lock.
    func release() { releasing() }
}
