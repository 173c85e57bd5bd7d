import Foundation

/// The names whose certificates are obtained with dns-01 (`--acme-dns-names`): exact names, `*.suffix` for every name
/// below a suffix (not the suffix itself), and `*` for all.
public struct DNSNamePatterns: Sendable, Equatable, CustomStringConvertible {
    /// The patterns as given, lowercased.
    public private(set) var patterns: [String]

    /// Reads a comma-separated list; the error names the entry that is not a name or pattern.
    public init(parsing list: String) throws(ParseError) {
        patterns = []
        for entry in list.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces).lowercased() }) {
            guard !entry.isEmpty else { continue }
            let name = entry.hasPrefix("*.") ? String(entry.dropFirst(2)) : entry
            guard entry == "*" || Self.isHostname(name) else {
                throw ParseError(
                    description:
                        "'\(entry)' is not a domain name or pattern: give names (shop.example), *.suffix for every name "
                        + "below a suffix, or * for all")
            }
            if !patterns.contains(entry) { patterns.append(entry) }
        }
    }

    public init(_ patterns: [String] = []) { self.patterns = patterns.map { $0.lowercased() } }

    public var isEmpty: Bool { patterns.isEmpty }
    /// Whether every name matches (`*`).
    public var coversAll: Bool { patterns.contains("*") }
    public var description: String { patterns.joined(separator: ",") }

    /// Whether `domain` matches a pattern.
    public func matches(_ domain: String) -> Bool {
        let domain = domain.lowercased()
        return patterns.contains { pattern in
            if pattern == "*" { return true }
            if pattern.hasPrefix("*.") { return domain.hasSuffix(pattern.dropFirst(1)) }
            return pattern == domain
        }
    }

    private static func isHostname(_ name: String) -> Bool {
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        return name.utf8.count <= 253 && labels.count >= 1
            && labels.allSatisfy { label in
                !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                    && label.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
            }
    }

    /// Why a list does not read.
    public struct ParseError: Error, CustomStringConvertible {
        public var description: String
    }
}
