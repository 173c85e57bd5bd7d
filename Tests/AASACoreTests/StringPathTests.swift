import Testing

@testable import AASACore

/// A folder and a name joined in one allocation are the same string `+` makes, whatever the two hold.
@Suite struct StringPathTests {
    @Test(arguments: [
        ("/srv/aasa/site-config", "shop.example"),
        ("", "site.json"),
        ("/", "etc"),
        ("certs", ""),
        ("", ""),
        ("a", "b"),
        ("/srv/äöü/配置", "ドメイン.example"),
        (String(repeating: "long-folder-name/", count: 40), String(repeating: "x", count: 300)),
    ])
    func joinsAsPlusDoes(folder: String, name: String) {
        let joined = folder.joiningPath(name)
        #expect(joined == folder + "/" + name)
        #expect(Array(joined.utf8) == Array(folder.utf8) + [UInt8(ascii: "/")] + Array(name.utf8))
        #expect(joined.utf8.count == folder.utf8.count + 1 + name.utf8.count)
    }

    @Test func joinsStringsMadeFromSubstringsAndInterpolation() {
        let path = "/srv/aasa/site-config/shop.example/site.json"
        let folder = String(path.prefix(while: { $0 != "." }).dropLast(5))
        let name = "\(folder.count)-\(path.suffix(9))"
        #expect(folder.joiningPath(name) == folder + "/" + name)
    }
}
