import Testing

@testable import AASACore

/// What the credential endpoints accept as a URL (``CredentialURL``): what `credential-url` and
/// `credential-url-length` refuse, and what the server never puts in a `Location` header or the passkey document.
@Suite struct CredentialURLTests {
    @Test(arguments: [
        ("https://shop.example/account/password", "shop.example", "/account/password"),
        ("HTTPS://Shop.Example./a?b=c#d", "shop.example", "/a"),
        ("https://shop.example", "shop.example", "/"),
        ("https://shop.example:8443/p%20q", "shop.example", "/p%20q"),
        ("https://[2001:db8::1]:443/x", "[2001:db8::1]", "/x"),
        ("https://shop.example?from=app", "shop.example", "/"),
    ])
    func acceptedURLsGiveTheirHostAndPath(text: String, host: String, path: String) throws {
        let url = try CredentialURL(text)
        #expect(url.host == host)
        #expect(url.path == path)
        #expect(CredentialURL.isServable(text))
    }

    @Test(arguments: [
        ("http://shop.example/password", CredentialURL.Problem.scheme),
        ("/account/password", .scheme),
        ("https://", .scheme),
        ("https:///password", .authority),
        ("https://admin@shop.example/", .authority),
        ("https://shop.example:port/", .authority),
        ("https://shop.example:/", .authority),
        ("https://[2001:db8::1/", .authority),
        ("https://shop.example/a b", .character("0x20")),
        ("https://shop.example/a\r\nSet-Cookie: x=1", .character("0xD")),
        ("https://shop.example/\u{7F}", .character("0x7F")),
        ("https://shop.example\\@evil.example/", .character("0x5C")),
        ("https://shop.example/café", .character("non-ASCII")),
        ("https://shop.example/" + String(repeating: "a", count: 2_028), .tooLong(2_049)),
    ])
    func refusedURLsSayWhy(text: String, problem: CredentialURL.Problem) {
        #expect(throws: problem) { try CredentialURL(text) }
        #expect(!CredentialURL.isServable(text))
    }

    /// 2,048 bytes is in, 2,049 out: the bound is on bytes, before anything else is looked at.
    @Test func theLengthBoundIsInclusive() {
        let base = "https://shop.example/"
        #expect(CredentialURL.isServable(base + String(repeating: "a", count: 2_048 - base.utf8.count)))
        #expect(!CredentialURL.isServable(base + String(repeating: "a", count: 2_049 - base.utf8.count)))
    }

    @Test(arguments: [
        ("https://shop.example/", true), ("https://accounts.shop.example/", true), ("https://SHOP.example./", true),
        ("https://evilshop.example/", false), ("https://shop.example.evil/", false), ("https://example/", false),
    ])
    func onTheDomainOrASubdomain(text: String, on: Bool) throws {
        #expect(try CredentialURL(text).isOn("shop.example") == on)
    }

    /// A URL refused for a line break is named escaped: the finding is one line, as every finding is.
    @Test func aRefusedURLIsNamedEscaped() {
        let json = #"{"changePassword": "https://shop.example/a\r\nSet-Cookie: x=1"}"#
        let loaded = SiteConfigLoader().loadDomain(
            domain: "shop.example", source: SourceText(name: "site.json", bytes: Array(json.utf8)))
        let finding = loaded.diagnostics.first { $0.rule == .credentialURL }
        #expect(
            finding?.message.contains(#"https://shop.example/a\x0d\x0aSet-Cookie: x=1"#) == true,
            "\(loaded.diagnostics)")
        #expect(finding.map { !$0.description.contains("\n") && !$0.description.contains("\r") } == true)
        #expect(loaded.published == nil)
    }
}
