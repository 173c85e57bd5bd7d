#if canImport(Glibc)
    public import Glibc
#elseif canImport(Darwin)
    public import Darwin
#endif

/// `posix_spawn` attributes that start a program as a shell starts one: no signal blocked, every signal at its
/// default action (a server ignores SIGPIPE, which `exec` would otherwise pass on), and in a process group of its own,
/// so one signal to the group stops the program and whatever it started.
public enum SpawnAttributes {
    /// Calls `body` with the attributes, which live for the call.
    public static func with<Result>(
        _ body: (UnsafeMutablePointer<posix_spawnattr_t>) throws -> Result
    ) rethrows -> Result {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setpgroup(&attributes, 0)
        posix_spawnattr_setflags(
            &attributes, Int16(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        return try body(&attributes)
    }
}
