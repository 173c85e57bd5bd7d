/// Reads values from a raw query string (`a=1&b=x%2Fy`), percent-decoding them.
public enum QueryString {
    /// The decoded value of the first item named `name`, `""` for a valueless item, `nil` when absent.
    /// `+` stays `+` (this is not form decoding): a URL passed as a value keeps its plus signs.
    public static func value(_ name: String, in rawQuery: String?) -> String? {
        guard let rawQuery else { return nil }
        for item in rawQuery.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard PercentEncoding.decode(String(parts[0])) == name else { continue }
            return parts.count > 1 ? PercentEncoding.decode(String(parts[1])) : ""
        }
        return nil
    }
}
