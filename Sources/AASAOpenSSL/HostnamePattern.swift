/// RFC 6125 §6.4 matching of a certificate DNS name (possibly `*.example.com`) against a host name.
enum HostnamePattern {
    /// Whether `pattern` (a SAN dNSName) matches `hostname`.
    ///
    /// Case-insensitive (DNS is, RFC 4343), one trailing dot ignored on either side. A wildcard is
    /// accepted only as the entire left-most label and must be followed by at least two labels
    /// (`*.com` is refused, as CA/B Forum rules do); it stands for exactly one non-empty label.
    static func matches(pattern: String, hostname: String) -> Bool {
        let pattern = canonical(pattern)
        let host = canonical(hostname)
        guard !pattern.isEmpty, !host.isEmpty else { return false }
        guard pattern.hasPrefix("*.") else {
            return !pattern.contains("*") && pattern == host
        }
        let suffix = pattern.dropFirst(2)
        guard suffix.contains("."), !suffix.contains("*") else { return false }
        guard let firstDot = host.firstIndex(of: ".") else { return false }
        let label = host[..<firstDot]
        let rest = host[host.index(after: firstDot)...]
        return !label.isEmpty && rest == suffix
    }

    /// Lowercased ASCII with one trailing dot removed.
    static func canonical(_ name: String) -> String {
        var name = Substring(name)
        if name.hasSuffix(".") { name = name.dropLast() }
        return String(
            String.UnicodeScalarView(
                name.unicodeScalars.map { scalar in
                    (scalar.value >= 65 && scalar.value <= 90) ? Unicode.Scalar(scalar.value + 32)! : scalar
                }))
    }
}
