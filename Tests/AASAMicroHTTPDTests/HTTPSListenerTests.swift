import AASACore
import AASAMicroHTTPD
import AASAOpenSSL
import AASATestSupport
import Foundation
import Testing

/// Certificates shared by the HTTPS tests: a.test (default), b.test, *.wild.test, rsa.test (RSA key).
private struct Fixture {
    let pki: TestPKI
    let a: (entry: CertificateTable.Entry, certificate: X509Certificate)
    let b: (entry: CertificateTable.Entry, certificate: X509Certificate)
    let wild: (entry: CertificateTable.Entry, certificate: X509Certificate)
    let rsa: (entry: CertificateTable.Entry, certificate: X509Certificate)

    init() throws {
        pki = try TestPKI()
        a = try pki.entry(["a.test"])
        b = try pki.entry(["b.test", "B2.test"])
        wild = try pki.entry(["*.wild.test"])
        rsa = try pki.entry(["rsa.test"], key: .rsa(bits: 2048))
    }

    func table() throws -> CertificateTable {
        try CertificateTable(entries: [a.entry, b.entry, wild.entry, rsa.entry], defaultEntry: 0)
    }

    func listener(priorities: String = TLSConfiguration.modernPriorities) throws -> HTTPListener {
        try HTTPListener(
            configuration: testConfiguration(tls: TLSConfiguration(certificates: table(), priorities: priorities)),
            routes: TestRoutes(helloBody: "secure\n"))
    }
}

/// Pulls `subject=CN = x` out of `openssl s_client -brief` output (it goes to stderr).
private func peerCommonName(_ result: ToolResult) -> String? {
    for line in (result.error + result.output).split(separator: "\n") where line.hasPrefix("Peer certificate:") {
        if let range = line.range(of: "CN = ") { return String(line[range.upperBound...]) }
    }
    return nil
}

@Suite(.serialized) struct HTTPSListenerTests {
    @Test func sniSelectsEachNamesCertificateAndCurlVerifiesIt() throws {
        let fixture = try Fixture()
        let listener = try fixture.listener()
        defer { listener.stop(timeout: .zero) }
        for host in ["a.test", "b.test", "b2.test", "sub.wild.test", "rsa.test"] {
            // curl fails verification if the certificate presented does not cover `host`.
            let result = try curl("/echo", port: listener.port, host: host, tls: true, caPath: fixture.pki.caPath)
            #expect(result.status == 0, "\(host): \(result.error)")
            let fields = echoFields(splitResponse(result.output).body)
            #expect(fields["sni"] == host, "tlsServerName must reach the router")
            #expect(fields["host"] == "\(host):\(listener.port)")
        }
    }

    @Test(arguments: [
        ("a.test", "a.test"),
        ("b.test", "b.test"),
        ("B.TEST", "b.test"),
        ("sub.wild.test", "*.wild.test"),
        ("wild.test", "a.test"),  // apex of a wildcard: default
        ("x.sub.wild.test", "a.test"),  // two labels deep: default
        ("unknown.test", "a.test"),
        ("127.0.0.1", "a.test"),
    ])
    func presentedCertificateFollowsTheTable(serverName: String, expectedCN: String) throws {
        let fixture = try Fixture()
        let listener = try fixture.listener()
        defer { listener.stop(timeout: .zero) }
        let result = try tlsHandshake(port: listener.port, serverName: serverName, caPath: fixture.pki.caPath)
        #expect(peerCommonName(result) == expectedCN, "\(result.error)")
    }

    @Test func withoutSNITheDefaultCertificateIsServed() throws {
        let fixture = try Fixture()
        let listener = try fixture.listener()
        defer { listener.stop(timeout: .zero) }
        let result = try tlsHandshake(port: listener.port, serverName: nil, caPath: fixture.pki.caPath)
        #expect(peerCommonName(result) == "a.test", "\(result.error)")
        // And the router is told there was no SNI.
        let echo = try runTool([
            "curl", "-sS", "--cacert", fixture.pki.caPath, "https://127.0.0.1:\(listener.port)/echo", "-k",
        ])
        #expect(echoFields(echo.output)["sni"] == "<nil>")
    }

    @Test func tls13AndTls12WithECDSAAndRSAAreNegotiated() throws {
        let fixture = try Fixture()
        let listener = try fixture.listener()
        defer { listener.stop(timeout: .zero) }
        let port = listener.port
        let ca = fixture.pki.caPath
        let tls13 = try tlsHandshake(port: port, serverName: "a.test", caPath: ca, extra: ["-tls1_3"])
        #expect(tls13.error.contains("Protocol version: TLSv1.3"), "\(tls13.error)")
        #expect(tls13.error.contains("Verification: OK"))
        let ecdsa = try tlsHandshake(port: port, serverName: "a.test", caPath: ca, extra: ["-tls1_2"])
        #expect(ecdsa.error.contains("Protocol version: TLSv1.2"), "\(ecdsa.error)")
        #expect(ecdsa.error.contains("Ciphersuite: ECDHE-ECDSA-"))
        let rsa = try tlsHandshake(port: port, serverName: "rsa.test", caPath: ca, extra: ["-tls1_2"])
        #expect(rsa.error.contains("Ciphersuite: ECDHE-RSA-"), "\(rsa.error)")
        #expect(peerCommonName(rsa) == "rsa.test")
        // GCM/ChaCha only: a CBC-only TLS 1.2 client is refused.
        let cbc = try tlsHandshake(
            port: port, serverName: "a.test", caPath: ca, extra: ["-tls1_2", "-cipher", "ECDHE-ECDSA-AES128-SHA256"])
        #expect(cbc.status != 0)
    }

    @Test func tls11IsRefusedUnlessThePrioritiesAllowIt() throws {
        let fixture = try Fixture()
        // SECLEVEL=0 makes the OpenSSL 3 client really offer TLS 1.1, so the refusal is the server's.
        let offerTLS11 = ["-tls1_1", "-cipher", "DEFAULT@SECLEVEL=0"]
        let modern = try fixture.listener()
        defer { modern.stop(timeout: .zero) }
        let refused = try tlsHandshake(
            port: modern.port, serverName: "a.test", caPath: fixture.pki.caPath, extra: offerTLS11)
        #expect(refused.status != 0)
        #expect(!refused.error.contains("Protocol version: TLSv1.1"))

        // Control: the same client succeeds against a listener configured to allow TLS 1.1.
        let legacy = try fixture.listener(priorities: "NORMAL:+VERS-TLS1.1")
        defer { legacy.stop(timeout: .zero) }
        let accepted = try tlsHandshake(
            port: legacy.port, serverName: "a.test", caPath: fixture.pki.caPath, extra: offerTLS11)
        #expect(accepted.error.contains("Protocol version: TLSv1.1"), "\(accepted.error)")
    }

    @Test func invalidPrioritiesFailTheStartWithGnuTLSsReason() throws {
        let fixture = try Fixture()
        let error = #expect(throws: HTTPListenerError.self) { _ = try fixture.listener(priorities: "NOT-A-PRIORITY") }
        #expect(error?.code == .startFailed)
        #expect(error?.reason.contains("NOT-A-PRIORITY") == true, "\(error?.reason ?? "")")
    }

    @Test func keepAliveWorksOverTLS() throws {
        let fixture = try Fixture()
        let listener = try fixture.listener()
        defer { listener.stop(timeout: .zero) }
        let base = "https://a.test:\(listener.port)"
        let result = try runTool([
            "curl", "-sS", "--cacert", fixture.pki.caPath, "--resolve", "a.test:\(listener.port):127.0.0.1",
            "-o", "/dev/null", "-o", "/dev/null", "-w", "%{num_connects}\n", "\(base)/hello", "\(base)/hello",
        ])
        #expect(result.output == "1\n0\n", "\(result.error)")
    }

    /// Small responses go out corked (head and body in one TLS record, see TLSCork): each must still leave at
    /// once. Were the kernel's TCP_CORK left on, every response would wait its 200 ms timer: 20 requests on
    /// one connection would take 4 s instead of milliseconds.
    @Test func corkedResponsesOnAKeepAliveConnectionAreNotDelayed() throws {
        let fixture = try Fixture()
        let listener = try fixture.listener()
        defer { listener.stop(timeout: .zero) }
        let base = "https://a.test:\(listener.port)"
        var arguments = [
            "curl", "-sS", "--cacert", fixture.pki.caPath, "--resolve", "a.test:\(listener.port):127.0.0.1",
            "-w", "%{num_connects} %{http_code} %{time_total}\n",
        ]
        for path in Array(repeating: "/hello", count: 10) + Array(repeating: "/dynamic", count: 10) {
            arguments += ["-o", "/dev/null", base + path]
        }
        let start = Date()
        let result = try runTool(arguments)
        let elapsed = Date().timeIntervalSince(start)
        let lines = result.output.split(separator: "\n")
        #expect(lines.count == 20, "\(result.error)")
        #expect(lines.dropFirst().allSatisfy { $0.hasPrefix("0 200 ") }, "\(result.output)")
        #expect(elapsed < 2.5, "20 keep-alive requests took \(elapsed) s:\n\(result.output)")
    }

    @Test func replaceCertificatesAffectsNewConnectionsAndKeepsOpenOnes() throws {
        let fixture = try Fixture()
        let listener = try fixture.listener()
        defer { listener.stop(timeout: .zero) }
        let ca = fixture.pki.caPath

        // Open a TLS connection and use it once.
        let client = Process()
        client.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        client.arguments = [
            "openssl", "s_client", "-connect", "127.0.0.1:\(listener.port)", "-servername", "a.test", "-CAfile", ca,
            "-quiet", "-ign_eof",
        ]
        let input = Pipe()
        let output = Pipe()
        client.standardInput = input
        client.standardOutput = output
        client.standardError = FileHandle.nullDevice
        try client.run()
        ChildPipe.write(Data("GET /hello HTTP/1.1\r\nHost: a.test\r\n\r\n".utf8), to: input.fileHandleForWriting)
        Thread.sleep(forTimeInterval: 0.5)

        // Swap in a table where a.test has a new certificate.
        let renewed = try fixture.pki.entry(["a.test"])
        try listener.replaceCertificates(CertificateTable(entries: [renewed.entry, fixture.b.entry]))
        #expect(renewed.certificate.sha256Fingerprint != fixture.a.certificate.sha256Fingerprint)

        // The open connection still works...
        ChildPipe.write(
            Data("GET /hello HTTP/1.1\r\nHost: a.test\r\nConnection: close\r\n\r\n".utf8),
            to: input.fileHandleForWriting)
        try input.fileHandleForWriting.close()
        let transcript = String(decoding: ChildPipe.readToEnd(output.fileHandleForReading), as: UTF8.self)
        client.waitUntilExit()
        #expect(transcript.components(separatedBy: "HTTP/1.1 200").count == 3, "\(transcript)")

        // ...and a new connection gets the new certificate.
        let directory = try makeTemporaryDirectory()
        let served = try runTool(
            [
                "openssl", "s_client", "-connect", "127.0.0.1:\(listener.port)", "-servername", "a.test", "-CAfile",
                ca, "-showcerts",
            ], input: "")
        let pem = served.output.components(separatedBy: "-----BEGIN CERTIFICATE-----").dropFirst().first
            .map {
                "-----BEGIN CERTIFICATE-----" + $0.components(separatedBy: "-----END CERTIFICATE-----")[0]
                    + "-----END CERTIFICATE-----\n"
            }
        let presented = try X509Certificate(pemEncoded: pem ?? "")
        #expect(presented.sha256Fingerprint == renewed.certificate.sha256Fingerprint)
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Every name gets its own leaf followed by the intermediate its chain names, though the table imported that
    /// intermediate once for all chains.
    @Test func eachNameGetsItsWholeChainWhenChainsShareTheirIntermediate() throws {
        let pki = try TestPKI()
        let ca = try String(contentsOfFile: pki.caPath, encoding: .utf8)
        var entries: [CertificateTable.Entry] = []
        var leaves: [X509Certificate] = []
        for name in ["a.test", "b.test", "c.test"] {
            var issued = try pki.entry([name])
            issued.entry.certificateChainPEM += Array(ca.utf8)
            entries.append(issued.entry)
            leaves.append(issued.certificate)
        }
        let listener = try HTTPListener(
            configuration: testConfiguration(tls: TLSConfiguration(certificates: CertificateTable(entries: entries))),
            routes: TestRoutes(helloBody: "secure\n"))
        defer { listener.stop(timeout: .zero) }
        let caFingerprint = try X509Certificate(pemEncoded: ca).sha256Fingerprint
        for (name, leaf) in zip(["a.test", "b.test", "c.test"], leaves) {
            let served = try runTool(
                [
                    "openssl", "s_client", "-connect", "127.0.0.1:\(listener.port)", "-servername", name, "-CAfile",
                    pki.caPath, "-showcerts", "-verify_return_error",
                ], input: "")
            #expect(served.status == 0, "\(name): \(served.error)")
            let presented = try served.output.components(separatedBy: "-----BEGIN CERTIFICATE-----").dropFirst().map {
                try X509Certificate(
                    pemEncoded: "-----BEGIN CERTIFICATE-----"
                        + $0.components(separatedBy: "-----END CERTIFICATE-----")[0] + "-----END CERTIFICATE-----\n")
            }
            #expect(presented.map(\.sha256Fingerprint) == [leaf.sha256Fingerprint, caFingerprint], "\(name)")
        }
    }

    @Test func replacedTablesAreFreedWhenTheirLastConnectionCloses() throws {
        let fixture = try Fixture()
        let listener = try fixture.listener()
        defer { listener.stop(timeout: .zero) }
        weak var replaced: CertificateTable?
        do {
            let second = try CertificateTable(entries: [fixture.b.entry])
            replaced = second
            try listener.replaceCertificates(second)
        }
        // A connection accepted under the second table pins it...
        let handshake = try tlsHandshake(port: listener.port, serverName: "b.test", caPath: fixture.pki.caPath)
        #expect(peerCommonName(handshake) == "b.test")
        try listener.replaceCertificates(fixture.table())
        // ...until libmicrohttpd has closed that connection; then nothing holds it.
        let deadline = TestTime.deadline(3)
        while replaced != nil && Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        #expect(replaced == nil)
        #expect(
            peerCommonName(try tlsHandshake(port: listener.port, serverName: "b.test", caPath: fixture.pki.caPath))
                == "b.test")
    }

    @Test func concurrentListenersEachServeTheirOwnCertificates() throws {
        let first = try Fixture()
        let second = try Fixture()
        let one = try first.listener()
        defer { one.stop(timeout: .zero) }
        let two = try second.listener()
        defer { two.stop(timeout: .zero) }
        // Same name on both; each CA verifies only its own listener's certificate.
        #expect(try curl("/hello", port: one.port, host: "a.test", tls: true, caPath: first.pki.caPath).status == 0)
        #expect(try curl("/hello", port: two.port, host: "a.test", tls: true, caPath: second.pki.caPath).status == 0)
        #expect(try curl("/hello", port: one.port, host: "a.test", tls: true, caPath: second.pki.caPath).status != 0)
    }
}
