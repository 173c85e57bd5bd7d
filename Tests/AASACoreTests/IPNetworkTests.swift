import AASACore
import Testing

@Suite struct IPNetworkTests {
    @Test(arguments: [
        ("192.0.2.7", "192.0.2.7"), ("0.0.0.0", "0.0.0.0"), ("255.255.255.255", "255.255.255.255"),
        ("::1", "::1"), ("[::1]", "::1"), ("::", "::"), ("2001:DB8::7", "2001:db8::7"),
        ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"), ("1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"),
        ("fe80::", "fe80::"), ("::ffff:192.0.2.7", "192.0.2.7"), ("::ffff:c000:207", "192.0.2.7"),
        ("64:ff9b::192.0.2.7", "64:ff9b::c000:207"), ("1::", "1::"), ("1:0:0:0:0:0:0:0", "1::"),
    ])
    func addressesParseAndPrintCanonically(text: String, expected: String) {
        #expect(IPAddress(text)?.description == expected)
    }

    @Test(arguments: [
        "", "1.2.3", "1.2.3.4.5", "256.1.1.1", "01.2.3.4", "1.2.3.4 ", " 1.2.3.4", "1..3.4", "a.b.c.d", "0x7f.0.0.1",
        ":", ":::", "1::2::3", "1:2:3:4:5:6:7", "1:2:3:4:5:6:7:8:9", "12345::", "g::", "::1%eth0", "[::1",
        "1.2.3.4::", "::1.2.3", "1:2:3:4:5:6:7::8:9", "localhost", "unknown", "-", "1.2.3.4, 5.6.7.8",
        "1:2:3:4:5:6:1.2.3.4:5",
    ])
    func malformedAddressesAreRefused(text: String) {
        #expect(IPAddress(text) == nil)
    }

    @Test(arguments: [
        ("127.0.0.0/8", "127.0.0.1", true), ("127.0.0.0/8", "127.255.1.2", true), ("127.0.0.0/8", "128.0.0.1", false),
        ("10.1.2.3/8", "10.9.9.9", true), ("192.0.2.7", "192.0.2.7", true), ("192.0.2.7", "192.0.2.8", false),
        ("192.0.2.7/32", "192.0.2.7", true), ("0.0.0.0/0", "203.0.113.9", true), ("0.0.0.0/0", "::1", false),
        ("172.16.0.0/12", "172.31.255.255", true), ("172.16.0.0/12", "172.32.0.0", false),
        ("2001:db8::/32", "2001:db8:ffff::1", true), ("2001:db8::/32", "2001:db9::1", false),
        ("::1/128", "::1", true), ("::/0", "192.0.2.1", false), ("fd00::/8", "fdab::1", true),
        ("127.0.0.0/8", "::ffff:127.0.0.1", true),
    ])
    func networksContainTheirAddresses(network: String, address: String, expected: Bool) throws {
        let block = try #require(IPNetwork(network))
        #expect(block.contains(try #require(IPAddress(address))) == expected)
    }

    @Test(arguments: ["127.0.0.0/33", "::/129", "10.0.0.0/-1", "10.0.0.0/", "/8", "10.0.0.0/8/8", "10.0.0.0/ 8", "x/8"])
    func malformedNetworksAreRefused(text: String) {
        #expect(IPNetwork(text) == nil)
    }
}
