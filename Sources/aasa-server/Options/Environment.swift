import ArgumentParser
import Foundation
import Synchronization

/// `AASA_SERVER_*` environment variables as defaults for options, for containers: a flag on the command
/// line wins over the variable, and the variable over the built-in default.
enum Environment {
    /// Values that could not be read, reported by `validate()` (a property default cannot throw).
    private static let problems = Mutex<[String]>([])

    /// The variables that were set when read, so that an error about an option can name the variable its value
    /// came from.
    private static let setVariables = Mutex<Set<EnvironmentVariable>>([])

    /// The variable's text, or `nil` when it is not set.
    private static func text(_ variable: EnvironmentVariable) -> String? {
        // getenv, not ProcessInfo's environment: that copies every variable into a dictionary at each of the
        // options' two hundred reads.
        guard let value = getenv(variable.name) else { return nil }
        let text = String(cString: value)
        setVariables.withLock { _ = $0.insert(variable) }
        return text
    }

    /// The variable as `T`, or `fallback` when unset.
    static func value<T: LosslessStringConvertible>(_ variable: EnvironmentVariable, _ fallback: T) -> T {
        optional(variable) ?? fallback
    }

    /// The variable as `T`, or `nil` when unset.
    static func optional<T: LosslessStringConvertible>(_ variable: EnvironmentVariable) -> T? {
        guard let text = text(variable), !text.isEmpty else { return nil }
        guard let value = T(text) else {
            problems.withLock { $0.append("\(variable)=\(text) is not a valid \(T.self)") }
            return nil
        }
        return value
    }

    /// The comma-separated items of the variable (spaces around them dropped), or `[]` when unset.
    static func list(_ variable: EnvironmentVariable) -> [String] {
        let text = text(variable) ?? ""
        return text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// Whether the variable is set to 1, true or yes.
    static func flag(_ variable: EnvironmentVariable) -> Bool {
        let text = text(variable)?.lowercased() ?? ""
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
            let option = String(message[start...].prefix { $0 == "-" || $0.isLetter || $0.isNumber })
            let given = arguments.contains { $0 == option || $0.hasPrefix(option + "=") }
            let variable = setVariables.withLock { set in set.first { $0.option == option } }
            guard !given, let variable else { throw error }
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
