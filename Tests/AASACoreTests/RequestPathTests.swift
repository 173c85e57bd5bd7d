import Testing

@testable import AASACore

/// ``RequestPath``: the one place request paths are decoded; everything that could leave `pages/` is refused.
@Suite struct RequestPathTests {
    @Test(arguments: [
        "/../site.json", "/a/../../x", "/%2e%2e/site.json", "/%2E%2E/x", "/.%2e/x", "/%252e%252e/site.json",
        "/..%5csite.json", "/..\\site.json", "/a%5c..%5c..%5cx", "/%00", "/index.html%00.png", "/a%2Fb", "/a%2fb",
        "/%c0%ae%c0%ae/site.json", "/%c0%af", "/%e0%80%ae", "/%ff", "/.git/config", "/.env", "/a/.htpasswd", "/.",
        "/a//b", "//etc/passwd", "", "x", "/a%", "/a%2", "/a%zz", "/%25", "/a\u{1}b", "/a%0Ab", "/a%7F",
        "/x/.well-known/y", "/./x",
    ])
    func refused(raw: String) {
        #expect(RequestPath(raw) == nil, "\(raw) → \(String(describing: RequestPath(raw)))")
    }

    @Test(arguments: [
        ("/", "/", ["/index.html"]), ("/about", "/about", ["/about", "/about/index.html"]),
        ("/about/", "/about/", ["/about/index.html"]),
        ("/caf%C3%A9.html", "/café.html", ["/café.html", "/café.html/index.html"]),
        ("/a%20b/c.png", "/a b/c.png", ["/a b/c.png", "/a b/c.png/index.html"]),
        (
            "/.well-known/security.txt", "/.well-known/security.txt",
            ["/.well-known/security.txt", "/.well-known/security.txt/index.html"]
        ),
        ("/a..b", "/a..b", ["/a..b", "/a..b/index.html"]),
    ])
    func accepted(raw: String, decoded: String, keys: [String]) {
        let path = RequestPath(raw)
        #expect(path?.description == decoded)
        #expect(path?.lookupKeys == keys)
    }

    @Test func overlyLongPathsAreRefused() {
        #expect(RequestPath("/" + String(repeating: "a", count: 5000)) == nil)
    }
}

/// HTTP dates for Last-Modified / If-Modified-Since.
@Suite struct HTTPDateTests {
    @Test func roundTrips() {
        #expect(HTTPDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == 784_111_777)
        #expect(HTTPDate.format(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        for seconds in [951_782_400, 1_709_164_800, 4_102_444_799] {
            #expect(HTTPDate.parse(HTTPDate.format(seconds)) == seconds)
        }
        #expect(HTTPDate.format(951_782_400) == "Tue, 29 Feb 2000 00:00:00 GMT")
    }

    @Test(arguments: [
        "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "", "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 06 Xyz 1994 08:49:37 GMT",
    ])
    func otherFormsAreIgnored(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }
}
