/// The Smart App Banner's `exclude` patterns are bounded: each is compared with the path of every page at load and
/// of every landing-page request, in time up to its length times the path's, so each keeps
/// ``PatternLimits/maximumLength`` and all of them together ``maximumTotalLength`` characters.
public struct BannerExcludeLimitRule: SiteRule {
    /// Characters of all `smartAppBanner.exclude` patterns together: a request's path is compared with each.
    public static let maximumTotalLength = 4_096

    /// Creates the rule.
    public init() {}

    /// Reports an exclusion over ``PatternLimits/maximumLength`` characters, and the one that takes the list over
    /// ``maximumTotalLength``.
    public func check(_ site: SiteContext) -> [Diagnostic] {
        guard let banner = site.config.smartAppBanner else { return [] }
        let path = KeyPath.root.key("smartAppBanner").key("exclude")
        var total = 0
        for (index, pattern) in banner.exclude.enumerated() {
            let length = pattern.unicodeScalars.count
            if length > PatternLimits.maximumLength {
                return [
                    site.diagnostic(
                        .error, rule: .patternTooLong,
                        "the exclusion has \(length) characters; the limit is \(PatternLimits.maximumLength)",
                        at: path.index(index), hint: "end it with '*' instead of spelling out what follows")
                ]
            }
            total += length
            if total > Self.maximumTotalLength {
                return [
                    site.diagnostic(
                        .error, rule: .patternTooComplex,
                        "the exclusions have \(total) characters up to this one; the limit for all of them is \(Self.maximumTotalLength)",
                        at: path.index(index), hint: "merge exclusions with '*', e.g. \"/checkout/*\"")
                ]
            }
        }
        return []
    }
}
