public import AASACore

extension Server {
    /// Why the server could not start.
    public struct StartupError: Error, Sendable, CustomStringConvertible {
        /// The findings that stopped it (config errors exit with status 2).
        public var diagnostics: [Diagnostic]
        /// Whether the cause is the configuration (as opposed to the system, e.g. a port in use).
        public var isConfigurationError: Bool

        /// One finding per line.
        public var description: String { diagnostics.map(\.description).joined(separator: "\n") }
    }
}
