/// TLS settings of a listener: the certificates to choose from by SNI, and the allowed protocol versions and ciphers.
public struct TLSConfiguration: Sendable {
    /// TLS 1.3 and 1.2 only, AEAD ciphers only, forward-secret ECDHE key exchange, server preference.
    ///
    /// A GnuTLS priority string (checked with `gnutls-cli --priority ... -l` on GnuTLS 3.7.9). TLS 1.2
    /// stays for older clients; TLS 1.0/1.1, CBC and static-RSA key exchange are gone. Key-exchange groups are
    /// X25519, P-256, P-384 in that order: SECURE256 alone puts P-384, P-521 and FFDHE-8192 first, and with
    /// server precedence a TLS 1.3 client offering an X25519 key share (OpenSSL's default) got a
    /// HelloRetryRequest and a P-384 exchange — new connections ran at a tenth of nginx's rate.
    public static let modernPriorities =
        "SECURE256:+SECURE128:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-128-GCM:+AES-256-GCM:"
        + "+CHACHA20-POLY1305:-KX-ALL:+ECDHE-ECDSA:+ECDHE-RSA:-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1:"
        + "+GROUP-SECP384R1:%SERVER_PRECEDENCE"

    /// Certificates to serve, chosen per connection from the client's SNI.
    public var certificates: CertificateTable
    /// GnuTLS priority string; see ``modernPriorities``.
    public var priorities: String
    /// TLS 1.3 session tickets: how long each ticket key is used and each ticket valid (``SessionTickets``);
    /// `nil`: no tickets, every connection makes a full handshake.
    public var sessionTicketLifetime: Duration? = .seconds(3600)

    /// Creates TLS settings.
    public init(certificates: CertificateTable, priorities: String = TLSConfiguration.modernPriorities) {
        self.certificates = certificates
        self.priorities = priorities
    }
}
