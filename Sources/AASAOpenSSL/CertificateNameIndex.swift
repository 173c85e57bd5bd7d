/// Finds which of many certificates covers a host name with dictionary lookups, instead of asking each
/// certificate in turn.
///
/// Answers exactly as ``X509Certificate/covers(hostname:)`` would, certificate by certificate (RFC 6125
/// §6.4: exact DNS names, one-label `*.` wildcards, IP literals against IP entries only), but reads each
/// certificate's subjectAltName once, when the index is built. With thousands of certificates and
/// domains, asking every certificate about every domain decoded the extension millions of times.
public struct CertificateNameIndex: Sendable {
    /// Canonical DNS name (no wildcard) → first certificate listing it.
    private var exact: [String: Int] = [:]
    /// Parent of a one-label wildcard (`example.com` for `*.example.com`) → first certificate listing it.
    private var wildcard: [String: Int] = [:]
    /// Canonical IP literal → first certificate listing it.
    private var addresses: [String: Int] = [:]

    /// Indexes `certificates`; positions in the array are what ``firstIndex(covering:)`` returns.
    public init(_ certificates: [X509Certificate]) {
        self.init(subjectAlternativeNames: certificates.map(\.subjectAlternativeNames))
    }

    /// Indexes certificates by their subjectAltName entries (``X509Certificate/subjectAlternativeNames``), for a
    /// caller that keeps those instead of the parsed certificates.
    public init(subjectAlternativeNames certificates: [SubjectAlternativeNames]) {
        for (index, certificate) in certificates.enumerated() {
            for address in certificate.ipAddresses {
                addresses[address] = addresses[address] ?? index
            }
            for pattern in certificate.dnsNames {
                // The same acceptance rules as HostnamePattern.matches(pattern:hostname:).
                let pattern = HostnamePattern.canonical(pattern)
                guard !pattern.isEmpty else { continue }
                if pattern.hasPrefix("*.") {
                    let suffix = pattern.dropFirst(2)
                    guard suffix.contains("."), !suffix.contains("*") else { continue }
                    wildcard[String(suffix)] = wildcard[String(suffix)] ?? index
                } else if !pattern.contains("*") {
                    exact[pattern] = exact[pattern] ?? index
                }
            }
        }
    }

    /// The position of the first certificate that covers `hostname`, or `nil` when none does.
    public func firstIndex(covering hostname: String) -> Int? {
        if let address = IPAddressText.normalized(hostname) {
            return addresses[address]
        }
        let host = HostnamePattern.canonical(hostname)
        guard !host.isEmpty else { return nil }
        var found = exact[host]
        if let firstDot = host.firstIndex(of: "."), firstDot != host.startIndex,
            let covering = wildcard[String(host[host.index(after: firstDot)...])]
        {
            found = min(found ?? covering, covering)
        }
        return found
    }
}
