public import Dispatch

/// Runs `background` on another thread while `foreground` runs on this one, and returns both results once
/// both are done. `foreground` gets a group that is done once `background` is.
public func concurrently<Background: Sendable, Foreground>(
    _ background: @escaping @Sendable () -> Background, _ foreground: (_ backgroundDone: DispatchGroup) -> Foreground
) -> (Background, Foreground) {
    let result = Handover<Background>()
    DispatchQueue.global().async { result.give(background()) }
    let foregroundResult = foreground(result.given)
    return (result.value, foregroundResult)
}
