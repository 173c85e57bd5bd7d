import AASATestSupport
import Foundation
import Testing

/// `scripts/tls-scan`: testssl.sh against the real daemon, and proof that its verdicts can fail.
@Suite(.serialized) struct TLSScanTests {
    static let script = RepositoryPaths.root + "/scripts/tls-scan"

    /// The full scan (80-140 s): ECDSA P-256 and RSA-2048 certificates, protocols, every cipher, server
    /// preferences, server defaults, headers and every vulnerability check of testssl.sh.
    @Test(.timeLimit(.minutes(6))) func theDaemonOffersOnlyTLS12And13AndHasNoHighFinding() throws {
        let output = try Command.run(
            Self.script, ["--binary", RepositoryPaths.executable], currentDirectory: RepositoryPaths.root,
            timeout: 330)
        #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
        let offered = "protocols offered: TLS 1.2, TLS 1.3; not offered: SSLv2, SSLv3, TLS 1.0, TLS 1.1"
        #expect(output.stdout.components(separatedBy: offered).count == 3, "\(output.stdout)")
        #expect(output.stdout.components(separatedBy: "CRITICAL 0, HIGH 0, MEDIUM 0").count == 3, "\(output.stdout)")
        // Only AEAD suites with ECDHE, server order, for both key types.
        #expect(
            output.stdout.contains(
                "cipher order TLS 1.2: ECDHE-ECDSA-AES128-GCM-SHA256 ECDHE-ECDSA-AES256-GCM-SHA384 "
                    + "ECDHE-ECDSA-CHACHA20-POLY1305"), "\(output.stdout)")
        #expect(output.stdout.contains("cipher order TLS 1.2: ECDHE-RSA-AES128-GCM-SHA256"), "\(output.stdout)")
        #expect(output.stdout.hasSuffix("tls-scan: ok\n"))
    }

    /// The judgement of a testssl.sh result: old protocols and HIGH findings fail, the one finding about the
    /// development CA's certificates is accepted, and testssl's renegotiation verdict only counts as checked
    /// when tls-scan checked it itself (never in --evaluate).
    @Test func theVerdictFailsOnOldProtocolsAndHighFindings() throws {
        let directory = TemporaryDirectory("aasa-tls-scan")
        func finding(_ id: String, _ severity: String, _ text: String) -> String {
            #"{"id": "\#(id)", "ip": "scan.example/127.0.0.1", "port": "8443", "severity": "\#(severity)", "finding": "\#(text)"}"#
        }
        let clean = [
            finding("SSLv2", "OK", "not offered"), finding("SSLv3", "OK", "not offered"),
            finding("TLS1", "INFO", "not offered"), finding("TLS1_1", "INFO", "not offered"),
            finding("TLS1_2", "OK", "offered"), finding("TLS1_3", "OK", "offered with final"),
            finding("cert_revocation", "HIGH", "Neither CRL nor OCSP URI provided"),
            #"{"id": "engine_problem", "ip": "/", "port": "443", "severity": "WARN", "finding": "No engine"}"#,
        ]
        let good = try directory.write("good.json", "[" + clean.joined(separator: ",") + "]")
        let passing = try Command.run(Self.script, ["--evaluate", good, "good"])
        #expect(passing.status == 0, "\(passing.stdout)")
        #expect(passing.stdout.contains("good: ? s, CRITICAL 0, HIGH 0, MEDIUM 0, LOW 0, WARN 0, OK 5, INFO 2"))
        #expect(passing.stdout.contains("accepted cert_revocation (HIGH: Neither CRL nor OCSP URI provided)"))

        var weak = clean.filter { !$0.contains(#""TLS1""#) }
        weak += [
            finding("TLS1", "LOW", "offered"), finding("heartbleed", "CRITICAL", "VULNERABLE"),
            finding("secure_client_renego", "HIGH", "VULNERABLE, DoS threat"),
            finding("BREACH", "MEDIUM", "potentially VULNERABLE"),
        ]
        let bad = try directory.write("bad.json", "[" + weak.joined(separator: ",") + "]")
        let failing = try Command.run(Self.script, ["--evaluate", bad, "bad"])
        #expect(failing.status == 1, "\(failing.stdout)")
        for line in [
            "FAIL TLS 1.0 is offered: only TLS 1.2 and 1.3 may be", "FAIL CRITICAL heartbleed: VULNERABLE",
            "FAIL HIGH secure_client_renego: VULNERABLE, DoS threat", "MEDIUM BREACH: potentially VULNERABLE",
            "protocols offered: TLS 1.0, TLS 1.2, TLS 1.3",
        ] {
            #expect(failing.stdout.contains(line), "\(line)\n\(failing.stdout)")
        }
        let empty = try directory.write("empty.json", "[]")
        let nothing = try Command.run(Self.script, ["--evaluate", empty, "empty"])
        #expect(nothing.status == 1)
        #expect(nothing.stdout.contains("FAIL no result for TLS 1.2: the protocol scan did not run"))
    }

    /// tls-scan's own renegotiation check, which replaces testssl.sh 3.0.8's flaky verdict, tells a server
    /// that renegotiates at the client's request (OpenSSL with -client_renegotiation) from one that refuses.
    @Test func theRenegotiationCheckCatchesAServerThatRenegotiates() throws {
        let directory = TemporaryDirectory("aasa-tls-scan")
        try directory.write(
            "site-config/localhost/site.json",
            #"{"universalLinks": {"apps": [{"appIDs": ["ABCDE12345.com.example.app"], "rules": [{"path": "/*"}]}]}}"#)
        let issued = try Command.run(
            RepositoryPaths.executable, ["certs", "dev", "--config", "site-config", "--certs", "certs"],
            currentDirectory: directory.path)
        #expect(issued.status == 0, "\(issued.stderr)")
        for (flag, expected) in [("-client_renegotiation", Int32(1)), ("-no_renegotiation", Int32(0))] {
            let port = freePort()
            let server = try ChildProcess(
                "openssl",
                [
                    "s_server", "-accept", "\(port)", "-cert", "certs/localhost/fullchain.pem", "-key",
                    "certs/localhost/privkey.pem", "-www", flag,
                ], currentDirectory: directory.path, logFile: nil)
            defer { server.stop(grace: 1) }
            var listening = false
            for _ in 0..<TestTime.tries(50) where !listening {
                usleep(100_000)
                listening =
                    (try? Command.run("openssl", ["s_client", "-connect", "127.0.0.1:\(port)"], timeout: 5))?
                    .stdout.contains("BEGIN CERTIFICATE") == true
            }
            #expect(listening)
            let check = try Command.run(Self.script, ["--renegotiation", "\(port)"], timeout: 30)
            #expect(check.status == expected, "\(flag): \(check.stdout)\(check.stderr)")
        }
    }
}
