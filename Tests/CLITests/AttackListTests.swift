import AASATestSupport
import Foundation
import Testing

/// `scripts/attack-lists` against the real daemon over HTTPS: path traversal and HTML/header injection.
@Suite(.serialized) struct AttackListTests {
    static let script = RepositoryPaths.root + "/scripts/attack-lists"

    /// The sample config plus what the lists aim at: a page folder, a canary beside site.json and one beside the
    /// config folder (unique strings that must never be served), and symlinks inside pages/ that lead out.
    @Test(.timeLimit(.minutes(3))) func traversalAndInjectionAttemptsAllFailSafely() throws {
        let directory = TemporaryDirectory("aasa-attacks")
        try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        let pages = directory.path + "/site-config/shop.example/pages"
        try directory.write(
            "site-config/shop.example/pages/docs/index.html", "<html><head></head><body>docs</body></html>")
        let outside = "canary-outside-\(UUID().uuidString)"
        let beside = "canary-beside-site-json-\(UUID().uuidString)"
        try directory.write("canary.txt", outside + "\n")
        try directory.write("site-config/shop.example/canary.txt", beside + "\n")
        try FileManager.default.createSymbolicLink(atPath: pages + "/outside", withDestinationPath: "../../..")
        try FileManager.default.createSymbolicLink(atPath: pages + "/leak.txt", withDestinationPath: "../canary.txt")
        let issued = try Command.run(
            RepositoryPaths.executable, ["certs", "dev", "--config", "site-config", "--certs", "certs"],
            currentDirectory: directory.path)
        #expect(issued.status == 0, "\(issued.stderr)")
        let serve = try ServeProcess(in: directory.path, arguments: ["--no-watch"])
        #expect(serve.waitUntilHealthy())

        let output = try Command.run(
            "python3",
            [
                Self.script, "https://127.0.0.1:\(serve.port)", "--host", "shop.example", "--cafile",
                directory.path + "/certs/dev-ca/ca.pem", "--canary", outside, "--canary", beside, "--prefix", "/docs/",
                "--forbidden-file", directory.path + "/site-config/shop.example/site.json", "--forbidden-file",
                directory.path + "/certs/shop.example/privkey.pem",
            ], timeout: 400)
        #expect(output.status == 0, "\(output.stdout)\(output.stderr)")
        let summary = try #require(output.stdout.split(separator: "\n").first.map(String.init))
        #expect(summary.hasSuffix(", 0 failed"), "\(summary)")
        // Every line of both lists went out: over a thousand requests, most refused, hundreds escaped.
        let numbers = summary.split(separator: " ").compactMap { Int($0) }
        #expect(numbers.count >= 6 && numbers[0] > 1000 && numbers[1] > 500 && numbers[2] > 300, "\(summary)")
        #expect(summary.contains("0 known deviations"), "\(summary)")
        #expect(serve.terminate(within: 5) == 0)
    }

    /// Each check of the script rejects the answer it exists for (canary in a body, redirect, break-out of
    /// `content`, extra attribute, unencoded URL, injected header, response splitting, reflected markup).
    @Test func theChecksCatchWhatTheyAreFor() throws {
        let output = try Command.run("python3", [Self.script, "--self-test"])
        #expect(output.status == 0, "\(output.stdout)")
        #expect(output.stdout.contains("attack-lists self-test: 14 of 14 checks behave"), "\(output.stdout)")
        #expect(!output.stdout.contains("MISS"))
    }
}
