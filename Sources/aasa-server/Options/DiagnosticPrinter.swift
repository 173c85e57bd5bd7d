import AASACore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Prints diagnostics compiler-style on standard error, coloured only on a terminal.
enum DiagnosticPrinter {
    static func print(_ diagnostics: [Diagnostic]) {
        let colour = isatty(2) != 0
        for diagnostic in diagnostics {
            var line = diagnostic.description
            if colour {
                let code = diagnostic.severity == .error ? "31" : diagnostic.severity == .warning ? "33" : "36"
                line = line.replacingOccurrences(
                    of: " \(diagnostic.severity.rawValue): ",
                    with: " \u{1B}[1;\(code)m\(diagnostic.severity.rawValue)\u{1B}[0m: ")
            }
            printError(line)
        }
    }

    static func printError(_ text: String) {
        let line = Array((text + "\n").utf8)
        line.withUnsafeBytes { buffer in _ = write(2, buffer.baseAddress, buffer.count) }
    }
}
