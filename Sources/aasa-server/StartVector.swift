import Foundation

/// What the kernel told the process about its start, in its auxiliary vector (`/proc/self/auxv`: pairs of 64-bit
/// type and value).
struct StartVector {
    /// `AT_SECURE`: started for secure execution (set-user-ID, set-group-ID or file capabilities).
    var isSecureExecution: Bool
    /// `AT_EXECFN`: the path the program was executed by, as given to `execve` (`/proc/self/exe` for a restart).
    var executable: String?

    /// The vector of this process; `nil` when it cannot be read: no `/proc`, or a process the kernel made undumpable
    /// (set-user-ID, file capabilities), whose `/proc/self` files are root's.
    static var current: StartVector? {
        guard let vector = FileManager.default.contents(atPath: "/proc/self/auxv") else { return nil }
        let (atSecure, atExecutableName): (UInt64, UInt64) = (23, 31)
        var start = StartVector(isSecureExecution: false, executable: nil)
        vector.withUnsafeBytes { bytes in
            for offset in stride(from: 0, to: bytes.count - 15, by: 16) {
                let value = bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self)
                switch bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self) {
                case atSecure: start.isSecureExecution = value != 0
                // The kernel's copy of the path, on the process's initial stack, for as long as it runs.
                case atExecutableName:
                    start.executable = UnsafePointer<CChar>(bitPattern: UInt(value)).map { String(cString: $0) }
                default: break
                }
            }
        }
        return start
    }
}
