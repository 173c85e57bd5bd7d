import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The heap on transparent huge pages, where the kernel gives them only to memory that asks.
///
/// A start at 100,000 domains builds about 370 MiB of small objects; on 4 KiB pages the TLB misses and page faults
/// of that heap cost about a tenth of the start's CPU. glibc's allocator asks for huge pages (`madvise` with
/// `MADV_HUGEPAGE` on the heap it grows, in 2 MiB steps) only when `GLIBC_TUNABLES` holds `glibc.malloc.hugetlb=1`,
/// and its dynamic loader reads that once, before `main`. So on a kernel whose mode
/// (`/sys/kernel/mm/transparent_hugepage/enabled`) is `madvise`, the process restarts itself as its first step with
/// the tunable added: `execve` of its own executable, keeping its PID, arguments, descriptors and the rest of its
/// environment. With `always` every heap gets huge pages already, and with `never` none can.
///
/// It does not restart when `GLIBC_TUNABLES` already sets `glibc.malloc.hugetlb` (`=0` turns this off), under
/// secure execution (set-user-ID or file capabilities: the loader ignores tunables there), or under valgrind (its
/// guest would leave it on a restart).
enum HugePageHeap {
    /// glibc's tunable for the allocator's huge pages.
    static let tunable = "glibc.malloc.hugetlb"

    /// The kernel's setting of transparent huge pages.
    static let modeFile = "/sys/kernel/mm/transparent_hugepage/enabled"

    /// Restarts the process with the heap on huge pages when the kernel gives them only on request and nothing
    /// says otherwise; returns when it does not (or cannot: no `/proc`), the environment as it was.
    static func restartIfAdvised() {
        guard mode(in: (try? String(contentsOfFile: modeFile, encoding: .utf8)) ?? "") == "madvise",
            !environment("LD_PRELOAD").contains("vgpreload"), !isSecureExecution
        else { return }
        let current = getenv("GLIBC_TUNABLES").map { String(cString: $0) }
        guard let tunables = tunables(adding: current) else { return }
        setenv("GLIBC_TUNABLES", tunables, 1)
        execv("/proc/self/exe", CommandLine.unsafeArgv)
        if let current { setenv("GLIBC_TUNABLES", current, 1) } else { unsetenv("GLIBC_TUNABLES") }
    }

    /// `GLIBC_TUNABLES` as `current` with huge pages for the heap added, or `nil` when it already sets them either
    /// way.
    static func tunables(adding current: String?) -> String? {
        let setting = tunable + "=1"
        guard let current, !current.isEmpty else { return setting }
        guard !current.split(separator: ":").contains(where: { $0.hasPrefix(tunable + "=") }) else { return nil }
        return current + ":" + setting
    }

    /// The mode the kernel's setting file selects, the word in brackets: `always [madvise] never` is `madvise`.
    static func mode(in setting: String) -> String? {
        setting.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("[") && $0.hasSuffix("]") }
            .map { String($0.dropFirst().dropLast()) }
    }

    /// Whether the kernel started the process for secure execution (`AT_SECURE` in its auxiliary vector, pairs of
    /// 64-bit type and value): the loader then drops tunables, and a restart would never see its own. Unknown
    /// (no `/proc`) counts as secure, there being no restart without `/proc/self/exe` either.
    private static var isSecureExecution: Bool {
        guard let vector = FileManager.default.contents(atPath: "/proc/self/auxv") else { return true }
        let atSecure: UInt64 = 23
        return vector.withUnsafeBytes { bytes in
            stride(from: 0, to: bytes.count - 15, by: 16).contains { offset in
                bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self) == atSecure
                    && bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt64.self) != 0
            }
        }
    }

    private static func environment(_ name: String) -> String {
        getenv(name).map { String(cString: $0) } ?? ""
    }
}
