import AASATestSupport
import Foundation
import Testing

/// schemathesis (from PyPI, installed by `scripts/setup.sh --test`) against the live server's
/// `/api/v1/openapi.json` with a write token: every operation, generated requests valid and invalid, no 5xx, every
/// answer's status, content type, headers and body as the document says.
@Suite(.serialized) struct TenantAPISchemaTests {
    /// Runs schemathesis' CLI with `arguments`: `st` when it is on PATH, else through the Python module.
    /// It runs in `directory`, where it keeps its `.schemathesis` cache.
    static func schemathesis(_ arguments: [String], in directory: String, timeout: TimeInterval) throws
        -> Command.Output
    {
        let script =
            "import sys\nfrom schemathesis.cli import schemathesis\nsys.argv[0] = 'st'\nsys.exit(schemathesis())\n"
        return try Command.run("python3", ["-c", script] + arguments, currentDirectory: directory, timeout: timeout)
    }

    @Test func everyOperationAnswersAsItsDocumentSaysAndNeverWithAServerError() throws {
        let check = try Command.run("python3", ["-c", "import schemathesis"])
        try #require(check.status == 0, "install schemathesis: scripts/setup.sh --test (\(check.stderr))")
        let folder = TemporaryDirectory("aasa-api-schema")
        let token = String(repeating: "s", count: 40)
        let serve = try ServeProcess.withTokens(
            "ci write \(token)\nviewer read \(String(repeating: "r", count: 40))\n", in: folder)
        #expect(serve.waitUntilReady())
        let run = try Self.schemathesis(
            [
                "run", "http://127.0.0.1:\(serve.admin)/api/v1/openapi.json", "--header",
                "Authorization: Bearer \(token)", "--checks",
                "not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,"
                    + "response_schema_conformance",
                "--max-examples", "40", "--seed", "1", "--request-timeout", "10",
                // One worker: CPython 3.11's ast.parse, which hypothesis calls to describe its filters, is not safe
                // on several threads at once ("AST constructor recursion depth mismatch").
                "--workers", "1",
            ], in: folder.path, timeout: 600)
        let log = (try? String(contentsOfFile: folder.path + "/serve.log", encoding: .utf8)) ?? ""
        #expect(run.status == 0, "\(run.stdout.suffix(6000))\n\(run.stderr.suffix(2000))\nserver: \(log.suffix(2000))")
        // The server is still up and serves what it served.
        #expect(serve.waitUntilHealthy())
        #expect(serve.terminate() == 0)
    }
}
