import AASATestSupport
import Foundation

/// A fresh directory under the system temporary directory, removed by the caller with `removeDirectory`.
func makeTemporaryDirectory() throws -> String {
    let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("aasa-openssl-tests-\(UUID().uuidString)").path
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}

func removeDirectory(_ path: String) {
    try? FileManager.default.removeItem(atPath: path)
}

/// Result of running a command-line tool.
struct ToolResult {
    var status: Int32
    var output: String
    var error: String
}

/// Runs `arguments` (looked up on PATH) with optional standard input and returns its exit status and output.
func runTool(_ arguments: [String], input: String? = nil) throws -> ToolResult {
    let result = try Command.run(arguments[0], Array(arguments.dropFirst()), input: input.map { Array($0.utf8) })
    return ToolResult(status: result.status, output: result.stdout, error: result.stderr)
}

/// The permission bits of the file at `path`.
func fileMode(_ path: String) -> mode_t {
    var info = stat()
    guard stat(path, &info) == 0 else { return 0 }
    return info.st_mode & 0o7777
}
