/// Checks for Apple application identifiers, `TEAMID.bundle.id` (spec §1.2).
public enum AppID {
    /// Why `value` is not a valid application identifier, or `nil` when it is.
    ///
    /// Spec §1.2: `^[A-Z0-9]{10}\.[A-Za-z0-9.-]+$`; bundle IDs use only `A-Z a-z 0-9 - .`.
    public static func problem(_ value: String) -> (message: String, hint: String)? {
        if isPlainlyValid(value) { return nil }
        let parts = value.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else {
            return (
                "'\(value)' is not TEAMID.bundle.id (no team ID prefix)",
                "prefix the bundle ID with your 10-character Team ID, e.g. ABCDE12345.\(value)"
            )
        }
        let team = parts[0]
        let bundle = parts[1]
        let placeholders = ["TEAMID", "TEAM_ID", "<TEAMID>", "$(TEAMID)", "YOURTEAMID", "XXXXXXXXXX"]
        if placeholders.contains(team.uppercased()) || team.contains("<") || team.contains("$") {
            return (
                "'\(value)' still has the placeholder '\(team)' as its team ID",
                "use your real Team ID from the Apple Developer account"
            )
        }
        guard team.count == 10 else {
            return (
                "'\(value)' is not TEAMID.bundle.id (team IDs are 10 characters, '\(team)' has \(team.count))",
                "copy the Team ID from the Membership page of your Apple Developer account"
            )
        }
        if team.contains(where: { $0.isLowercase }) && team.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) {
            return ("'\(value)' has a lower-case team ID", "write it in upper case: \(team.uppercased()).\(bundle)")
        }
        guard team.allSatisfy({ ("A"..."Z").contains($0) || ("0"..."9").contains($0) }) else {
            return ("'\(value)' has a team ID with characters other than A–Z and 0–9", "copy the Team ID exactly")
        }
        guard !bundle.isEmpty,
            bundle.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") })
        else {
            return (
                "'\(value)' has a bundle ID with characters other than A–Z, a–z, 0–9, '-' and '.'",
                "use the bundle ID exactly as in Xcode"
            )
        }
        if bundle.hasPrefix(".") || bundle.hasSuffix(".") || bundle.contains("..") {
            return ("'\(value)' has an empty part in its bundle ID", "remove the extra '.'")
        }
        return nil
    }

    /// Whether `value` is `[A-Z0-9]{10}.bundle` with an ASCII bundle ID of letters, digits, `-` and non-adjacent
    /// inner dots, and a team ID that is no placeholder: exactly the IDs ``problem(_:)`` accepts, checked byte
    /// by byte first because the checks below work on Characters and every load runs them for every app ID.
    private static func isPlainlyValid(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        guard bytes.count > 11, bytes[10] == UInt8(ascii: ".") else { return false }
        let team = bytes[..<10]
        guard team.allSatisfy({ ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x30 && $0 <= 0x39) }),
            !team.elementsEqual("XXXXXXXXXX".utf8), !team.elementsEqual("YOURTEAMID".utf8)
        else { return false }
        let bundle = bytes[11...]
        guard bundle.first != UInt8(ascii: "."), bundle.last != UInt8(ascii: ".") else { return false }
        var previous: UInt8 = 0
        for byte in bundle {
            let letterOrDigit =
                (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
            guard letterOrDigit || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") else { return false }
            if byte == UInt8(ascii: "."), previous == UInt8(ascii: ".") { return false }
            previous = byte
        }
        return true
    }
}
