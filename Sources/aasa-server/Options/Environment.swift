import ArgumentParser
import Foundation
import Synchronization

/// `AASA_SERVER_*` environment variables as defaults for options, for containers: a flag on the command
/// line wins over the variable, and the variable over the built-in default.
enum Environment {
    /// The prefix of every variable.
    static let prefix = "AASA_SERVER_"

    /// Values that could not be read, reported by `validate()` (a property default cannot throw).
    private static let problems = Mutex<[String]>([])

    /// The variable `AASA_SERVER_<name>` as `T`, or `fallback` when unset.
    static func value<T: LosslessStringConvertible>(_ name: String, _ fallback: T) -> T {
        optional(name) ?? fallback
    }

    /// The variable `AASA_SERVER_<name>` as `T`, or `nil` when unset.
    static func optional<T: LosslessStringConvertible>(_ name: String) -> T? {
        guard let text = ProcessInfo.processInfo.environment[prefix + name], !text.isEmpty else { return nil }
        guard let value = T(text) else {
            problems.withLock { $0.append("\(prefix + name)=\(text) is not a valid \(T.self)") }
            return nil
        }
        return value
    }

    /// The comma-separated items of `AASA_SERVER_<name>` (spaces around them dropped), or `[]` when unset.
    static func list(_ name: String) -> [String] {
        let text = ProcessInfo.processInfo.environment[prefix + name] ?? ""
        return text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Whether `AASA_SERVER_<name>` is set to 1, true or yes.
    static func flag(_ name: String) -> Bool {
        let text = ProcessInfo.processInfo.environment[prefix + name]?.lowercased() ?? ""
        return ["1", "true", "yes", "on"].contains(text)
    }

    /// The values that could not be read, e.g. `AASA_SERVER_HTTPS_PORT=abc is not a valid UInt16`.
    static var invalidValues: [String] { problems.withLock { $0 } }

    /// Runs an options group's checks; an error about an option (`--name …`) whose value came from its variable
    /// rather than the command line says so, naming the variable to fix.
    static func naming(arguments: [String] = CommandLine.arguments, _ checks: () throws -> Void) throws {
        do {
            try checks()
        } catch let error as ValidationError {
            let message = error.message
            guard let start = message.range(of: "--")?.lowerBound else { throw error }
            let option = message[start...].prefix { $0 == "-" || $0.isLetter || $0.isNumber }
            let variable = prefix + option.dropFirst(2).uppercased().replacingOccurrences(of: "-", with: "_")
            let given = arguments.contains { $0 == option || $0.hasPrefix(option + "=") }
            guard !given, ProcessInfo.processInfo.environment[variable] != nil else { throw error }
            throw ValidationError(message + " (the value comes from \(variable))")
        }
    }

    /// Refuses `path`, given to `option`, unless it is a file this process can read.
    static func requireReadableFile(_ path: String?, option: String) throws {
        guard let path else { return }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
            FileManager.default.isReadableFile(atPath: path)
        else {
            throw ValidationError("\(option) '\(path)' is not a readable file: give the PEM file of the CAs to trust")
        }
    }
}
