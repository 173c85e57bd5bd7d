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
/// secure execution (set-user-ID or file capabilities: glibc's loader drops the tunable there), under valgrind (its
/// guest would leave it on a restart), or when it is the restart: a process is restarted once at most, whatever a
/// loader passes on of the tunables.
enum HugePageHeap {
    /// glibc's tunable for the allocator's huge pages.
    static let tunable = "glibc.malloc.hugetlb"

    /// The kernel's setting of transparent huge pages.
    static let modeFile = "/sys/kernel/mm/transparent_hugepage/enabled"

    /// Restarts the process with the heap on huge pages when the kernel gives them only on request and nothing
    /// says otherwise; returns when it does not (or cannot: no `/proc`, or a set-user-ID process, which cannot read
    /// its start vector), the environment as it was.
    static func restartIfAdvised() {
        guard mode(in: (try? String(contentsOfFile: modeFile, encoding: .utf8)) ?? "") == "madvise",
            getenv("LD_PRELOAD").map({ String(cString: $0).contains("vgpreload") }) != true,
            let start = StartVector.current,
            !start.isSecureExecution, start.executable != restartPath
        else { return }
        let current = getenv("GLIBC_TUNABLES").map { String(cString: $0) }
        guard let tunables = tunables(adding: current) else { return }
        setenv("GLIBC_TUNABLES", tunables, 1)
        execv(restartPath, CommandLine.unsafeArgv)
        if let current { setenv("GLIBC_TUNABLES", current, 1) } else { unsetenv("GLIBC_TUNABLES") }
    }

    /// What the restart executes: the process's own executable, as the kernel holds it open.
    static let restartPath = "/proc/self/exe"

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
}
