import Dispatch

/// Runs `background` on another thread while `foreground` runs on this one, and returns both results once
/// both are done. `foreground` gets a group that is done once `background` is.
func concurrently<Background: Sendable, Foreground>(
    _ background: @escaping @Sendable () -> Background, _ foreground: (_ backgroundDone: DispatchGroup) -> Foreground
) -> (Background, Foreground) {
    let slot = ResultSlot<Background>()
    let group = DispatchGroup()
    DispatchQueue.global().async(group: group) { slot.value = background() }
    let result = foreground(group)
    group.wait()
    return (slot.value!, result)
}

/// Where ``concurrently(_:_:)``'s background work leaves its result: written once before the group is left,
/// read only after waiting for the group, which orders the two.
private final class ResultSlot<Value>: @unchecked Sendable {
    var value: Value?
}
