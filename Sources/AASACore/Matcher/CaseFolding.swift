/// Simple, one-to-one case folding for `caseSensitive: false` (spec §2.5).
///
/// Apple documents only that matching becomes case-insensitive. We fold ASCII exactly and other scalars with
/// their single-scalar lowercase mapping; full Unicode folding (one scalar to several, e.g. `İ`, `ß`) is left
/// out on purpose, because it would change how many characters `?` sees (spec §2.1).
enum CaseFolding {
    /// The folded form of one Unicode scalar value.
    @inline(__always)
    static func fold(_ value: UInt32) -> UInt32 {
        if value < 0x80 {
            return (value >= 0x41 && value <= 0x5A) ? value | 0x20 : value
        }
        guard let scalar = Unicode.Scalar(value) else { return value }
        let lower = scalar.properties.lowercaseMapping.unicodeScalars
        guard lower.count == 1, let only = lower.first else { return value }
        return only.value
    }

    /// Folds every scalar of `values`.
    static func fold(_ values: [UInt32]) -> [UInt32] {
        values.map { fold($0) }
    }

    /// Folds a string scalar by scalar.
    static func fold(_ text: String) -> String {
        // ASCII (nearly every pattern and query name): byte by byte, unchanged when it holds no capital.
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            guard text.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return text }
            return lowercasedASCII(text.utf8)
        }
        var result = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            result.append(Unicode.Scalar(fold(scalar.value)) ?? scalar)
        }
        return String(result)
    }

    /// ASCII text `bytes` with `A`–`Z` lowered: what folding, and Unicode lowercasing, make of ASCII.
    ///
    /// Written straight into the string's storage (a host name of up to 15 bytes is a string with none): a URL
    /// of every link test of every domain is parsed at each load.
    static func lowercasedASCII(_ bytes: some Collection<UInt8>) -> String {
        String(unsafeUninitializedCapacity: bytes.count) { buffer in
            var count = 0
            for byte in bytes {
                buffer[count] = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
                count += 1
            }
            return count
        }
    }

    /// Every other scalar that folds to `value` (`K` and the Kelvin sign for `k`), for reasoning about all the
    /// texts a case-insensitive pattern matches. Scalars past U+1FFFF have no case.
    static func preimage(of value: UInt32) -> [UInt32] {
        foldedFrom[value] ?? []
    }

    /// Folded value → the scalars that fold to it, built on first use.
    private static let foldedFrom: [UInt32: [UInt32]] = {
        var table: [UInt32: [UInt32]] = [:]
        for value in UInt32(0)..<0x20000 {
            let folded = fold(value)
            if folded != value { table[folded, default: []].append(value) }
        }
        return table
    }()
}
