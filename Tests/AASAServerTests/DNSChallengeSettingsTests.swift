import AASADNS
import Testing

@testable import AASAServer

/// Which names dns-01 answers, which wildcard covers a domain, and how often an unusable delegation is looked up.
struct DNSChallengeSettingsTests {
    static func settings(names: String, wildcards: [String]) throws -> DNSChallengeSettings {
        var settings = DNSChallengeSettings(
            names: try DNSNamePatterns(parsing: names),
            publisher: .update(server: DNSServerAddress(host: "127.0.0.1"), key: nil))
        settings.wildcards = Set(wildcards)
        return settings
    }

    @Test func aWildcardCoversItsBaseAndOneLabelBelowOnly() throws {
        let settings = try Self.settings(names: "", wildcards: ["shop.example", "b.example"])
        #expect(settings.wildcard(covering: "shop.example") == "shop.example")
        #expect(settings.wildcard(covering: "a.shop.example") == "shop.example")
        #expect(settings.wildcard(covering: "x.a.shop.example") == nil)
        #expect(settings.wildcard(covering: "myshop.example") == nil)
        #expect(settings.wildcard(covering: "example") == nil)
        #expect(settings.wildcard(covering: ".shop.example") == nil)
        #expect(settings.answers("shop.example") && !settings.answers("a.shop.example"))
        #expect(settings.isWildcardBase("b.example") && !settings.isWildcardBase("a.b.example"))
        // A domain named in capitals is the same name.
        #expect(settings.wildcard(covering: "A.Shop.Example") == "shop.example")
        #expect(settings.wildcard(covering: "SHOP.example") == "shop.example")
        #expect(settings.isWildcardBase("B.Example") && settings.answers("B.EXAMPLE"))
    }

    @Test func namesAndSuffixesSayWhichDomainsUseDNS01() throws {
        let settings = try Self.settings(names: "one.example, *.tenant.example", wildcards: [])
        #expect(settings.answers("one.example"))
        #expect(settings.answers("a.tenant.example") && settings.answers("x.a.tenant.example"))
        #expect(!settings.answers("tenant.example") && !settings.answers("two.example"))
        #expect(try Self.settings(names: "*", wildcards: []).names.coversAll)
        #expect(throws: DNSNamePatterns.ParseError.self) { try DNSNamePatterns(parsing: "ok.example, bad name") }
    }

    @Test func anUnusableDelegationIsLookedUpAtDoublingIntervalsUpToAnHour() {
        let waits = (0..<14).map { ACMEManager.delegationWait(after: $0, minimumRetry: .seconds(60)) }
        #expect(Array(waits.prefix(6)) == [60, 120, 240, 480, 960, 1920])
        #expect(waits.dropFirst(6).allSatisfy { $0 == 3600 })
        #expect(ACMEManager.delegationWait(after: 1_000_000, minimumRetry: .seconds(1)) == 3600)
    }
}
