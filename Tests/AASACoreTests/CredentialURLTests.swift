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

    /// The draft forbids the change-password page at the well-known URL itself: a redirect to itself is an error.
    @Test func aChangePasswordRedirectToItselfIsRefused() {
        for target in ["https://shop.example/.well-known/change-password", "https://accounts.shop.example/pw"] {
            let json = #"{"changePassword": "\#(target)"}"#
            let loaded = SiteConfigLoader().loadDomain(
                domain: "shop.example", source: SourceText(name: "site.json", bytes: Array(json.utf8)))
            let refused = loaded.diagnostics.contains { $0.rule == .credentialURL && $0.message.contains("to itself") }
            #expect(refused == target.hasSuffix("change-password"), "\(target): \(loaded.diagnostics)")
        }
    }

    /// Whatever a published domain holds, only a URL that parses reaches a header: one with a line break is not
    /// served at all (404, no `Location`), and the passkey document with it is not either.
    @Test func anUnservableURLNeverReachesAnAnswer() throws {
        let json = #"{"changePassword": "https://shop.example/pw"}"#
        let loaded = SiteConfigLoader().loadDomain(
            domain: "shop.example", source: SourceText(name: "site.json", bytes: Array(json.utf8)))
        var published = try #require(loaded.published)
        #expect(
            SiteRoutes([published]).get("/.well-known/change-password").header("Location") == "https://shop.example/pw")
        published.credentialEndpoints = CredentialEndpoints(
            passkeys: PasskeyEndpoints(enroll: "https://shop.example/p\r\nSet-Cookie: y=1"),
            changePassword: "https://shop.example/a\r\nSet-Cookie: x=1")
        let routes = SiteRoutes([published])
        for path in ["/.well-known/change-password", "/.well-known/passkey-endpoints"] {
            let answer = routes.get(path)
            #expect(answer.status == 404 && answer.header("Location") == nil, "\(path): \(answer.status)")
        }
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
