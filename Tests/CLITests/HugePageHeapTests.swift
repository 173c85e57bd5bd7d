import AASATestSupport
import Foundation
import Testing

/// `serve` on a kernel that gives transparent huge pages only on request: the process restarts itself once, as its
/// first step, with glibc's allocator told to ask for them, unless its environment already says either way.
@Suite struct HugePageHeapTests {
    /// The mode of the kernel's transparent huge pages, the word in brackets of `always [madvise] never`.
    static let kernelMode: String? =
        (try? String(
            contentsOfFile: "/sys/kernel/mm/transparent_hugepage/enabled", encoding: .utf8))?
        .split(whereSeparator: \.isWhitespace).first { $0.hasPrefix("[") }.map { String($0.dropFirst().dropLast()) }

    /// `GLIBC_TUNABLES` in the environment `pid` was started with (`nil` when it has none). glibc's loader rewrites
    /// the string there to the tunables it passes on, which need not be all of them (Debian's 2.36 shows only the
    /// first of two): the process's own `getenv` keeps the whole value.
    static func tunables(of pid: Int32) throws -> String? {
        let environment = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))
        return environment.split(separator: 0).lazy.map { String(decoding: $0, as: UTF8.self) }
            .first { $0.hasPrefix("GLIBC_TUNABLES=") }.map { String($0.dropFirst("GLIBC_TUNABLES=".count)) }
    }

    /// Whether any mapping of `pid` is advised for huge pages (`hg` among its `VmFlags` in smaps).
    static func hasHugePageAdvice(_ pid: Int32) throws -> Bool {
        try String(contentsOfFile: "/proc/\(pid)/smaps", encoding: .utf8).split(separator: "\n").contains { line in
            line.hasPrefix("VmFlags:") && line.split(separator: " ").contains("hg")
        }
    }

    /// `serve` of a good domain with `tunables` as its `GLIBC_TUNABLES`, waited for until it serves: the tunables
    /// the process the test started runs with after, and whether its heap is advised for huge pages (only a restart
    /// in that same process can have advised it).
    static func serve(tunables: String) throws -> (tunables: String?, advised: Bool) {
        let directory = try PartialStartTests.prepare()
        try FileManager.default.removeItem(atPath: directory.path + "/site-config/broken.example")
        let serve = try ServeProcess(
            in: directory.path, arguments: ["--no-watch"], environment: ["GLIBC_TUNABLES": tunables])
        #expect(serve.waitUntilReady())
        let served = try Curl.request(
            "https://good.example:\(serve.port)/.well-known/apple-app-site-association",
            caFile: directory.path + "/certs/dev-ca/ca.pem", resolve: ("good.example", serve.port))
        #expect(served.status == 200)
        let pid = serve.process.processIdentifier
        let result = (try Self.tunables(of: pid), try Self.hasHugePageAdvice(pid))
        #expect(serve.terminate() == 0)
        return result
    }

    @Test(.enabled(if: kernelMode == "madvise", "the kernel gives huge pages to every heap or to none"))
    func theHeapAsksForHugePagesInTheSameProcess() throws {
        let started = try Self.serve(tunables: "")
        #expect(started.tunables?.hasPrefix("glibc.malloc.hugetlb=1") == true)
        #expect(started.advised)
    }

    @Test(.enabled(if: kernelMode == "madvise", "the kernel gives huge pages to every heap or to none"))
    func otherTunablesAreKept() throws {
        let started = try Self.serve(tunables: "glibc.malloc.arena_max=2")
        #expect(started.tunables?.hasPrefix("glibc.malloc.arena_max=2") == true)
        #expect(started.advised)
    }

    @Test func aSettingOfTheUsersOwnIsLeftAlone() throws {
        let started = try Self.serve(tunables: "glibc.malloc.hugetlb=0")
        #expect(started.tunables == "glibc.malloc.hugetlb=0")
        #expect(!started.advised)
    }

    /// Whether the file system holding `path` honours set-user-ID bits (no `nosuid`): where it does not, a
    /// set-user-ID copy runs as any other and proves nothing.
    static func honoursSetUserID(_ path: String) -> Bool {
        var info = statvfs()
        return statvfs(path, &info) == 0 && info.f_flag & UInt(ST_NOSUID) == 0
    }

    /// Under secure execution glibc's loader erases `glibc.malloc.hugetlb` from the tunables it passes on, so a
    /// restart would never see its own setting and would restart again, for ever: a set-user-ID copy ends.
    @Test(
        .enabled(if: getuid() == 0, "making a set-user-ID copy needs root"),
        .enabled(if: kernelMode == "madvise", "on other kernels nothing restarts"),
        .enabled(if: honoursSetUserID(NSTemporaryDirectory()), "the temporary folder's file system is nosuid"))
    func aSetUserIDStartEnds() throws {
        let directory = TemporaryDirectory("aasa-setuid")
        let copy = directory.path + "/aasa-server"
        try FileManager.default.copyItem(atPath: RepositoryPaths.executable, toPath: copy)
        #expect(try Command.run("chown", ["nobody", copy]).status == 0)
        #expect(chmod(copy, 0o4755) == 0)
        let help = try Command.run(copy, ["--help"], environment: ["GLIBC_TUNABLES": ""], timeout: 30)
        #expect(help.status == 0, "\(help.stderr)")
        #expect(help.stdout.contains("USAGE: aasa-server"))
    }

    @Test(.enabled(if: kernelMode != "madvise", "on a kernel in madvise mode the process restarts"))
    func withoutMadviseModeNothingRestarts() throws {
        let started = try Self.serve(tunables: "")
        #expect(started.tunables == "")
    }
}
