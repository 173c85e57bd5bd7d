import AASATestSupport
import Foundation
import Testing

/// ACME's state in the certificate folder (`certs/acme/orders.json`, `certs/acme/pacing.json`) holding numbers out of
/// range: `serve --acme` keeps running, names each bad record and its fix, and orders every domain from Debian's
/// pebble as if the record were absent.
@Suite(.serialized, .enabled(if: Pebble.isInstalled)) struct ACMEStateTests {
    @Test func aStateFileRecordOutOfRangeIsNamedAndEveryDomainIsStillOrdered() throws {
        let directory = TemporaryDirectory("aasa-acme-state")
        let httpPort = freePort()
        let pebble = try Pebble(httpPort: httpPort)
        try directory.copy(RepositoryPaths.siteConfig, to: "site-config")
        _ = try directory.write(
            "certs/acme/orders.json",
            #"{"shop.example": {"failures": 1e300, "failedValidations": []}, "links.example": {"failures": 1}}"#)
        _ = try directory.write(
            "certs/acme/pacing.json", #"{"tokens": -1e300, "refilledAt": "2026-01-01T00:00:00Z"}"#)
        let log = directory.path + "/serve.log"
        let serve = try ServeProcess(
            in: directory.path,
            arguments: [
                "--acme", "--http-port", "\(httpPort)", "--acme-directory", pebble.directoryURL, "--acme-ca-file",
                pebble.caFile, "--acme-agree-tos", "--acme-retry-min", "600", "--config", "site-config", "--certs",
                "certs",
            ], errorLog: log)
        func text() -> String { (try? String(contentsOfFile: log, encoding: .utf8)) ?? "" }
        let root = try pebble.rootFile()
        Wait.until("both domains served with pebble's certificates", seconds: 90, interval: 0.25) {
            guard serve.process.isRunning else { return "exited with \(serve.process.terminationStatus)" }
            let served = ["shop.example", "links.example"].filter { domain in
                (try? Curl.request(
                    "https://\(domain):\(serve.port)/.well-known/apple-app-site-association", caFile: root,
                    resolve: (domain, serve.port)))?.status == 200
            }
            return served.count == 2 ? nil : "served: \(served); \(text().suffix(1500))"
        }
        #expect(serve.process.isRunning)
        let lines = text().components(separatedBy: "\n")
        let orders = lines.first { $0.contains("orders.json") && $0.contains("shop.example") } ?? ""
        #expect(orders.contains("\"failures\" is 1e+300") && orders.contains("fix:"), "\(text().suffix(3000))")
        let pacing = lines.first { $0.contains("pacing.json") } ?? ""
        #expect(pacing.contains("\"tokens\" is -1e+300") && pacing.contains("fix:"), "\(text().suffix(3000))")
        #expect(serve.terminate() == 0)
    }
}
