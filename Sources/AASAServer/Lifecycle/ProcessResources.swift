#if canImport(Glibc)
    import Glibc
#endif

/// Process-wide limits and identity: the file-descriptor limit a server with thousands of connections
/// needs, the allocator's arenas, and dropping root after binding privileged ports.
public enum ProcessResources {
    /// Why switching user failed.
    public struct UserSwitchError: Error, CustomStringConvertible {
        /// What went wrong.
        public var description: String
    }

    /// Raises the soft `RLIMIT_NOFILE` to the hard limit and returns both (each connection is a descriptor).
    @discardableResult
    public static func raiseOpenFileLimit() -> (soft: UInt64, hard: UInt64) {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return (0, 0) }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return (UInt64(limit.rlim_cur), UInt64(limit.rlim_max))
    }

    /// Caps glibc's malloc arenas at `count` (`mallopt(M_ARENA_MAX)`), unless the operator set `MALLOC_ARENA_MAX`,
    /// and returns the cap applied (nil when none was).
    ///
    /// glibc gives each thread that allocates concurrently an arena of its own, up to eight per core. A start's
    /// worker threads each build their share of the catalog in their own arena, and what one worker frees stays
    /// resident in that arena, unused by the others. With one arena per core the workers reuse what the others freed:
    /// measured at 100,000 domains from the store, 887–914 MiB after a start against 903–961 MiB uncapped, with the
    /// same memory in use.
    @discardableResult
    public static func limitMallocArenas(to count: Int) -> Int? {
        guard count > 0, getenv("MALLOC_ARENA_MAX") == nil else { return nil }
        // mallopt is declared in glibc's malloc.h, which the Glibc module does not import: looked up in the process
        // (a nil handle is RTLD_DEFAULT).
        guard let symbol = dlsym(nil, "mallopt") else { return nil }
        typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
        let mallopt = unsafeBitCast(symbol, to: Mallopt.self)
        let arenaMax: Int32 = -8  // M_ARENA_MAX in glibc's malloc.h
        return mallopt(arenaMax, Int32(clamping: count)) == 1 ? count : nil
    }

    /// Switches the whole process to `name`'s user, its primary group and its supplementary groups (`initgroups`,
    /// so membership of e.g. `ssl-cert` still opens the keys), for good: root cannot be regained afterwards.
    ///
    /// Called after the ports are bound (``Server/bindPorts()``) and before anything is loaded, so port 443 can be
    /// bound as root and no file is read and no request answered as root. glibc applies setuid/setgid to every
    /// thread of the process.
    public static func switchUser(to name: String) throws(UserSwitchError) {
        guard let entry = getpwnam(name) else { throw UserSwitchError(description: "no user named '\(name)'") }
        let uid = entry.pointee.pw_uid
        let gid = entry.pointee.pw_gid
        if getuid() == uid && geteuid() == uid { return }
        guard initgroups(name, gid) == 0, setgid(gid) == 0, setuid(uid) == 0 else {
            throw UserSwitchError(
                description:
                    "cannot switch to user '\(name)': \(String(cString: strerror(errno))) (start as root to switch users)"
            )
        }
        guard uid == 0 || (setuid(0) != 0 && geteuid() == uid) else {
            throw UserSwitchError(
                description: "switched to user '\(name)' but root could be regained; refusing to go on")
        }
    }
}
