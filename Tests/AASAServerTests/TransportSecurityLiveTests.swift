import AASACore
import AASAOpenSSL
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// A CA with an OCSP responder key, a leaf whose AIA names a responder, and real OCSP responses made by
/// `openssl ocsp` (the same tool an operator's renewal job would use).
struct OCSPFixture {
    let folder: String

    /// Issues `certs/<domain>/fullchain.pem` (leaf + CA) and `privkey.pem` for `domain` in `folder`;
    /// `responder` false leaves the AIA OCSP URL out.
    init(folder: String, domain: String, responder: Bool = true) throws {
        self.folder = folder
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Self.openssl(
            [
                "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "ca.key",
                "-out", "ca.pem", "-days", "30", "-subj", "/CN=OCSP test CA", "-addext",
                "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
            ], in: folder)
        try Self.openssl(
            [
                "req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", "privkey.pem",
                "-out", "leaf.csr", "-subj", "/CN=\(domain)",
            ], in: folder)
        var extensions = "subjectAltName=DNS:\(domain)\nextendedKeyUsage=serverAuth\n"
        if responder { extensions += "authorityInfoAccess=OCSP;URI:http://127.0.0.1:9/ocsp\n" }
        try extensions.write(toFile: folder + "/leaf.ext", atomically: true, encoding: .utf8)
        try Self.openssl(
            [
                "x509", "-req", "-in", "leaf.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out",
                "leaf.pem", "-days", "30", "-extfile", "leaf.ext",
            ], in: folder)
        let leaf = try String(contentsOfFile: folder + "/leaf.pem", encoding: .utf8)
        let ca = try String(contentsOfFile: folder + "/ca.pem", encoding: .utf8)
        try (leaf + ca).write(toFile: folder + "/fullchain.pem", atomically: true, encoding: .utf8)
        // The responder's database: one valid certificate (openssl ca's index.txt format).
        let certificate = try X509Certificate(pemEncoded: leaf)
        let serial = try Self.openssl(["x509", "-in", "leaf.pem", "-noout", "-serial"], in: folder)
            .replacingOccurrences(of: "serial=", with: "").trimmingCharacters(in: .whitespacesAndNewlines)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyMMddHHmmss'Z'"
        try "V\t\(formatter.string(from: certificate.notAfter))\t\t\(serial)\tunknown\t/CN=\(domain)\n"
            .write(toFile: folder + "/index.txt", atomically: true, encoding: .utf8)
    }

    /// Writes an OCSP response for the leaf to `path`, valid for `days`, signed by the CA.
    func writeResponse(to path: String, days: Int = 2) throws {
        try Self.openssl(
            ["ocsp", "-issuer", "ca.pem", "-cert", "leaf.pem", "-reqout", "request.der", "-no_nonce"], in: folder)
        try Self.openssl(
            [
                "ocsp", "-index", "index.txt", "-rsigner", "ca.pem", "-rkey", "ca.key", "-CA", "ca.pem", "-reqin",
                "request.der", "-respout", path, "-ndays", "\(days)",
            ], in: folder)
    }

    /// Copies the chain and key into `certs/<domain>/`.
    func install(into certificateFolder: String) throws {
        try FileManager.default.createDirectory(atPath: certificateFolder, withIntermediateDirectories: true)
        for name in ["fullchain.pem", "privkey.pem"] {
            try? FileManager.default.removeItem(atPath: certificateFolder + "/" + name)
            try FileManager.default.copyItem(atPath: folder + "/" + name, toPath: certificateFolder + "/" + name)
        }
    }

    @discardableResult
    static func openssl(_ arguments: [String], in folder: String) throws -> String {
        let result = try Command.run("openssl", arguments, currentDirectory: folder)
        guard result.status == 0 else { throw HTTPProbe.Failure(description: "openssl \(arguments): \(result.stderr)") }
        return result.stdout
    }
}

/// What `openssl s_client -status` saw of the staple.
func stapleReport(port: UInt16, serverName: String, caFile: String) throws -> String {
    let result = try Command.run(
        "openssl",
        [
            "s_client", "-connect", "127.0.0.1:\(port)", "-servername", serverName, "-status", "-CAfile", caFile,
        ], input: [], timeout: 20)
    return result.stdout
}

@Suite(.serialized) struct TransportSecurityLiveTests {
    static let hstsSite = #"""
        {"webCredentials": ["ABCDE12345.com.example.app"], "hsts": {"maxAge": 63072000, "includeSubDomains": true}}
        """#

    @Test func hstsIsSentOverHTTPSAndNeverOverPlainHTTP() throws {
        let live = try LiveServer(extraDomains: ["secure.example": Self.hstsSite])
        for path in ["/.well-known/apple-app-site-association", "/apple-app-site-association", "/missing"] {
            let response = try live.get("secure.example", path)
            #expect(
                response.headers["strict-transport-security"] == "max-age=63072000; includeSubDomains",
                "\(path): \(response.rawHeaders)")
            let plain = try Curl.request(
                "http://127.0.0.1:\(live.http)\(path)", headers: ["Host: secure.example"])
            #expect(plain.status == response.status)
            #expect(plain.headers["strict-transport-security"] == nil, "\(path) over HTTP: \(plain.rawHeaders)")
        }
        // Domains without the setting send none.
        #expect(
            try live.get("shop.example", "/.well-known/apple-app-site-association").headers[
                "strict-transport-security"] == nil)
    }

    @Test func hstsFollowsAReload() throws {
        let live = try LiveServer(configure: { $0.watchForChanges = false })
        #expect(
            try live.get("shop.example", "/.well-known/apple-app-site-association").headers[
                "strict-transport-security"] == nil)
        let file = live.configDirectory + "/shop.example/site.json"
        var text = try String(contentsOfFile: file, encoding: .utf8)
        let brace = try #require(text.firstIndex(of: "{"))
        text.insert(contentsOf: #""hsts": true, "#, at: text.index(after: brace))
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        live.server.reload(trigger: .signal)
        #expect(
            try live.get("shop.example", "/.well-known/apple-app-site-association").headers[
                "strict-transport-security"] == "max-age=31536000")
    }

    @Test func aHostNamingAnotherConfiguredDomainThanSNIGets421() throws {
        let live = try LiveServer()
        // SNI shop.example (the URL's host), Host links.example: both are ours, so this is misdirected.
        let misdirected = try live.get(
            "shop.example", "/.well-known/apple-app-site-association", headers: ["Host: links.example"])
        #expect(misdirected.status == 421, "\(misdirected.rawHeaders)")
        #expect(!misdirected.text.contains("applinks"))
        let proper = try live.get("links.example", "/.well-known/apple-app-site-association")
        #expect(proper.status == 200)
        // Without SNI (an IP literal in the URL) the Host decides, as before.
        let bare = try Curl.request(
            "https://127.0.0.1:\(live.https)/.well-known/apple-app-site-association",
            headers: ["Host: links.example"], extra: ["--insecure"])
        #expect(bare.status == 200, "\(bare.error)")
        // Plain HTTP has no SNI, so no 421.
        #expect(try live.fetch("links.example").status == 200)
    }

    /// What `openssl s_client` says of a handshake for `domain`, saving the session (and its ticket) to
    /// `sessionOut` or offering the one in `sessionIn`: "New" or "Reused", with the answer to a request.
    static func handshake(_ live: LiveServer, _ domain: String, sessionOut: String? = nil, sessionIn: String? = nil)
        throws -> String
    {
        var arguments = [
            "s_client", "-connect", "127.0.0.1:\(live.https)", "-servername", domain, "-CAfile", live.caFile,
            "-ign_eof",
        ]
        if let sessionOut { arguments += ["-sess_out", sessionOut] }
        if let sessionIn { arguments += ["-sess_in", sessionIn] }
        let request =
            "GET /.well-known/apple-app-site-association HTTP/1.1\r\nHost: \(domain)\r\nConnection: close\r\n\r\n"
        return try Command.run("openssl", arguments, input: Array(request.utf8), timeout: 20).stdout
    }

    /// A client that reconnects resumes with the TLS 1.3 ticket of its last connection (no certificate, no
    /// signature) and is served as on a full handshake; with tickets off, every handshake is a full one.
    @Test func aReconnectingClientResumesItsSessionWithATicket() throws {
        let scratch = TemporaryDirectory("aasa-tickets")
        let session = scratch.path + "/session.pem"
        let live = try LiveServer()
        let first = try Self.handshake(live, "shop.example", sessionOut: session)
        #expect(first.contains("New, TLSv1.3") && first.contains("HTTP/1.1 200"), "\(first)")
        #expect(FileManager.default.fileExists(atPath: session), "the server sent no ticket")
        let resumed = try Self.handshake(live, "shop.example", sessionIn: session)
        #expect(resumed.contains("Reused, TLSv1.3"), "\(resumed)")
        #expect(resumed.contains("HTTP/1.1 200") && resumed.contains("applinks"))

        let off = try LiveServer(configure: { $0.sessionTicketLifetime = nil })
        let noTicket = scratch.path + "/none.pem"
        _ = try Self.handshake(off, "shop.example", sessionOut: noTicket)
        #expect(!FileManager.default.fileExists(atPath: noTicket), "a ticket was sent with tickets off")
        // A ticket of another server (other keys) is not accepted: a full handshake, still served.
        let foreign = try Self.handshake(off, "shop.example", sessionIn: session)
        #expect(foreign.contains("New, TLSv1.3") && foreign.contains("HTTP/1.1 200"), "\(foreign)")
    }

    @Test func aValidOCSPResponseIsStapledForClientsThatAskForIt() throws {
        let scratch = TemporaryDirectory("aasa-ocsp")
        let fixture = try OCSPFixture(folder: scratch.path + "/pki", domain: "shop.example")
        let live = try LiveServer(prepare: { config in
            let certificates = (config as NSString).deletingLastPathComponent + "/certs/shop.example"
            try fixture.install(into: certificates)
            try fixture.writeResponse(to: certificates + "/ocsp.der")
        })
        let report = try stapleReport(port: live.https, serverName: "shop.example", caFile: fixture.folder + "/ca.pem")
        #expect(report.contains("OCSP Response Status: successful"), "\(report)")
        #expect(report.contains("Cert Status: good"), "\(report)")
        #expect(report.contains("Verify return code: 0 (ok)"), "\(report)")
        // Another domain's certificate has no staple file: nothing is sent for it.
        let other = try stapleReport(port: live.https, serverName: "links.example", caFile: live.caFile)
        #expect(other.contains("OCSP response: no response sent"), "\(other)")
    }

    @Test func aStapleThatDoesNotCheckOutIsNotSentAndIsExplained() throws {
        let scratch = TemporaryDirectory("aasa-ocsp")
        let fixture = try OCSPFixture(folder: scratch.path + "/pki", domain: "shop.example")
        let other = try OCSPFixture(folder: scratch.path + "/other", domain: "shop.example")
        let certs = scratch.path + "/certs/shop.example"
        try fixture.install(into: certs)
        try other.writeResponse(to: certs + "/ocsp.der")  // signed by another CA, about another certificate
        var findings = CertificateDirectory(path: scratch.path + "/certs").load().diagnostics
        #expect(findings.count == 1)
        #expect(findings.first?.rule == .ocspStaple)
        #expect(findings.first?.severity == .warning)
        #expect(findings.first?.file == certs + "/ocsp.der")
        #expect(findings.first?.message.contains("not stapled") == true, "\(findings)")

        try fixture.writeResponse(to: certs + "/ocsp.der", days: 1)
        #expect(CertificateDirectory(path: scratch.path + "/certs").load().diagnostics.isEmpty)
        findings = CertificateDirectory(path: scratch.path + "/certs").load(now: Date().addingTimeInterval(3 * 86_400))
            .diagnostics.filter { $0.rule == .ocspStaple }
        #expect(findings.first?.message.contains("stale") == true, "\(findings)")

        let bare = try OCSPFixture(folder: scratch.path + "/bare", domain: "shop.example", responder: false)
        try bare.install(into: certs)
        try bare.writeResponse(to: certs + "/ocsp.der")
        findings = CertificateDirectory(path: scratch.path + "/certs").load().diagnostics
        #expect(findings.first?.message.contains("names no OCSP responder") == true, "\(findings)")
    }
}
