#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension String {
    /// Whether `self` and `key` are the same object key: the same UTF-8 bytes. JSON compares member names code
    /// unit by code unit (RFC 8259 §8.3), as Apple's and Android's readers do, so `é` composed and `é` decomposed
    /// are two keys, where `==` would find the texts canonically equivalent. The lengths are looked at first: most
    /// keys a lookup compares differ in length, and a native string's is stored.
    func isKey(_ key: String) -> Bool {
        utf8.count == key.utf8.count && Self.sameBytes(self, key)
    }

    /// Whether `one` and `other`, of the same length, hold the same bytes, compared in place.
    private static func sameBytes(_ one: String, _ other: String) -> Bool {
        var one = one
        var other = other
        return one.withUTF8 { one in
            other.withUTF8 { other in one.isEmpty || memcmp(one.baseAddress!, other.baseAddress!, one.count) == 0 }
        }
    }
}

extension [String] {
    /// Whether the list holds `key` (``Swift/String/isKey(_:)``).
    func containsKey(_ key: String) -> Bool {
        contains { $0.isKey(key) }
    }
}

/// An object key as a dictionary or set key, equal to another as ``Swift/String/isKey(_:)`` says: where a
/// `[String: …]` would take two spellings of canonically equivalent text for one key.
struct JSONKey: Hashable {
    var text: String

    static func == (lhs: JSONKey, rhs: JSONKey) -> Bool { lhs.text.isKey(rhs.text) }

    /// The hash of the bytes, as keys are equal by their bytes. The text's own hash is that of its canonical form:
    /// a hostile object of thousands of spellings of one text (combining marks in every order) would put every key
    /// in one bucket, and each lookup would compare it with all the others.
    func hash(into hasher: inout Hasher) {
        var text = text
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
