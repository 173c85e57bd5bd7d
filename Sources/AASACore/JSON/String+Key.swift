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
        hasSameBytes(as: key)
    }

    /// Whether `self` and `other` hold the same UTF-8 bytes (a key, a path: names of bytes, not of text), the
    /// lengths looked at first.
    func hasSameBytes(as other: String) -> Bool {
        utf8.count == other.utf8.count && Self.sameBytes(self, other)
    }

    /// Whether `one` and `other`, of the same length, hold the same bytes, compared in place: a native or small
    /// string lends its bytes as they are (`withUTF8` is mutating: a `var` copy of each, a retain and a release for
    /// every key compared).
    private static func sameBytes(_ one: String, _ other: String) -> Bool {
        let same = one.utf8.withContiguousStorageIfAvailable { one in
            other.utf8.withContiguousStorageIfAvailable { other in
                one.isEmpty || memcmp(one.baseAddress!, other.baseAddress!, one.count) == 0
            }
        }
        if let same, let same { return same }
        return one.utf8.elementsEqual(other.utf8)
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
        let hashed: Void? = text.utf8.withContiguousStorageIfAvailable {
            hasher.combine(bytes: UnsafeRawBufferPointer($0))
        }
        if hashed == nil { Array(text.utf8).withUnsafeBytes { hasher.combine(bytes: $0) } }
    }
}
