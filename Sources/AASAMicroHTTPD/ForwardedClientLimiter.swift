internal import AASACore
import Synchronization

/// How many requests from each forwarded client address are in progress on one listener, against a limit.
///
/// libmicrohttpd's per-address connection limit counts TCP peers, and behind a proxy every client shares the
/// proxy's address. For requests from a trusted proxy this counts per forwarded address instead: a request is
/// in progress from the moment it is routed until its response has been handed to the socket (or the
/// connection ends), and a request beyond the limit gets 429 at once.
final class ForwardedClientLimiter: Sendable {
    /// Most requests in progress per forwarded address.
    let limit: Int
    private let counts = Mutex<[IPAddress: Int]>([:])

    init(limit: Int) {
        self.limit = limit
    }

    /// Counts a request from `client`; `false` (and nothing counted) when it already has `limit` in progress.
    func admit(_ client: IPAddress) -> Bool {
        counts.withLock { counts in
            let current = counts[client, default: 0]
            guard current < limit else { return false }
            counts[client] = current + 1
            return true
        }
    }

    /// The request from `client` that ``admit(_:)`` counted has finished.
    func release(_ client: IPAddress) {
        counts.withLock { counts in
            let remaining = counts[client, default: 1] - 1
            counts[client] = remaining > 0 ? remaining : nil
        }
    }
}
