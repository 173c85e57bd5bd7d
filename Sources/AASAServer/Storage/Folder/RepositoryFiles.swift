import AASACore
import Foundation

/// What the folder repository and its history do to files, each failure a ``DomainRepositoryError`` naming the path.
enum RepositoryFiles {
    /// Creates `folder` and the folders above it that are missing.
    static func makeFolder(_ folder: String) throws {
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw DomainRepositoryError(.failed, "could not create the folder '\(folder)': \(error)")
        }
    }

    /// Makes `folder` (0700) when missing and refuses it when it is a symbolic link, not the server's user's, or
    /// writable by group or others (``WritableFolder``): the history folders, which the server writes and deletes in.
    static func makeWritableFolder(_ folder: String) throws {
        do {
            try WritableFolder.prepare(folder)
        } catch {
            throw DomainRepositoryError(.failed, error.description)
        }
    }

    /// Replaces `path` with `bytes` at once (``AtomicFile``): a reader sees the old file or the new one.
    static func write(_ bytes: [UInt8], to path: String) throws {
        do {
            try AtomicFile.write(bytes, to: path)
        } catch {
            throw DomainRepositoryError(.failed, error.description)
        }
    }
}
