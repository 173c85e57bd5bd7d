/// How an ACME order the server ran ended: the `result` label of `aasa_acme_orders_total` and the keys of
/// ``ACMEManager/orderCounts``.
public enum ACMEOrderResult: String, Sendable, CaseIterable {
    /// A certificate was issued and written.
    case valid
    /// The order failed; it is retried later.
    case failed
}
