/// An Android `intent:` URL for an `https` page (Chrome, "Android Intents with Chrome"): tapped in Chrome, or in an
/// in-app browser that hands `intent:` URLs to the system, it opens the page in the app `package` (without one, in
/// the app that opens the domain's links, else the default browser), and when that app is not installed Chrome loads
/// `S.browser_fallback_url` instead.
public enum IntentURL {
    /// `intent://host/path?query#Intent;scheme=https;package=…;S.browser_fallback_url=…;end` for `pageURL` (an
    /// `https://` URL, percent-encoded by ``URLText/encode(_:encodeCommas:)``). A `#` of the URL would end its part,
    /// so it is encoded; the fallback is one component, encoded whole. Not yet HTML-escaped.
    public static func make(pageURL: [UInt8], package: String?, fallback: [UInt8]?) -> [UInt8] {
        let scheme = Array("https://".utf8)
        var rest = pageURL.starts(with: scheme) ? Array(pageURL.dropFirst(scheme.count)) : pageURL
        rest = rest.flatMap { $0 == UInt8(ascii: "#") ? Array("%23".utf8) : [$0] }
        var url = Array("intent://".utf8) + rest + Array("#Intent;scheme=https;".utf8)
        if let package { url += Array("package=\(package);".utf8) }
        if let fallback {
            url += Array("S.browser_fallback_url=".utf8) + URLText.encodeComponent(fallback) + [UInt8(ascii: ";")]
        }
        return url + Array("end".utf8)
    }
}
