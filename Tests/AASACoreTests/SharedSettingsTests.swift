import Dispatch
import Testing

@testable import AASACore

/// The settings a load keeps are one copy for all the domains with equal ones, from every thread at once.
@Suite struct SharedSettingsTests {
    /// Settings with one of `variety` cache policies, and HSTS on every other.
    private static func settings(_ number: Int, variety: Int) -> SiteConfig {
        var config = SiteConfig()
        config.cacheControl = "public, max-age=\(60 * (number % variety + 1))"
        if number % 2 == 0 { config.hsts = HSTSConfig(maxAge: 600) }
        return config
    }

    @Test func equalSettingsShareOneCopyAndOthersAreKeptApart() {
        let shared = SharedSettings()
        let first = shared.shared(Self.settings(0, variety: 3))
        #expect(shared.shared(Self.settings(0, variety: 3)) === first)
        let other = shared.shared(Self.settings(1, variety: 3))
        #expect(other !== first && other.value == Self.settings(1, variety: 3))
        #expect(shared.count == 2)
    }

    /// 4,000 domains of 6 distinct settings asked for from every processor: each caller gets settings equal to its
    /// own, and every caller with equal settings the same copy, even where two filed them at the same moment.
    @Test func threadsAskingAtOnceGetOneCopyOfEachSettings() {
        let shared = SharedSettings()
        let copies = (0..<4_000).concurrentMap { number in
            let config = Self.settings(number, variety: 3)
            let kept = shared.shared(config)
            return kept.value == config ? ObjectIdentifier(kept) : nil
        }
        #expect(!copies.contains(nil))
        // Settings 0..<6 repeat every 6 numbers (3 policies, HSTS on the even ones).
        for residue in 0..<6 {
            let ids = Set(stride(from: residue, to: 4_000, by: 6).map { copies[$0] })
            #expect(ids.count == 1, "settings \(residue)")
        }
        #expect(Set(copies).count == 6 && shared.count == 6)
    }
}
