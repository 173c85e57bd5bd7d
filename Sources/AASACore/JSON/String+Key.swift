extension String {
    /// Whether `self` and `key` are the same object key, their lengths compared first: of the keys a lookup
    /// compares, most differ in length, a native string's length is stored, and `==` on two strings of different
    /// lengths went through the standard library's full comparison (every key of every object of every site.json,
    /// at each load).
    func isKey(_ key: String) -> Bool {
        utf8.count == key.utf8.count && self == key
    }
}

extension [String] {
    /// Whether the list holds `key` (``Swift/String/isKey(_:)``).
    func containsKey(_ key: String) -> Bool {
        contains { $0.isKey(key) }
    }
}
