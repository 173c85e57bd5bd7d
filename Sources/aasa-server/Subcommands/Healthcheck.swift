import AASAServer
import ArgumentParser

/// `aasa-server healthcheck`: asks a running server's admin listener whether it is alive (or ready).
struct Healthcheck: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Exit 0 when the admin listener answers 200 (for container HEALTHCHECKs; needs no curl).",
        discussion: """
            Examples:
              aasa-server healthcheck                    # GET http://127.0.0.1:9090/healthz
              aasa-server healthcheck --path /readyz --port 9090
            """)

    @Option(help: ArgumentHelp("Admin listener port (env: \(EnvironmentVariable.adminPort)).", valueName: "port"))
    var port: UInt16 = Environment.value(.adminPort, 9090)

    @Option(help: ArgumentHelp("Address to ask.", valueName: "address"))
    var address = "127.0.0.1"

    @Option(help: ArgumentHelp("Path to ask: /healthz (alive) or /readyz (every domain served).", valueName: "path"))
    var path = "/healthz"

    func validate() throws {
        if let invalid = Environment.invalidValues.first { throw ValidationError(invalid) }
    }

    func run() throws {
        guard let status = HealthProbe.status(address: address, port: port, path: path) else {
            DiagnosticPrinter.printError("unhealthy: nothing answered on \(address):\(port)")
            throw ExitCode(1)
        }
        guard status == 200 else {
            DiagnosticPrinter.printError("unhealthy: \(path) answered \(status)")
            throw ExitCode(1)
        }
        print("healthy: \(path) answered 200")
    }
}
