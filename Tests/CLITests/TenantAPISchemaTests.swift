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

    /// What the run expects beyond schemathesis' defaults, each an answer the document declares and the schema
    /// cannot say in advance: a valid request can still fail its precondition (412: the revision moved; 428: no
    /// `If-Match` on a removal, the status RFC 6585 gives a missing precondition) or be refused for what its body
    /// means (422: a site.json with errors, a name longer than a file name); an invalid one can be refused by the
    /// listener before the API sees it (414: a request line longer than the listener reads) or fail its
    /// precondition (412). `getDomainRevision` is given a revision in `links.example`'s history, so its calls
    /// reach a revision rather than only 404.
    ///
    /// The stateful phase follows the document's own links (read or write, then remove at that revision; write,
    /// then read and restore that revision; remove, then read: 404) and infers none: an inferred chain takes a dry
    /// run's 200 for a removal, or a removed domain's history, which the API keeps to restore it, for a resource
    /// used after it was freed.
    static func configuration(revision: String) -> String {
        """
        [checks.positive_data_acceptance]
        expected-statuses = ["2xx", "3xx", "401", "403", "404", "409", "412", "422", "428", "429"]

        [checks.negative_data_rejection]
        expected-statuses = ["400", "401", "403", "404", "405", "406", "409", "412", "414", "415", "422", "428", "429"]

        [checks.missing_required_header]
        expected-statuses = ["400", "401", "403", "406", "415", "422", "428"]

        [phases.stateful.inference]
        algorithms = []

        [[operations]]
        include-operation-id = "getDomainRevision"
        parameters = { "path.name" = "links.example", "path.revision" = "\(revision)" }

        """
    }

    @Test func everyOperationAnswersAsItsDocumentSaysAndNeverWithAServerError() throws {
        let check = try Command.run("python3", ["-c", "import schemathesis"])
        try #require(check.status == 0, "install schemathesis: scripts/setup.sh --test (\(check.stderr))")
        let folder = TemporaryDirectory("aasa-api-schema")
        let token = String(repeating: "s", count: 40)
        let serve = try ServeProcess.withTokens(
            "ci write \(token)\nviewer read \(String(repeating: "r", count: 40))\n", in: folder)
        #expect(serve.waitUntilReady())
        // A revision in links.example's history (a folder's history starts with the first write through the API):
        // its own site.json written again with a newline more.
        let url = "http://127.0.0.1:\(serve.admin)/api/v1/domains/links.example"
        let current = try Curl.request(url, headers: ["Authorization: Bearer \(token)"])
        let written = try Curl.request(
            url, method: "PUT",
            headers: [
                "Authorization: Bearer \(token)", "Content-Type: application/json",
                "If-Match: \(current.headers["etag"] ?? "")",
            ], extra: ["--data-binary", current.text + "\n"])
        #expect(written.status == 200, "\(written.text)")
        let revision = try #require(
            written.headers["etag"]?.trimmingCharacters(in: CharacterSet(charactersIn: "\"")), "\(written.text)")
        #expect(
            try Curl.request(url + "/history/" + revision, headers: ["Authorization: Bearer \(token)"]).status == 200)
        let configuration = try folder.write("schemathesis.toml", Self.configuration(revision: revision))
        let run = try Self.schemathesis(
            [
                "--config-file", configuration, "run", "http://127.0.0.1:\(serve.admin)/api/v1/openapi.json",
                "--header", "Authorization: Bearer \(token)",
                // Every check: ignored_auth, missing_required_header, negative_data_rejection,
                // positive_data_acceptance, unsupported_method and the conformance checks among them.
                "--checks", "all", "--max-examples", "40", "--seed", "1", "--request-timeout", "10",
                // One worker: CPython 3.11's ast.parse, which hypothesis calls to describe its filters, is not safe
                // on several threads at once ("AST constructor recursion depth mismatch").
                "--workers", "1",
            ], in: folder.path, timeout: TestTime.seconds(600))
        let log = (try? String(contentsOfFile: folder.path + "/serve.log", encoding: .utf8)) ?? ""
        #expect(run.status == 0, "\(run.stdout.suffix(6000))\n\(run.stderr.suffix(2000))\nserver: \(log.suffix(2000))")
        // The document declares what the server enforces: no operation mostly refuses what its schema allows.
        #expect(!run.stdout.contains("Schema validation mismatch"), "\(run.stdout.suffix(6000))")
        #expect(!run.stdout.contains("Missing test data"), "\(run.stdout.suffix(6000))")
        // The server is still up and serves what it served.
        #expect(serve.waitUntilHealthy())
        #expect(serve.terminate() == 0)
    }
}
