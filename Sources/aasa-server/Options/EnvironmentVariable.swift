/// An `AASA_SERVER_*` environment variable that gives an option its value when the command line does not.
///
/// Each one is declared once, as a static member in the file of the option it backs, and everything that names it
/// takes the name from there: reading it (``Environment``), the option's help text (`(env: \(variable))`) and the
/// errors about its value. `EnvironmentVariableTests` holds every declaration to the help and the docs.
struct EnvironmentVariable: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The prefix of every variable's name.
    static let prefix = "AASA_SERVER_"

    /// The full name, e.g. `AASA_SERVER_HTTPS_PORT`.
    let name: String

    init(stringLiteral name: String) {
        precondition(
            name.hasPrefix(Self.prefix) && name.count > Self.prefix.count
                && name.allSatisfy { $0 == "_" || $0.isNumber || ($0.isLetter && $0.isUppercase) },
            "\(name) is not an \(Self.prefix)* variable name in capitals")
        self.name = name
    }

    /// The `serve` option whose value the variable gives: `AASA_SERVER_HTTPS_PORT` backs `--https-port`.
    var option: String {
        "--" + String(name.dropFirst(Self.prefix.count).lowercased().map { $0 == "_" ? "-" : $0 })
    }

    var description: String { name }
}
