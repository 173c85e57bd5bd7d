import AASATestSupport
import Foundation
import Testing

/// Help texts are paragraphs that swift-argument-parser wraps to the terminal: none has a line break of its own.
@Suite struct HelpTextTests {
    @Test(arguments: [
        [], ["serve"], ["check"], ["match"], ["import"], ["sign"], ["certs", "dev"], ["certs", "acme"], ["cdn"],
        ["healthcheck"], ["shards", "nginx"], ["diff"], ["store", "init"], ["store", "push"], ["store", "pull"],
    ])
    func noParagraphBreaksMidSentence(command: [String]) throws {
        // Wide enough that the parser wraps nothing: every line break left is the text's own.
        let help = try Command.run(
            RepositoryPaths.executable, command + ["--help"], environment: ["COLUMNS": "2000"])
        #expect(help.status == 0)
        let lines = help.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for (line, next) in zip(lines, lines.dropFirst()) {
            guard !line.isEmpty, !next.isEmpty, !line.hasPrefix(" "), !next.hasPrefix(" ") else { continue }
            // Two unindented lines in a row: only a heading ("Examples:", "USAGE: …", "OPTIONS:") may end a line.
            let heading = line.hasSuffix(":") || line.range(of: #"^[A-Z]+:"#, options: .regularExpression) != nil
            #expect(heading, "\(command): '\(line)' is followed by '\(next)'")
        }
    }
}
