/// A `NOTIFY` received on a channel this connection listens to.
public struct PostgresNotification: Sendable, Hashable {
    /// The channel it was sent on.
    public let channel: String
    /// Its payload (empty when none was given).
    public let payload: String
    /// The process id of the server session that sent it.
    public let senderProcessID: Int32

    /// Creates a notification.
    public init(channel: String, payload: String, senderProcessID: Int32) {
        self.channel = channel
        self.payload = payload
        self.senderProcessID = senderProcessID
    }
}
