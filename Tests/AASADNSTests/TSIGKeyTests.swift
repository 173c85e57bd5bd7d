import AASADNS
import Testing

/// Key files in BIND's format: what `tsig-keygen` writes reads; anything else is an error naming the file and line.
struct TSIGKeyTests {
    @Test func tsigKeygensOutputReadsWithCommentsAround() throws {
        let key = try TSIGKey(
            parsing: """
                # made by tsig-keygen
                key "ACME-Key" {
                \talgorithm hmac-sha512; // the default is sha256
                \tsecret "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA==";
                };
                """, path: "/keys/acme.key")
        #expect(key.name == "acme-key.")
        #expect(key.algorithm == "hmac-sha512.")
        #expect(key.description == "TSIG key 'acme-key' (hmac-sha512)")
        #expect(!key.description.contains("c2Vj"))
    }

    @Test(arguments: [
        ("", "1: no key statement"),
        (
            "key \"a\" {\n algorithm hmac-md5;\n secret \"c2VjcmV0LXNlY3JldC1zZWNyZXQ=\";\n};",
            "algorithm 'hmac-md5' is not supported"
        ),
        ("key \"a\" {\n algorithm hmac-sha256;\n};", "no secret"),
        ("key \"a\" {\n algorithm hmac-sha256;\n secret \"c2hvcnQ=\";\n};", "no secret of at least 16 bytes"),
        ("key \"a\" {\n algorithm hmac-sha256;\n colour blue;\n};", "3: unknown field 'colour'"),
        (
            "key \"a\" { algorithm hmac-sha256; secret \"c2VjcmV0LXNlY3JldC1zZWNyZXQ=\"; };\nkey \"b\" {};",
            "'key' after the key statement"
        ),
    ])
    func aFileThatIsNotOneKeyIsNamedWithTheLine(text: String, expected: String) {
        let error = #expect(throws: DNSError.self) { try TSIGKey(parsing: text, path: "/keys/acme.key") }
        #expect(error?.message.hasPrefix("/keys/acme.key:") == true, "\(String(describing: error))")
        #expect(error?.message.contains(expected) == true, "\(String(describing: error))")
        #expect(error?.hint.contains("tsig-keygen") == true)
    }

    @Test(
        arguments: [
            ("127.0.0.1:5353", "127.0.0.1", 5353), ("ns1.example", "ns1.example", 53), ("[::1]:53", "::1", 53),
            ("::1", "::1", 53),
        ] as [(String, String, UInt16)])
    func serverAddressesRead(text: String, host: String, port: UInt16) throws {
        let address = try DNSServerAddress(parsing: text)
        #expect(address.host == host && address.port == port)
    }

    @Test(arguments: ["", ":53", "host:0", "host:99999", "[::1", "a/b:53"])
    func badServerAddressesAreNamed(text: String) {
        let error = #expect(throws: DNSError.self) { try DNSServerAddress(parsing: text) }
        #expect(error?.message.contains("'\(text)' is not a DNS server address") == true)
    }
}
