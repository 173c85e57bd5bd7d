public import Dispatch

/// A value one thread gives once and other threads wait for: the result of ``concurrently(_:_:)``'s background
/// half, and the domain names a full load's domain half lists for its certificate half.
///
/// The value is written once before ``given`` is left and read only after waiting for it, which orders the two.
public final class Handover<Value: Sendable>: @unchecked Sendable {
    /// Done once the value is given: for ``Swift/Collection/concurrentMap(helpersAfter:leaving:_:)``, or to wait on.
    public let given = DispatchGroup()
    private var stored: Value?

    /// A handover whose value is still to come.
    public init() {
        given.enter()
    }

    /// Gives the value; call once.
    public func give(_ value: Value) {
        stored = value
        given.leave()
    }

    /// The value, once given.
    public var value: Value {
        given.wait()
        return stored!
    }
}
