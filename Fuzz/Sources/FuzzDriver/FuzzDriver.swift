import AASAFuzzHarness
internal import CLibFuzzer
internal import Glibc

/// Hands one ``FuzzTarget`` to libFuzzer, which runs it on generated inputs until it finds a crash, a
/// sanitizer report or a timeout, or its time is up.
public enum FuzzDriver {
    /// Runs libFuzzer with this process's arguments and exits with its status.
    public static func run(_ target: FuzzTarget) -> Never {
        // A C function pointer cannot capture the target, so each target gets its own literal.
        let callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32 =
            switch target {
            case .siteConfig: { data, size in FuzzDriver.runOne(.siteConfig, data, size) }
            case .association: { data, size in FuzzDriver.runOne(.association, data, size) }
            case .assetLinks: { data, size in FuzzDriver.runOne(.assetLinks, data, size) }
            case .matcher: { data, size in FuzzDriver.runOne(.matcher, data, size) }
            case .reloadComparison: { data, size in FuzzDriver.runOne(.reloadComparison, data, size) }
            case .replicaRead: { data, size in FuzzDriver.runOne(.replicaRead, data, size) }
            }
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, callback))
    }

    /// One input. A broken property aborts, so libFuzzer keeps the input as a crash like any other.
    private static func runOne(_ target: FuzzTarget, _ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
        let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        do {
            try target.run(bytes)
        } catch {
            // Standard error, where libFuzzer writes its report (`stderr` itself is not concurrency-safe).
            let message = Array("invariant violated: \(error)\n".utf8)
            _ = message.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            abort()
        }
        return 0
    }
}
