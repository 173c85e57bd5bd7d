import Testing

@testable import AASAServer

struct ChangeDebouncerTests {
    /// Event times and the time the reload is due, in milliseconds after the first event (quiet 250, maximum 1000).
    @Test(arguments: [
        ([0], 250),
        ([0, 100, 200], 450),
        ([0, 240, 480, 720], 970),
        ([0, 200, 400, 600, 800, 900], 1000),  // a steady trickle cannot postpone the reload past the maximum
    ])
    func firesAfterQuietOrAtTheMaximumDelay(events: [Int], due: Int) {
        let start = ContinuousClock.now
        var debouncer = ChangeDebouncer(quietPeriod: .milliseconds(250), maximumDelay: .seconds(1))
        #expect(!debouncer.isPending)
        for event in events { debouncer.record(at: start + .milliseconds(event)) }
        #expect(debouncer.deadline == start + .milliseconds(due))
        let early = debouncer.fire(at: start + .milliseconds(due - 1))
        #expect(!early)
        let onTime = debouncer.fire(at: start + .milliseconds(due))
        #expect(onTime)
        // The burst is over: nothing is pending until the next event, which starts a new burst.
        #expect(!debouncer.isPending)
        let idle = debouncer.fire(at: start + .seconds(5))
        #expect(!idle)
        debouncer.record(at: start + .seconds(5))
        #expect(debouncer.deadline == start + .seconds(5) + .milliseconds(250))
    }
}
