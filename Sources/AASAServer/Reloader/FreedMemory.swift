#if canImport(Glibc)
    import Glibc
#endif

/// Hands memory freed by a load back to the kernel.
///
/// A load parses thousands of files on every core, and glibc gives each thread its own arena; what the
/// parsing freed stays in those arenas as resident memory until the next allocation there reuses it.
/// glibc's `malloc_trim` releases the free pages of every arena, once per load (4 MiB after loading 10,000
/// domains: most of the heap is live, docs/benchmarks.md, "What bounds the targets not met"). It is looked up at run time: Swift's
/// Glibc module does not export `<malloc.h>`, and other C libraries (musl) do not have it, in which case
/// this does nothing.
enum FreedMemory {
    private typealias Trim = @convention(c) (Int) -> Int32

    private static let trim: Trim? = {
        #if canImport(Glibc)
            guard let process = dlopen(nil, RTLD_NOW), let symbol = dlsym(process, "malloc_trim") else { return nil }
            return unsafeBitCast(symbol, to: Trim.self)
        #else
            return nil
        #endif
    }()

    /// Returns the free pages of every malloc arena to the kernel.
    static func release() {
        _ = trim?(0)
    }
}
