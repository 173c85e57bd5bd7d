import Foundation

/// A config folder as it is at a git revision, read from the repository's objects (`git ls-tree`, then
/// `git cat-file --batch` for the contents) into a temporary folder: no checkout, the working tree untouched.
public struct GitRevisionFolder: Sendable {
    /// The temporary copy; ``remove()`` deletes it.
    public let path: String

    /// Why a revision could not be read.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// Files larger than this are left out (the loader refuses them anyway: a site.json is at most 1 MiB).
    static let maximumFileBytes = 8 << 20

    /// Copies `directory` (inside a git work tree) as it is at `revision`.
    public init(revision: String, directory: String) throws(Failure) {
        let prefix = try Self.git(["rev-parse", "--show-prefix"], in: directory).text
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let root = try Self.git(["rev-parse", "--show-toplevel"], in: directory).text
            .trimmingCharacters(in: .whitespacesAndNewlines)
        do {
            _ = try Self.git(["rev-parse", "--verify", "--quiet", "\(revision)^{commit}"], in: root)
        } catch {
            throw Failure(description: "'\(revision)' names no commit in the repository at \(root)")
        }
        let listing = try Self.git(
            ["ls-tree", "-r", "-z", "--full-tree", revision, "--", prefix.isEmpty ? "." : prefix], in: root)
        var files: [(object: String, relative: String)] = []
        for entry in listing.data.split(separator: 0) {
            // "<mode> <type> <object>\t<path>"; only regular files (no symbolic links, no submodules).
            guard let line = String(bytes: entry, encoding: .utf8), let tab = line.firstIndex(of: "\t") else {
                continue
            }
            let fields = line[..<tab].split(separator: " ")
            let file = String(line[line.index(after: tab)...])
            guard fields.count == 3, fields[1] == "blob", fields[0] == "100644" || fields[0] == "100755",
                file.hasPrefix(prefix)
            else { continue }
            let relative = String(file.dropFirst(prefix.count))
            guard !relative.split(separator: "/").contains(where: { $0 == ".." || $0 == "." }) else { continue }
            files.append((String(fields[2]), relative))
        }
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent(
            "aasa-server-diff-\(UUID().uuidString)"
        ).path
        do {
            try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        } catch {
            throw Failure(description: "cannot create a temporary folder: \(error.localizedDescription)")
        }
        path = temporary
        do {
            try write(files, from: root)
        } catch {
            remove()
            throw error
        }
    }

    /// Deletes the temporary copy.
    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    private func write(_ files: [(object: String, relative: String)], from root: String) throws(Failure) {
        guard !files.isEmpty else { return }
        let request = files.map(\.object).joined(separator: "\n") + "\n"
        let output = try Self.git(["cat-file", "--batch"], in: root, input: Data(request.utf8)).data
        var offset = output.startIndex
        for file in files {
            // "<object> blob <size>\n<contents>\n"
            guard let newline = output[offset...].firstIndex(of: 0x0A),
                let header = String(bytes: output[offset..<newline], encoding: .utf8),
                let size = header.split(separator: " ").last.flatMap({ Int($0) }),
                newline + 1 + size <= output.endIndex
            else { throw Failure(description: "git cat-file answered something unexpected for \(file.relative)") }
            let contents = output[(newline + 1)..<(newline + 1 + size)]
            offset = newline + 1 + size + 1
            guard size <= Self.maximumFileBytes else { continue }
            let target = path + "/" + file.relative
            do {
                try FileManager.default.createDirectory(
                    atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
                try Data(contents).write(to: URL(fileURLWithPath: target))
            } catch {
                throw Failure(description: "cannot write \(target): \(error.localizedDescription)")
            }
        }
    }

    /// Runs git in `directory`; its standard output, or its standard error as the failure.
    private static func git(_ arguments: [String], in directory: String, input: Data? = nil) throws(Failure) -> (
        data: Data, text: String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["git", "-C", directory] + arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        var inputFile: URL?
        if let input {
            // From a file, not a pipe: git answers while it reads, and a pipe both ways could fill and stall.
            let url = FileManager.default.temporaryDirectory.appendingPathComponent("aasa-git-\(UUID().uuidString)")
            try? input.write(to: url)
            inputFile = url
            process.standardInput = try? FileHandle(forReadingFrom: url)
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        defer { inputFile.map { try? FileManager.default.removeItem(at: $0) } }
        do {
            try process.run()
        } catch {
            throw Failure(description: "cannot run git: \(error.localizedDescription)")
        }
        // Both streams are drained while git runs (a full stderr pipe would stall it).
        let group = DispatchGroup()
        nonisolated(unsafe) var errorData = Data()
        group.enter()
        DispatchQueue.global().async {
            errorData = errors.fileHandleForReading.readDataToEndOfFile()
            group.leave()
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        group.wait()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            let message = String(decoding: errorData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            let command = "git " + arguments.joined(separator: " ")
            throw Failure(
                description: message.isEmpty
                    ? "\(command) failed (exit \(process.terminationStatus))" : "\(command): \(message)")
        }
        return (data, String(decoding: data, as: UTF8.self))
    }
}
