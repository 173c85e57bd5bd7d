/// What one URL does on every platform a domain serves: iOS 13+ and iOS 9–12 from its association file,
/// Android 15+ from the dynamic rules of its assetlinks.json (spec §2.2, §7.1), and whether they disagree.
///
/// `match --all-platforms` prints it; the admin listener's `GET /match?url=…&platforms=all` answers with its
/// JSON, for the dashboard's "Try a URL".
public struct PlatformVerdicts: Sendable {
    /// iOS 13 and later (`components`).
    public var modern: MatchResult
    /// iOS 9–12 (`appID` and `paths`).
    public var legacy: MatchResult
    /// Whether the file has entries iOS 9–12 reads (a domain with `"legacyFormat": false` has none, on purpose).
    public var hasLegacyEntries: Bool
    /// Android 15+ with Google services; `nil` when the domain serves no assetlinks.json. Android 14 and
    /// earlier always leave the decision to the app's intent filters (`manifest`).
    public var android: AndroidMatchResult?

    /// Evaluates `url` against `file` and, when given, the assetlinks.json document (for `packages`, or every
    /// package it verifies).
    public init(url: String, file: AssociationFile, assetLinks: JSONValue?, packages: [String]? = nil) {
        modern = URLMatcher(file: file, mode: .modern).match(url)
        legacy = URLMatcher(file: file, mode: .legacy).match(url)
        hasLegacyEntries = file.hasLegacyEntries
        android = assetLinks.map { AndroidMatcher(assetLinks: $0, packages: packages).match(url) }
    }

    /// Whether the platforms that decide disagree on opening an app: iOS 9–12 counts only when the file has
    /// entries for it, Android only when its dynamic rules decide (its intent filters are not known here).
    public var disagree: Bool {
        var opens = [modern.verdict == .match]
        if hasLegacyEntries { opens.append(legacy.verdict == .match) }
        if let android, android.verdict != .manifest { opens.append(android.verdict == .match) }
        return Set(opens).count > 1
    }

    /// One compact JSON object: `url`, `ios`, `iosLegacy`, `legacyEntries`, `android` (`null` without an
    /// assetlinks.json) and `disagree`; with `detailsSource`, the iOS rules also carry their site.json place
    /// (``MatchResult/json(detailsSource:)``).
    public func json(detailsSource: [Int?]? = nil) -> String {
        "{\"url\":\(JSONText.quote(modern.url)),\"ios\":\(modern.json(detailsSource: detailsSource)),"
            + "\"iosLegacy\":\(legacy.json(detailsSource: detailsSource)),\"legacyEntries\":\(hasLegacyEntries),"
            + "\"android\":\(android?.json() ?? "null"),\"disagree\":\(disagree)}"
    }
}
