/// The client address a trusted proxy reports in `X-Forwarded-For` or `Forwarded: for=` (RFC 7239 §5.2).
///
/// Each proxy appends the address it received the request from, so the list reads client first, nearest
/// proxy last, and everything left of the first proxy we trust may have been written by the client. The
/// client is therefore the rightmost address that is not itself a trusted proxy; if every address is
/// trusted, the leftmost. A list that does not parse at that point (a name, `unknown`, an obfuscated
/// identifier, garbage) gives no address at all, and the caller keeps the peer's.
///
/// `X-Forwarded-For` is read when present, else `Forwarded`: a proxy sets one of them, and the one it does
/// not set passes through as the client sent it, so the proxy must set (or strip) the one it uses.
public enum ForwardedHeaders {
    /// Most list elements examined, from the right: a proxy chain is short, a longer list is a client's.
    public static let elementLimit = 32

    /// The client address named by the headers, given every value of each header in the order received.
    public static func client(xForwardedFor: [String], forwarded: [String], trusted: [IPNetwork]) -> IPAddress? {
        if !xForwardedFor.isEmpty {
            return rightmostUntrusted(elements(xForwardedFor).map(address), trusted: trusted)
        }
        if !forwarded.isEmpty {
            return rightmostUntrusted(elements(forwarded).map(forwardedFor), trusted: trusted)
        }
        return nil
    }

    /// The comma-separated elements of the header values, trimmed, at most ``elementLimit`` from the right;
    /// an empty list when there are more (such a list gives no address).
    private static func elements(_ values: [String]) -> [Substring] {
        let all = values.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
        guard all.count <= elementLimit else { return [] }
        return all.map { $0.trimmingSpaces }
    }

    private static func rightmostUntrusted(_ addresses: [IPAddress?], trusted: [IPNetwork]) -> IPAddress? {
        var candidate: IPAddress?
        for address in addresses.reversed() {
            guard let address else { return nil }
            candidate = address
            if !trusted.contains(where: { $0.contains(address) }) { return address }
        }
        return candidate
    }

    /// An address as proxies write them: `192.0.2.7`, `2001:db8::7`, and with a port `192.0.2.7:4711` or
    /// `[2001:db8::7]:4711`.
    static func address(_ text: Substring) -> IPAddress? {
        if let plain = IPAddress(text) { return plain }
        if text.hasPrefix("["), let close = text.firstIndex(of: "]") {
            let rest = text[text.index(after: close)...]
            guard rest.hasPrefix(":"), rest.dropFirst().isPort else { return nil }
            return IPAddress(text[...close])
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1].isPort, let v4 = IPAddress(parts[0]),
            v4.isIPv4
        else { return nil }
        return v4
    }

    /// The `for=` address of one `Forwarded` element (`for=192.0.2.60;proto=http`, `for="[2001:db8::17]:4711"`).
    static func forwardedFor(_ element: Substring) -> IPAddress? {
        for pair in element.split(separator: ";") {
            let trimmed = pair.trimmingSpaces
            guard let equals = trimmed.firstIndex(of: "="), trimmed[..<equals].lowercased() == "for" else { continue }
            var value = trimmed[trimmed.index(after: equals)...]
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = value.dropFirst().dropLast() }
            return address(value)
        }
        return nil
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace).
    fileprivate var trimmingSpaces: Substring {
        var trimmed = self
        while let first = trimmed.first, first == " " || first == "\t" { trimmed = trimmed.dropFirst() }
        while let last = trimmed.last, last == " " || last == "\t" { trimmed = trimmed.dropLast() }
        return trimmed
    }

    /// Whether this is a port number: ASCII digits, at most 65535.
    fileprivate var isPort: Bool {
        (1...5).contains(count) && allSatisfy { ("0"..."9").contains($0) } && Int(self).map { $0 <= 65535 } == true
    }
}
