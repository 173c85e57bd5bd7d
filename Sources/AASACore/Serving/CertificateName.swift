/// A name a certificate lists, or a TLS server name (SNI) to choose a certificate by: compared
/// case-insensitively, with one trailing dot ignored.
public enum CertificateName {
    /// Lowercased ASCII, one trailing dot removed.
    public static func canonical(_ name: String) -> String {
        // Most names are canonical already: the same string, not a copy per name kept.
        if isCanonical(name) { return name }
        var bytes = Array(name.utf8)
        if bytes.last == UInt8(ascii: ".") { bytes.removeLast() }
        for index in bytes.indices where bytes[index] >= 65 && bytes[index] <= 90 { bytes[index] += 32 }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether `name` is its own ``canonical(_:)`` form: no upper-case ASCII letter, no trailing dot.
    public static func isCanonical(_ name: String) -> Bool {
        name.utf8.last != UInt8(ascii: ".") && !name.utf8.contains { $0 >= 65 && $0 <= 90 }
    }

    /// The name a `*.` name for the parent of canonical `name` covers it by (`*.example` covers `a.example`, not
    /// `example` nor `a.b.example`): the parent, or `nil` for a name of one label.
    public static func wildcardParent(of name: String) -> Substring? {
        guard let dot = name.firstIndex(of: "."), dot != name.startIndex else { return nil }
        return name[name.index(after: dot)...]
    }
}
