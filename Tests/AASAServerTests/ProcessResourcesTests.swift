import Foundation
import Testing

@testable import AASAServer

/// The process-wide settings `serve` makes before it starts: the allocator's arena cap is applied through glibc
/// itself, and an operator's `MALLOC_ARENA_MAX` wins over it.
@Suite(.serialized) struct ProcessResourcesTests {
    @Test func glibcAcceptsTheArenaCapUnlessTheOperatorSetOne() throws {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let operatorsValue = getenv("MALLOC_ARENA_MAX").map { String(cString: $0) }
        defer {
            if let operatorsValue {
                setenv("MALLOC_ARENA_MAX", operatorsValue, 1)
            } else {
                unsetenv("MALLOC_ARENA_MAX")
            }
        }
        unsetenv("MALLOC_ARENA_MAX")
        // The cap serve applies: one arena per core, accepted by mallopt (found in the process, answering 1).
        #expect(ProcessResources.limitMallocArenas(to: cores) == cores)
        #expect(ProcessResources.limitMallocArenas(to: 0) == nil)
        setenv("MALLOC_ARENA_MAX", "4", 1)
        #expect(ProcessResources.limitMallocArenas(to: cores) == nil)
    }
}
