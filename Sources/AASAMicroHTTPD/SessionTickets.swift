internal import CGnuTLS
internal import CShims.MicroHTTPD
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// TLS 1.3 session resumption by tickets (RFC 8446 §4.6.1): a client that reconnects (Apple's CDN and devices
/// fetching a domain's files again) resumes with a pre-shared key instead of a full handshake, skipping the
/// certificate and its signature.
///
/// Forward secrecy within the rotation period: the ticket key is a fresh random key for each period of
/// ``lifetime``, erased when the next one replaces it, and tickets are issued for ``lifetime`` at most. A ticket
/// resumes only during the period its key was made in; once the key is erased, nobody who later obtains the
/// server's memory can open the tickets (nor the sessions they resume) of earlier periods. GnuTLS derives each
/// connection's ticket key from the key it is given and the time (`lib/stek.c`: SHA3-512 of the time step and
/// the key), so the derivation alone would not give this: a key kept forever derives every past period's key.
///
/// The key is handed to each session when its connection is accepted (`gnutls_session_ticket_enable_server`
/// copies it), so a rotation needs no lock on the handshake path beyond reading the current key.
final class SessionTickets: Sendable {
    /// How long a ticket key is used, and the longest a ticket is valid.
    let lifetime: Duration
    /// GnuTLS's ticket master key length (`TICKET_MASTER_KEY_SIZE`).
    private static let keySize = 64
    private let current = Mutex<Key?>(nil)

    /// One ticket key, erased when released.
    final class Key: @unchecked Sendable {
        let bytes: UnsafeMutablePointer<UInt8>
        let created: ContinuousClock.Instant

        /// A new random key, or `nil` when GnuTLS's random generator fails.
        init?(at now: ContinuousClock.Instant) {
            bytes = .allocate(capacity: SessionTickets.keySize)
            created = now
            guard gnutls_rnd(GNUTLS_RND_KEY, bytes, SessionTickets.keySize) == 0 else {
                bytes.deallocate()
                return nil
            }
        }

        deinit {
            gnutls_memset(bytes, 0, SessionTickets.keySize)
            bytes.deallocate()
        }
    }

    /// Tickets with keys replaced every `lifetime` (at least a minute, at most GnuTLS's and RFC 8446's
    /// seven days).
    init(lifetime: Duration) {
        self.lifetime = max(.seconds(60), min(lifetime, .seconds(7 * 86_400)))
    }

    /// Lets the TLS session of a newly accepted `connection` issue and accept tickets under the current key,
    /// making a new key first when the current one's period is over.
    func enable(on connection: OpaquePointer) {
        guard let info = cshims_mhd_get_connection_info(connection, .CONNECTION_INFO_GNUTLS_SESSION),
            let pointer = info.pointee.tls_session
        else { return }
        let session = OpaquePointer(pointer)
        guard let key = key(at: .now) else { return }
        var datum = gnutls_datum_t(data: key.bytes, size: UInt32(Self.keySize))
        guard gnutls_session_ticket_enable_server(session, &datum) == 0 else { return }
        gnutls_db_set_cache_expiration(session, Int32(lifetime.components.seconds))
    }

    /// The key for connections accepted at `now`: the current one, or a new one once its period is over. A
    /// replaced key is erased once no connection being accepted still holds it.
    func key(at now: ContinuousClock.Instant) -> Key? {
        current.withLock { current in
            if let key = current, now - key.created < lifetime { return key }
            current = Key(at: now)
            return current
        }
    }
}
