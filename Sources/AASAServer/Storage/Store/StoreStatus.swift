import AASACore
public import Foundation

/// What a replica knows of its store, for `/status`, `/metrics` and the dashboard.
public struct StoreStatus: Sendable, Equatable {
    /// Whether the replica reaches the store.
    public enum State: String, Sendable {
        /// Not reached yet since the start.
        case connecting
        /// Connected and following its changes.
        case connected
        /// The connection was lost; serving the last good state while trying again.
        case reconnecting
    }

    /// Whether the replica reaches the store.
    public var state: State = .connecting
    /// The store, `host:port/database`.
    public var server: String
    /// Which replica this is (`serve --replica`, else the host name).
    public var replica: String
    /// The id of the last change applied (0: none yet).
    public var lastChange: Int64 = 0
    /// When the last change was applied; `nil` before the first.
    public var lastChangeAppliedAt: Date?
    /// Changes applied since the start.
    public var changesApplied = 0
    /// Whether what is served was read from the snapshot (`--store-cache`) because the store was unreachable at
    /// the start, and has not been read from the store since.
    public var servingSnapshot = false
    /// Why the store was last unreachable, while it is; `nil` when connected.
    public var problem: String?
    /// The bytes of domain files (pages, templates) fetched from the store since the start: a file is fetched again
    /// only when its digest moved.
    public var fileBytesFetched = 0

    /// The `store` member of `/status`, dates written by `date`.
    func jsonValue(date: (Date?) -> JSONValue) -> JSONValue {
        .members([
            ("state", .string(state.rawValue)), ("server", .string(server)), ("replica", .string(replica)),
            ("lastChange", .number(Double(lastChange))), ("lastChangeAppliedAt", date(lastChangeAppliedAt)),
            ("changesApplied", .number(Double(changesApplied))), ("servingSnapshot", .bool(servingSnapshot)),
            ("problem", problem.map(JSONValue.string) ?? .null),
            ("fileBytesFetched", .number(Double(fileBytesFetched))),
        ])
    }

    /// The status of a replica that has not reached `server` yet.
    public init(server: String, replica: String) {
        self.server = server
        self.replica = replica
    }
}
