/// What Android 15+ does with one URL for the packages of an assetlinks.json (spec §7.1).
public struct AndroidMatchResult: Sendable {
    /// The outcome.
    public enum Verdict: String, Sendable, Hashable, CaseIterable {
        /// A dynamic rule matched; the URL opens `packages`.
        case match
        /// An `exclude` rule matched first; the URL stays on the web.
        case excluded
        /// No rule matched: the URL stays on the web.
        case noMatch = "no-match"
        /// No dynamic rules apply (missing, discarded, or Android 14 and earlier): the app's intent filters decide.
        case manifest
        /// The input is not an http(s) URL or a path.
        case invalidURL = "invalid-url"
    }

    /// The URL as given.
    public var url: String
    /// The outcome.
    public var verdict: Verdict
    /// The packages the verdict is for: those that open the URL (`match`), or whose intent filters decide
    /// (`manifest`).
    public var packages: [String]
    /// The deciding rule as written, and its position in `dynamic_app_link_components`.
    public var rule: String?
    public var ruleIndex: Int?
    /// One sentence saying why.
    public var reason: String
    /// For `no-match`: the rules that came closest, with what failed.
    public var nearMisses: [(index: Int, rule: String, reason: String)]
    /// Side remarks: other packages' verdicts, a second block.
    public var notes: [String]

    /// One compact JSON object: `url`, `verdict`, `packages`, `rule`, `ruleIndex`, `reason`, `nearMisses`, `notes`.
    public func json() -> String {
        "{\"url\":\(JSONText.quote(url)),\"verdict\":\(JSONText.quote(verdict.rawValue)),"
            + "\"packages\":\(JSONText.array(packages)),\"rule\":\(JSONText.string(rule)),"
            + "\"ruleIndex\":\(JSONText.number(ruleIndex)),\"reason\":\(JSONText.quote(reason)),"
            + "\"nearMisses\":["
            + nearMisses.map {
                "{\"ruleIndex\":\($0.index),\"rule\":\(JSONText.quote($0.rule)),\"reason\":\(JSONText.quote($0.reason))}"
            }.joined(separator: ",") + "],\"notes\":\(JSONText.array(notes))}"
    }
}
