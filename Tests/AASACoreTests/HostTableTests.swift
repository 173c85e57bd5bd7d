import Testing

@testable import AASACore

/// The router's host lookup on raw bytes (``HostTable``, ``HostName/withNormalized(_:_:)``) and the domain
/// numbers request counters key on (``DomainIDs``).
@Suite struct HostTableTests {
    static func name(_ index: Int) -> String { "d\(index).scale.example" }

    @Test func everyNameOfTenThousandIsFoundWithItsValueAndNothingElseIs() {
        let table = HostTable((0..<10_000).map { (name: Self.name($0), value: $0) })
        #expect(table.count == 10_000)
        for index in 0..<10_000 {
            #expect(table[Self.name(index)] == index)
            var bytes = Array(Self.name(index).utf8)
            #expect(bytes.withUnsafeBytes { table[$0] } == index)
            // One byte changed, one byte short, one byte more: none of them is a configured name.
            bytes[0] = UInt8(ascii: "e")
            #expect(bytes.withUnsafeBytes { table[$0] } == nil)
        }
        #expect(table["d1.scale.exampl"] == nil)
        #expect(table["d1.scale.example."] == nil)
        #expect(table["xd1.scale.example"] == nil)
        #expect(table[""] == nil)
        #expect(table["D1.scale.example"] == nil, "names are looked up as given; the router normalises first")
    }

    @Test func namesOfEveryLengthAroundTheEightByteWordsAreToldApart() {
        // The hash reads eight bytes at a time and then the tail: names that differ only in the tail, or only in
        // length, must still be different keys.
        let names = (1...40).flatMap { length in ["a", "b"].map { String(repeating: "x", count: length - 1) + $0 } }
        let table = HostTable(names.enumerated().map { (name: $0.element, value: $0.offset) })
        for (index, name) in names.enumerated() { #expect(table[name] == index, "\(name)") }
        #expect(table[String(repeating: "x", count: 41)] == nil)
    }

    @Test func aNameGivenTwiceKeepsItsFirstValue() {
        let table = HostTable([
            (name: "a.example", value: 1), (name: "a.example", value: 2), (name: "b.example", value: 3),
        ])
        #expect(table.count == 2)
        #expect(table["a.example"] == 1)
        #expect(table["b.example"] == 3)
    }

    @Test func anEmptyTableFindsNothing() {
        let table = HostTable<Int>([])
        #expect(table["a.example"] == nil)
        #expect(table[""] == nil)
    }

    @Test(arguments: [
        "Shop.Example", "shop.example:8443", "shop.example.", "SHOP.EXAMPLE.:443", "[::1]:8443", "[::1]", "[::1",
        "", ":8443", ".", "shop example", "shop/example", "shop\u{7F}.example", "xn--bcher-kva.example",
    ])
    func normalisingInPlaceGivesTheBytesTheStringFormGives(raw: String) {
        let bytes = Array(raw.utf8)
        let inPlace = bytes.withUnsafeBytes { raw in
            HostName.withNormalized(raw) { $0.map { String(decoding: $0, as: UTF8.self) } }
        }
        #expect(inPlace == HostName.normalized(raw))
        #expect(HostName.withNormalized(nil) { $0 == nil })
    }

    @Test func hostsAreRoutedWhateverTheirCaseDotOrPortAndAMalformedHostFallsBackToSNI() throws {
        let json = #"{"webCredentials": ["ABCDE12345.com.example.app"]}"#
        let ids = DomainIDs()
        let routes = SiteRoutes(
            try ["a.example", "b.example"].map { try #require(loadSite(json, domain: $0).published) }, domainIDs: ids)
        func served(host: String?, sni: String? = nil) -> (status: Int, domain: String?) {
            var request = FakeRequest(path: "/.well-known/apple-app-site-association", tlsServerName: sni)
            if let host { request.headers["Host"] = host }
            guard case .prepared(let prepared) = routes.route(request) else { return (0, nil) }
            return (prepared.status, ids.names(of: [prepared.domainID])[0])
        }
        for host in ["b.example", "B.EXAMPLE", "b.example.", "b.example:8443", "B.Example.:443"] {
            #expect(served(host: host) == (200, "b.example"), "\(host)")
        }
        #expect(served(host: "c.example") == (404, nil))
        #expect(served(host: nil) == (404, nil))
        #expect(served(host: nil, sni: "a.example") == (200, "a.example"))
        #expect(served(host: "bad host", sni: "a.example") == (200, "a.example"))
        #expect(served(host: "c.example", sni: "a.example") == (404, nil), "an unknown Host never falls back to SNI")
    }

    @Test func domainNumbersAreStableAcrossTablesAndNeverZero() throws {
        let ids = DomainIDs()
        let json = #"{"webCredentials": ["ABCDE12345.com.example.app"]}"#
        let published = try ["a.example", "b.example"].map { try #require(loadSite(json, domain: $0).published) }
        let first = SiteRoutes(published, domainIDs: ids)
        let reloaded = SiteRoutes(published.reversed(), domainIDs: ids)
        let a = try #require(ids.existingID(for: "a.example"))
        let b = try #require(ids.existingID(for: "b.example"))
        #expect(a != 0 && b != 0 && a != b)
        #expect(ids.names(of: [0, a, b, 99]) == [nil, "a.example", "b.example", nil])
        for table in [first, reloaded] {
            func domainID(host: String, path: String = "/.well-known/apple-app-site-association") -> Int? {
                guard case .prepared(let prepared) = table.route(FakeRequest(path: path, headers: ["Host": host]))
                else { return nil }
                return prepared.domainID
            }
            #expect(domainID(host: "a.example") == a)
            // One 404 serves every domain without HTTPS-only headers: its request is counted under its Host.
            #expect(domainID(host: "b.example", path: "/nothing-here") == PreparedResponse.domainFromHost)
            #expect(domainID(host: "c.example") == 0, "an unknown host's 404 belongs to no domain")
            #expect(Set(table.preparedResponses.map(\.domainID)) == [0, a, b, PreparedResponse.domainFromHost])
        }
        #expect(ids.existingID(for: "c.example") == nil, "looking a name up does not number it")
        #expect(ids.id(for: "c.example") == b + 1)
        // A domain that sends HSTS sends it on its 404 too: that 404 is its own, with its number.
        let strict = try #require(
            loadSite(
                #"{"webCredentials": ["ABCDE12345.com.example.app"], "hsts": {"maxAge": 600}}"#, domain: "s.example"
            )
            .published)
        let routes = SiteRoutes([strict], domainIDs: ids)
        guard case .prepared(let notFound) = routes.route(FakeRequest(path: "/x", headers: ["Host": "s.example"]))
        else {
            Issue.record("no prepared 404")
            return
        }
        #expect(notFound.status == 404 && notFound.domainID == ids.existingID(for: "s.example"))
        #expect(notFound.response.httpsOnlyHeaders.contains { $0.name == "Strict-Transport-Security" })
    }
}
