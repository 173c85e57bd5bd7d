import AASATestSupport
import Foundation
import Testing

/// What one tenant's folder can make the server log: 30,000 page names that cannot be served are 30,000 findings,
/// and each load logs the first few in full and one line for the rest, at start and at every reload.
@Suite(.serialized) struct FindingsLogTests {
    @Test func thirtyThousandUnservablePageNamesLogAFewLinesPerLoad() throws {
        let directory = TemporaryDirectory("aasa-findings-log")
        try directory.write(
            "site-config/good.example/site.json", #"{"webCredentials": ["ABCDE12345.com.example.good"]}"#)
        try directory.write(
            "site-config/noisy.example/site.json", #"{"webCredentials": ["ABCDE12345.com.example.noisy"]}"#)
        let pages = directory.path + "/site-config/noisy.example/pages"
        try FileManager.default.createDirectory(atPath: pages, withIntermediateDirectories: true)
        // '%' in a name: it cannot be requested safely, so each is a [page-name] warning.
        for index in 0..<30_000 {
            #expect(FileManager.default.createFile(atPath: pages + "/p%\(index)", contents: nil))
        }
        let issued = try Command.run(
            RepositoryPaths.executable, ["certs", "dev", "--config", "site-config", "--certs", "certs"],
            currentDirectory: directory.path)
        #expect(issued.status == 0, "\(issued.stderr)")
        let logPath = directory.path + "/serve.err"
        let serve = try ServeProcess(in: directory.path, arguments: ["--no-watch"], errorLog: logPath)
        #expect(serve.waitUntilHealthy())
        serve.reload()
        var log = ""
        for _ in 0..<TestTime.tries(200) {
            log = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
            if log.components(separatedBy: "more like it").count == 3 { break }
            usleep(100_000)
        }
        #expect(serve.terminate() == 0)
        log = try String(contentsOfFile: logPath, encoding: .utf8)
        let lines = log.split(separator: "\n")
        let pageLines = lines.filter { $0.contains("[page-name]") }
        // Two loads (the start and the SIGHUP): five in full and one summary each.
        #expect(pageLines.count == 12, "\(pageLines.count) lines name [page-name]")
        let summaries = lines.filter {
            $0.contains("more like it ([page-name])") && $0.contains("source=noisy.example")
        }
        #expect(summaries.count == 2, "\(log.suffix(2000))")
        // Names such as `p%20…` decode to something servable, so more than 10,000 of the 20,000 entries the walk
        // looks at (its cap) are findings: counted, not logged.
        for summary in summaries {
            let count = summary.components(separatedBy: "and ").last?.split(separator: " ").first.flatMap { Int($0) }
            #expect((count ?? 0) > 10_000, "\(summary)")
        }
        #expect(lines.filter { $0.contains("more like it ([pages-too-large])") }.count == 2)
        #expect(log.utf8.count < 64 * 1024, "the log has \(log.utf8.count) bytes")
    }
}
