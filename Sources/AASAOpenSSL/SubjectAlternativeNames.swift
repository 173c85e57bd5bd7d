/// The names a certificate's subjectAltName extension lists, in certificate order.
public struct SubjectAlternativeNames: Sendable, Hashable {
    /// DNS names, wildcards kept as `*.example.com` (``X509Certificate/dnsNames``).
    public var dnsNames: [String] = []
    /// IP addresses as text (``X509Certificate/ipAddresses``).
    public var ipAddresses: [String] = []

    /// Creates a list of names.
    public init(dnsNames: [String] = [], ipAddresses: [String] = []) {
        self.dnsNames = dnsNames
        self.ipAddresses = ipAddresses
    }

    /// Whether a certificate with these names is valid for `hostname` (RFC 6125 §6.4).
    ///
    /// DNS names compare case-insensitively, ignoring one trailing dot. A wildcard is honoured only as
    /// the whole left-most label (`*.example.com`) and matches exactly one label: not the apex
    /// `example.com`, not `a.b.example.com`. IP literals match only IP entries. The subject CN is not
    /// consulted: RFC 6125 §6.4.4 forbids it when SANs exist, and Apple clients ignore it.
    public func covers(hostname: String) -> Bool {
        if let address = IPAddressText.normalized(hostname) {
            return ipAddresses.contains(address)
        }
        return dnsNames.contains { HostnamePattern.matches(pattern: $0, hostname: hostname) }
    }
}
