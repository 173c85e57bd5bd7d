import AASACore
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Prints diagnostics compiler-style, coloured only on a terminal.
enum DiagnosticPrinter {
    /// Prints each diagnostic on standard error.
    static func print(_ diagnostics: [Diagnostic]) {
        let colour = isatty(2) != 0
        for diagnostic in diagnostics { printError(render(diagnostic, colour: colour)) }
    }

    /// One compiler-style line; the severity is coloured when `colour` is set.
    static func render(_ diagnostic: Diagnostic, colour: Bool) -> String {
        let line = diagnostic.description
        guard colour else { return line }
        let code = diagnostic.severity == .error ? "31" : diagnostic.severity == .warning ? "33" : "36"
        let severity = diagnostic.severity.rawValue
        return line.replacingOccurrences(of: " \(severity): ", with: " \u{1B}[1;\(code)m\(severity)\u{1B}[0m: ")
    }

    /// Writes one line to standard output, unbuffered (the server runs until a signal).
    static func printOutput(_ text: String) {
        let line = Array((text + "\n").utf8)
        line.withUnsafeBytes { buffer in _ = write(1, buffer.baseAddress, buffer.count) }
    }

    /// Writes one line to standard error, unbuffered.
    static func printError(_ text: String) {
        let line = Array((text + "\n").utf8)
        line.withUnsafeBytes { buffer in _ = write(2, buffer.baseAddress, buffer.count) }
    }
}
