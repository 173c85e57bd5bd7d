import AASACore
import Testing

@Suite struct ForwardedHeadersTests {
    static let trusted = ["127.0.0.0/8", "10.0.0.0/8", "2001:db8:ffff::/48"].compactMap(IPNetwork.init)

    @Test(arguments: [
        // X-Forwarded-For: the rightmost address that is not a trusted proxy.
        (["203.0.113.7"], [String](), "203.0.113.7"),
        (["198.51.100.1, 203.0.113.7"], [], "203.0.113.7"),  // the client's own claim is left of the truth
        (["203.0.113.7, 10.1.2.3"], [], "203.0.113.7"),  // a second, trusted proxy is skipped
        (["203.0.113.7,10.1.2.3 , 127.0.0.9"], [], "203.0.113.7"),
        (["198.51.100.1", "203.0.113.7"], [], "203.0.113.7"),  // a proxy that adds its own header line
        (["10.0.0.1, 10.0.0.2"], [], "10.0.0.1"),  // only proxies: the leftmost
        (["2001:db8::7"], [], "2001:db8::7"), (["[2001:db8::7]:4711"], [], "2001:db8::7"),
        (["203.0.113.7:4711"], [], "203.0.113.7"), (["::ffff:203.0.113.7"], [], "203.0.113.7"),
        (["203.0.113.7, 2001:db8:ffff::1"], [], "203.0.113.7"),
        // Forwarded, read only without X-Forwarded-For.
        ([], ["for=203.0.113.7"], "203.0.113.7"), ([], ["For=\"203.0.113.7\";proto=http;by=10.0.0.1"], "203.0.113.7"),
        ([], ["for=198.51.100.1, for=\"[2001:db8::17]:4711\""], "2001:db8::17"),
        ([], ["for=203.0.113.7;proto=https, for=10.0.0.3"], "203.0.113.7"),
        (["203.0.113.7"], ["for=198.51.100.1"], "203.0.113.7"),
    ])
    func theClientIsTheRightmostUntrustedAddress(xForwardedFor: [String], forwarded: [String], expected: String) {
        let client = ForwardedHeaders.client(xForwardedFor: xForwardedFor, forwarded: forwarded, trusted: Self.trusted)
        #expect(client?.description == expected)
    }

    @Test(arguments: [
        ([String](), [String]()), ([""], []), (["unknown"], []), (["example.com"], []), (["203.0.113.7, garbage"], []),
        (["203.0.113.7,,10.0.0.1"], []), (["203.0.113.7 10.0.0.1"], []), (["300.1.1.1"], []),
        (["203.0.113.7:99999"], []),
        (["[2001:db8::7"], []), (["<script>"], []), (["203.0.113.7\r\nX-Evil: 1"], []),
        ([], ["for=unknown"]), ([], ["for=_hidden"]), ([], ["proto=http"]), ([], ["for=\"203.0.113.7"]),
        ([], ["for=\"[2001:db8::17]:x\""]),
        (Array(repeating: "203.0.113.7", count: 40), []),
    ])
    func malformedHeadersNameNoClient(xForwardedFor: [String], forwarded: [String]) {
        #expect(
            ForwardedHeaders.client(xForwardedFor: xForwardedFor, forwarded: forwarded, trusted: Self.trusted) == nil)
    }
}
