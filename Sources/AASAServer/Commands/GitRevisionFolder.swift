import Foundation

/// A config folder as it is at a git revision, read from the repository's objects (`git ls-tree -l`, then
/// `git cat-file --batch` for the contents) into a temporary folder: no checkout, the working tree untouched.
///
/// Memory is bounded before anything is read: the listing gives each blob's size, a blob over
/// ``maximumFileBytes`` is never asked for (its copy is a sparse file of the same size, which the loader refuses
/// by its size as it refuses the file in a working tree), and blobs are asked for in batches of at most
/// ``maximumBatchBytes``.
public struct GitRevisionFolder: Sendable {
    /// The temporary copy; ``remove()`` deletes it.
    public let path: String

    /// Why a revision could not be read.
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var description: String
    }

    /// The largest blob read: the largest file the loader reads (a page, ``PageLoader/maximumFileBytes``).
    static let maximumFileBytes = 16 << 20
    /// The most bytes of blobs asked of git at once.
    static let maximumBatchBytes = 64 << 20

    /// One regular file of the revision.
    struct Blob {
        var object: String
        var size: Int
        var relative: String
    }

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
            ["ls-tree", "-r", "-z", "-l", "--full-tree", revision, "--", prefix.isEmpty ? "." : prefix], in: root)
        let files = Self.blobs(in: listing.data, under: prefix)
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

    /// The regular files of an `ls-tree -r -z -l` listing below `prefix` (no symbolic links, no submodules, no
    /// path that climbs), with their sizes.
    static func blobs(in listing: Data, under prefix: String) -> [Blob] {
        var files: [Blob] = []
        for entry in listing.split(separator: 0) {
            // "<mode> <type> <object> <size, right-aligned>\t<path>"
            guard let line = String(bytes: entry, encoding: .utf8), let tab = line.firstIndex(of: "\t") else {
                continue
            }
            let fields = line[..<tab].split(separator: " ")
            let file = String(line[line.index(after: tab)...])
            guard fields.count == 4, fields[1] == "blob", fields[0] == "100644" || fields[0] == "100755",
                let size = Int(fields[3]), file.hasPrefix(prefix)
            else { continue }
            let relative = String(file.dropFirst(prefix.count))
            guard !relative.split(separator: "/").contains(where: { $0 == ".." || $0 == "." }) else { continue }
            files.append(Blob(object: String(fields[2]), size: size, relative: relative))
        }
        return files
    }

    private func write(_ files: [Blob], from root: String) throws(Failure) {
        var batch: [Blob] = []
        var batchBytes = 0
        for file in files {
            guard file.size <= Self.maximumFileBytes else {
                try create(file.relative, sparseOfSize: file.size)
                continue
            }
            if batchBytes + file.size > Self.maximumBatchBytes {
                try write(batch: batch, from: root)
                batch.removeAll()
                batchBytes = 0
            }
            batch.append(file)
            batchBytes += file.size
        }
        try write(batch: batch, from: root)
    }

    /// Reads `files` (together at most ``maximumBatchBytes``) with one `git cat-file --batch` and writes them.
    private func write(batch files: [Blob], from root: String) throws(Failure) {
        guard !files.isEmpty else { return }
        let request = files.map(\.object).joined(separator: "\n") + "\n"
        let output = try Self.git(["cat-file", "--batch"], in: root, input: Data(request.utf8)).data
        var offset = output.startIndex
        for file in files {
            // "<object> blob <size>\n<contents>\n"
            guard let newline = output[offset...].firstIndex(of: 0x0A),
                let header = String(bytes: output[offset..<newline], encoding: .utf8),
                let size = header.split(separator: " ").last.flatMap({ Int($0) }), size == file.size,
                newline + 1 + size <= output.endIndex
            else { throw Failure(description: "git cat-file answered something unexpected for \(file.relative)") }
            let contents = output[(newline + 1)..<(newline + 1 + size)]
            offset = newline + 1 + size + 1
            let target = try createFolder(for: file.relative)
            do {
                try Data(contents).write(to: URL(fileURLWithPath: target))
            } catch {
                throw Failure(description: "cannot write \(target): \(error.localizedDescription)")
            }
        }
    }

    /// A file of `size` bytes that takes no room (a hole): the loader refuses it for its size, naming it, and
    /// reads none of it.
    private func create(_ relative: String, sparseOfSize size: Int) throws(Failure) {
        let target = try createFolder(for: relative)
        guard FileManager.default.createFile(atPath: target, contents: nil), truncate(target, off_t(size)) == 0 else {
            throw Failure(description: "cannot write \(target): \(String(cString: strerror(errno)))")
        }
    }

    /// Makes the folders of `relative` in the copy; the file's path.
    private func createFolder(for relative: String) throws(Failure) -> String {
        let target = path + "/" + relative
        do {
            try FileManager.default.createDirectory(
                atPath: (target as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        } catch {
            throw Failure(description: "cannot write \(target): \(error.localizedDescription)")
        }
        return target
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
