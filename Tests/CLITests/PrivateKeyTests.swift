import AASATestSupport
import Foundation
import Testing

/// Private keys: a key other users can read is reported by `check`, `serve`'s log and `/status`, refused by
/// `serve --strict`, and no key byte is ever served or logged.
@Suite(.serialized) struct PrivateKeyTests {
    static let site =
        #"{"universalLinks": {"apps": [{"appIDs": ["ABCDE12345.com.example.app"], "rules": [{"path": "/*"}]}]}}"#

    /// A config folder with `domains` and development certificates for them, in a fresh folder.
    static func prepare(_ domains: [String]) throws -> TemporaryDirectory {
        let directory = TemporaryDirectory("aasa-keys")
        for domain in domains { try directory.write("site-config/\(domain)/site.json", site) }
        let issued = try Command.run(
            RepositoryPaths.executable, ["certs", "dev", "--config", "site-config", "--certs", "certs"],
            currentDirectory: directory.path)
        #expect(issued.status == 0, "\(issued.stderr)")
        return directory
    }

    static func chmod(_ path: String, _ mode: Int) throws {
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    static func status(_ serve: ServeProcess) throws -> [String: Any] {
        let response = try Curl.request("http://127.0.0.1:\(serve.admin)/status")
        return try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    static func certificate(_ serve: ServeProcess, _ folder: String) throws -> [String: Any] {
        try #require((try status(serve)["certificates"] as? [String: Any])?[folder] as? [String: Any])
    }

    /// The subject common name the server presents for `name` (SNI).
    static func presentedName(_ serve: ServeProcess, _ name: String) throws -> String? {
        let output = try Command.run(
            "openssl", ["s_client", "-connect", "127.0.0.1:\(serve.port)", "-servername", name],
            input: Array("Q\n".utf8), timeout: 15)
        let subject = output.stdout.split(separator: "\n").first { $0.hasPrefix("subject=") }
        return subject?.components(separatedBy: "CN").last?.trimmingCharacters(in: CharacterSet(charactersIn: " ="))
    }

    @Test func checkWarnsAboutKeysOthersCanReadAndStrictFails() throws {
        let directory = try Self.prepare(["a.example"])
        let key = directory.path + "/certs/a.example/privkey.pem"
        let caKey = directory.path + "/certs/dev-ca/ca-key.pem"
        func check(_ extra: [String] = []) throws -> Command.Output {
            try Command.run(
                RepositoryPaths.executable, ["check", "--config", "site-config", "--certs", "certs"] + extra,
                currentDirectory: directory.path)
        }
        let clean = try check(["--strict"])
        #expect(clean.status == 0, "\(clean.stdout)")
        #expect(!clean.stdout.contains("private-key-permissions"))

        try Self.chmod(key, 0o644)
        try Self.chmod(caKey, 0o604)
        let warned = try check()
        #expect(warned.status == 0, "\(warned.stdout)")
        #expect(
            warned.stdout.contains(
                "certs/a.example/privkey.pem: warning: [private-key-permissions] privkey.pem has mode 0644: readable "
                    + "by others, so other users on this machine can copy the key; fix: chmod 600 "
                    + "certs/a.example/privkey.pem"), "\(warned.stdout)")
        #expect(
            warned.stdout.contains(
                "certs/dev-ca/ca-key.pem: warning: [private-key-permissions] ca-key.pem has mode 0604: readable by "
                    + "others"), "\(warned.stdout)")
        #expect(warned.stdout.contains("fix: chmod 600 certs/dev-ca/ca-key.pem"))
        #expect(warned.stdout.contains("0 errors, 2 warnings in 1 domain"), "\(warned.stdout)")
        let strict = try check(["--strict"])
        #expect(strict.status == 1, "\(strict.stdout)")
        let json = try check(["--format", "json"])
        #expect(json.stdout.contains(#""rule": "private-key-permissions""#), "\(json.stdout)")
    }

    @Test func serveWarnsAboutAReadableKeyAndStrictRefusesIt() throws {
        let directory = try Self.prepare(["a.example", "b.example"])
        let key = directory.path + "/certs/b.example/privkey.pem"
        try Self.chmod(key, 0o644)
        let logPath = directory.path + "/serve.err"

        // Without --strict: served, with a warning in the log and in /status.
        let lenient = try ServeProcess(in: directory.path, arguments: ["--no-watch"], errorLog: logPath)
        #expect(lenient.waitUntilHealthy())
        let served = try Self.certificate(lenient, "b.example")
        #expect(served["serving"] as? Bool == true)
        let warnings = try #require(served["warnings"] as? [String])
        #expect(warnings.count == 1 && warnings[0].contains("[private-key-permissions] privkey.pem has mode 0644"))
        #expect(warnings[0].contains("fix: chmod 600 certs/b.example/privkey.pem"), "\(warnings)")
        let reload = try #require(try Self.status(lenient)["lastReload"] as? [String: Any])
        #expect((reload["warnings"] as? [String])?.contains(warnings[0]) == true, "\(reload)")
        #expect(try Self.presentedName(lenient, "b.example") == "b.example")
        #expect(lenient.terminate() == 0)
        let log = try String(contentsOfFile: logPath, encoding: .utf8)
        #expect(log.contains("certs/b.example/privkey.pem: warning: [private-key-permissions]"), "\(log)")

        // --strict (here through AASA_SERVER_STRICT=1): not loaded; b.example gets the default certificate.
        let strict = try ServeProcess(
            in: directory.path, arguments: ["--no-watch"], environment: ["AASA_SERVER_STRICT": "1"])
        #expect(strict.waitUntilHealthy())
        let refused = try Self.certificate(strict, "b.example")
        #expect(refused["serving"] as? Bool == false)
        let errors = try #require(refused["errors"] as? [String])
        #expect(errors.first?.contains("[private-key-permissions]") == true, "\(errors)")
        #expect(errors.first?.contains("refused (--strict), its certificate is not loaded") == true, "\(errors)")
        #expect(try Self.presentedName(strict, "b.example") == "a.example")
        #expect(try Self.presentedName(strict, "a.example") == "a.example")

        // Fixed: the reload loads it. Exposed again: the reload keeps the last good certificate.
        try Self.chmod(key, 0o600)
        strict.reload()
        var loaded = false
        for _ in 0..<TestTime.tries(50) where !loaded {
            usleep(100_000)
            loaded = (try? Self.certificate(strict, "b.example"))?["serving"] as? Bool == true
        }
        #expect(loaded)
        let fingerprint = try Self.certificate(strict, "b.example")["fingerprint"] as? String
        #expect(try Self.presentedName(strict, "b.example") == "b.example")
        try Self.chmod(key, 0o644)
        strict.reload()
        var kept: [String: Any] = [:]
        for _ in 0..<TestTime.tries(50) where (kept["errors"] as? [String])?.isEmpty != false {
            usleep(100_000)
            kept = (try? Self.certificate(strict, "b.example")) ?? [:]
        }
        #expect(kept["serving"] as? Bool == true)
        #expect(kept["fingerprint"] as? String == fingerprint)
        #expect((kept["errors"] as? [String])?.first?.contains("privkey.pem has mode 0644") == true, "\(kept)")
        #expect(try Self.presentedName(strict, "b.example") == "b.example")
        #expect(strict.terminate() == 0)

        // The flag does the same as the variable.
        try Self.chmod(key, 0o644)
        let flagged = try ServeProcess(in: directory.path, arguments: ["--no-watch", "--strict"])
        #expect(flagged.waitUntilHealthy())
        #expect(try Self.certificate(flagged, "b.example")["serving"] as? Bool == false)
        #expect(flagged.terminate() == 0)
    }

    /// Probes every way a key could leave the server (paths into certs/, traversal, symlinks in pages/, the
    /// admin listener) while the server logs everything it can about keys (an exposed key, a mismatched key,
    /// an unreadable key), then looks for the keys' bytes in every answer and every log line.
    @Test func privateKeysNeverAppearInAnswersOrLogs() throws {
        let directory = try Self.prepare(["a.example", "b.example"])
        let certs = directory.path + "/certs"
        let pages = directory.path + "/site-config/a.example/pages"
        try directory.write("site-config/a.example/pages/index.html", "<html><head></head><body>a</body></html>")
        try FileManager.default.createSymbolicLink(
            atPath: pages + "/key.pem", withDestinationPath: "../../../certs/a.example/privkey.pem")
        try FileManager.default.createSymbolicLink(atPath: pages + "/certs", withDestinationPath: "../../../certs")
        try Self.chmod(certs + "/a.example/privkey.pem", 0o644)
        var keys = try ["a.example", "b.example"].map {
            try String(contentsOfFile: certs + "/\($0)/privkey.pem", encoding: .utf8)
        }
        keys.append(try String(contentsOfFile: certs + "/dev-ca/ca-key.pem", encoding: .utf8))

        let outPath = directory.path + "/serve.out"
        let errPath = directory.path + "/serve.err"
        for path in [outPath, errPath] { #expect(FileManager.default.createFile(atPath: path, contents: nil)) }
        let serve = try ServeProcess(
            in: directory.path,
            arguments: ["--no-watch", "--access-log", "json", "--access-log-queries", "--log-level", "trace"],
            output: try FileHandle(forWritingTo: URL(fileURLWithPath: outPath)),
            errorOutput: try FileHandle(forWritingTo: URL(fileURLWithPath: errPath)))
        #expect(serve.waitUntilHealthy())
        let ca = certs + "/dev-ca/ca.pem"
        var answers: [CurlResponse] = []
        func probe() throws {
            let paths = [
                "/certs/a.example/privkey.pem", "/certs/x/privkey.pem", "/privkey.pem", "/key.pem",
                "/../certs/a.example/privkey.pem", "/../../certs/a.example/privkey.pem",
                "/%2e%2e/%2e%2e/certs/a.example/privkey.pem", "/%252e%252e/certs/a.example/privkey.pem",
                "/..%5c..%5ccerts%5ca.example%5cprivkey.pem", "/certs/dev-ca/ca-key.pem",
                "/.well-known/../../certs/a.example/privkey.pem", "/?key=privkey.pem", "/",
                "/apple-touch-icon.png/../../../certs/a.example/privkey.pem",
            ]
            for host in ["a.example", "b.example", "localhost"] {
                for path in paths {
                    answers.append(
                        try Curl.request(
                            "https://\(host):\(serve.port)\(path)", caFile: ca, resolve: (host, serve.port),
                            extra: ["--path-as-is"]))
                }
            }
            for path in [
                "/status", "/metrics", "/fetches", "/readyz", "/healthz", "/match?url=https%3A%2F%2Fa.example%2F",
            ] {
                answers.append(try Curl.request("http://127.0.0.1:\(serve.admin)\(path)"))
            }
        }
        try probe()
        // A key that does not belong to its certificate, then one that cannot be parsed (half of a real key).
        let other = try Command.run("openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"])
        keys.append(other.stdout)
        try Data(other.stdout.utf8).write(to: URL(fileURLWithPath: certs + "/b.example/privkey.pem"))
        serve.reload()
        usleep(500_000)
        try probe()
        try Data(other.stdout.utf8.prefix(other.stdout.utf8.count / 2)).write(
            to: URL(fileURLWithPath: certs + "/b.example/privkey.pem"))
        serve.reload()
        usleep(500_000)
        try probe()
        #expect(serve.terminate() == 0)

        let logs =
            try String(contentsOfFile: outPath, encoding: .utf8) + String(contentsOfFile: errPath, encoding: .utf8)
        // The logging paths that concern keys ran, so the search below covers them.
        #expect(logs.contains("[private-key-permissions]"), "\(logs)")
        #expect(logs.contains("[certificate-key-mismatch]"), "\(logs)")
        #expect(logs.contains("cannot read the private key"), "\(logs)")
        #expect(logs.contains("/certs/a.example/privkey.pem"), "the access log has the probes")
        #expect(answers.count == 3 * (3 * 14 + 6))
        #expect(answers.allSatisfy { $0.status != 0 }, "\(answers.map(\.error))")
        for key in keys {
            let base64 = key.split(separator: "\n").filter { !$0.hasPrefix("-----") }
            let der = try #require(Data(base64Encoded: base64.joined()))
            let pieces = base64.filter { $0.count >= 20 }.map(String.init)
            #expect(!pieces.isEmpty)
            for piece in pieces {
                #expect(!logs.contains(piece), "a line of a private key is in the logs")
                #expect(!answers.contains { $0.text.contains(piece) }, "a line of a private key was served")
            }
            #expect(!answers.contains { Data($0.body).range(of: der) != nil }, "a private key was served as DER")
        }
        #expect(!answers.contains { $0.text.contains("PRIVATE KEY") })
    }
}
