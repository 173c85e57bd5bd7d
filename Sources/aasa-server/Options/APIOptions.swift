import AASAServer
import ArgumentParser

/// How the admin listener runs the work that may wait (the tenant API, `/status`, `/match`): on workers of its own,
/// with a bounded queue and bounded store statements, so that it never holds the threads that answer the probes.
struct APIOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Threads that answer the tenant API, /status and /match, apart from the admin listener's own; calls "
                + "beyond them and --api-queue get 503 with Retry-After at once (env: \(EnvironmentVariable.apiWorkers)).",
            valueName: "n"))
    var apiWorkers: Int = Environment.value(.apiWorkers, 4)

    @Option(
        help: ArgumentHelp(
            "Calls that may wait for one of the --api-workers (env: \(EnvironmentVariable.apiQueue)).",
            valueName: "n"))
    var apiQueue: Int = Environment.value(.apiQueue, 16)

    @Option(
        help: ArgumentHelp(
            "The most MiB of answers made for one request (the tenant API's, /status) the admin listener's "
                + "connections may hold while they are sent, a page shared by many counted once; one more gets 503 "
                + "with Retry-After (env: \(EnvironmentVariable.apiBytesInFlight)).", valueName: "MiB"))
    var apiBytesInFlight: Int = Environment.value(.apiBytesInFlight, 256)

    @Option(
        help: ArgumentHelp(
            "The longest one store statement of the tenant API may run, or wait for a lock, before the call is "
                + "answered 503 with the cause (env: \(EnvironmentVariable.apiStoreTimeout)).", valueName: "seconds"))
    var apiStoreTimeout: Double = Environment.value(.apiStoreTimeout, 5.0)

    mutating func validate() throws {
        if !(1...256).contains(apiWorkers) { throw ValidationError("--api-workers must be between 1 and 256") }
        if !(0...10_000).contains(apiQueue) { throw ValidationError("--api-queue must be between 0 and 10000") }
        if !(16...65_536).contains(apiBytesInFlight) {
            throw ValidationError("--api-bytes-in-flight must be between 16 and 65536 MiB")
        }
        if !(apiStoreTimeout >= 0.1 && apiStoreTimeout <= 300) {
            throw ValidationError("--api-store-timeout must be between 0.1 and 300 seconds")
        }
    }

    /// Writes the options into `configuration`.
    func apply(to configuration: inout ServerConfiguration) {
        configuration.apiWorkers = apiWorkers
        configuration.apiQueue = apiQueue
        configuration.apiBytesInFlight = apiBytesInFlight << 20
        configuration.apiStoreTimeout = .milliseconds(Int64(apiStoreTimeout * 1000))
    }
}

extension EnvironmentVariable {
    static let apiWorkers: Self = "AASA_SERVER_API_WORKERS"
    static let apiQueue: Self = "AASA_SERVER_API_QUEUE"
    static let apiStoreTimeout: Self = "AASA_SERVER_API_STORE_TIMEOUT"
    static let apiBytesInFlight: Self = "AASA_SERVER_API_BYTES_IN_FLIGHT"
}
