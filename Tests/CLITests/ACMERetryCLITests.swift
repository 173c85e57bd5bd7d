import AASATestSupport
import Foundation
import Testing

/// `POST /acme/retry` on a real `serve --acme` daemon against Debian's pebble, as an operator sends it with curl.
@Suite(.serialized) struct ACMERetryCLITests {
    static let token = "t0k-retry"

    /// The admin listener's `/status`, with the token.
    static func status(_ serve: ServeProcess) throws -> [String: Any] {
        let response = try Curl.request(
            "http://127.0.0.1:\(serve.admin)/status", headers: ["Authorization: Bearer \(token)"])
        return try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
    }

    static func certificateState(_ status: [String: Any], _ domain: String) -> String? {
        ((status["domains"] as? [String: Any])?[domain] as? [String: Any]).flatMap {
            ($0["certificate"] as? [String: Any])?["state"] as? String
        }
    }

    @Test func aRunningServerRetriesAConfiguredDomainAndRefusesAnUnknownOne() throws {
        let setup = try ACMECLITests.Setup()
        let tokenFile = try setup.directory.write("admin-token", Self.token + "\n")
        #expect(chmod(tokenFile, 0o600) == 0)
        let log = setup.directory.path + "/serve.log"
        let serve = try ServeProcess(
            in: setup.directory.path,
            arguments: [
                "--acme", "--acme-agree-tos", "--http-port", "\(setup.httpPort)", "--admin-token-file", tokenFile,
            ] + setup.common, errorLog: log)
        #expect(serve.waitUntilHealthy())
        let base = "http://127.0.0.1:\(serve.admin)/acme/retry"
        let bearer = ["Authorization: Bearer \(Self.token)"]

        // The daemon orders both certificates from pebble; /status carries the queue meanwhile and after.
        let deadline = TestTime.deadline(90)
        var status = try Self.status(serve)
        while Date() < deadline && Self.certificateState(status, "shop.example") != "valid" {
            usleep(200_000)
            status = try Self.status(serve)
        }
        #expect(
            Self.certificateState(status, "shop.example") == "valid",
            "\(status); log: \((try? String(contentsOfFile: log, encoding: .utf8)) ?? "")")
        let queue = try #require((status["acme"] as? [String: Any])?["queue"] as? [String: Any], "\(status)")
        #expect(queue["pending"] is Int, "\(queue)")
        let metrics = String(
            decoding: try Curl.request("http://127.0.0.1:\(serve.admin)/metrics", headers: bearer).body, as: UTF8.self)
        #expect(metrics.contains("\naasa_acme_queue_pending "), "\(metrics)")
        #expect(metrics.contains("\naasa_acme_paused 0\n"), "\(metrics)")

        // Without the token: 401; by GET: 404; the domain: 202, queued or already ordering; an unknown one: 404.
        #expect(try Curl.request(base + "?domain=shop.example", method: "POST").status == 401)
        #expect(try Curl.request(base + "?domain=shop.example", headers: bearer).status == 404)
        let retried = try Curl.request(base + "?domain=shop.example", method: "POST", headers: bearer)
        #expect(retried.status == 202, "\(String(decoding: retried.body, as: UTF8.self))")
        let answer = try #require(try JSONSerialization.jsonObject(with: Data(retried.body)) as? [String: Any])
        #expect(answer["domain"] as? String == "shop.example")
        #expect(["queued", "in-progress"].contains(answer["state"] as? String ?? ""), "\(answer)")
        let unknown = try Curl.request(base + "?domain=nowhere.example", method: "POST", headers: bearer)
        #expect(unknown.status == 404)
        #expect(String(decoding: unknown.body, as: UTF8.self).contains("nowhere.example"))
        #expect(serve.terminate(within: 10) == 0)
    }
}
