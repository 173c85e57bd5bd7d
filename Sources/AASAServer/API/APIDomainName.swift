import AASACore

/// The checks of a domain name (and of a revision) in an API path, made before anything is read: the raw path
/// segment must be the name itself, a lower-case DNS name of at least two labels, internationalised names as
/// A-labels (`xn--…`), never a hidden or reserved name, and nothing that could lead elsewhere (`..`, a
/// percent-encoded byte such as an encoded slash, NUL).
enum APIDomainName {
    /// Names never served for a tenant: the loopback name, and the top-level names RFC 2606 and RFC 6761 keep
    /// from resolving publicly (`localhost`, `invalid`) under which no device can fetch a file.
    static let reservedSuffixes = ["localhost", "invalid"]

    /// Why `segment` (a raw path segment) is not a domain name the API serves, or `nil` when it is one.
    static func problem(_ segment: String) -> String? {
        if segment.utf8.contains(0) || segment.lowercased().contains("%00") {
            return "the domain name holds a NUL byte"
        }
        let lowered = segment.lowercased()
        if lowered.contains("%2f") || lowered.contains("%5c") {
            return "the domain name holds an encoded slash (%2F or %5C); a name is one path segment"
        }
        if segment.contains("%") {
            return "the domain name '\(segment)' is percent-encoded; write it as is (internationalised names as "
                + "xn-- A-labels)"
        }
        if segment == "." || segment == ".." || segment.contains("..") {
            return "the domain name '\(segment)' holds '..'; a name is a host name, never a path"
        }
        if segment.hasPrefix(".") {
            return "the domain name '\(segment)' starts with a dot; hidden folders are never domains"
        }
        if !segment.unicodeScalars.allSatisfy(\.isASCII) {
            return "the domain name '\(segment)' is not ASCII; write an internationalised name as its xn-- A-label "
                + "(Punycode)"
        }
        if segment != segment.lowercased() {
            return "the domain name '\(segment)' has upper-case letters; host names are matched in lower case: use "
                + "'\(segment.lowercased())'"
        }
        if SiteConfigLoader.domainNameProblem(segment) != nil {
            return "the domain name '\(segment)' is not a host name (at most 253 characters, labels of 1 to 63 of "
                + "a–z, 0–9 and '-', not starting or ending with '-')"
        }
        let labels = segment.split(separator: ".")
        if labels.count < 2 {
            return "the domain name '\(segment)' has one label; a tenant's domain has at least two (shop.example)"
        }
        if let last = labels.last, reservedSuffixes.contains(String(last)) {
            return "the domain name '\(segment)' is under the reserved name '\(last)', which no device resolves "
                + "publicly"
        }
        return nil
    }

    /// Whether `revision` can be a revision of either repository: 1 to 64 ASCII letters and digits.
    static func isRevision(_ revision: String) -> Bool {
        !revision.isEmpty && revision.utf8.count <= 64
            && revision.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x7A) }
    }
}
