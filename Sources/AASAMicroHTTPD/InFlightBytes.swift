import Synchronization

/// The bytes of the one-off answers (``AASACore/Response`` built for one request) that a listener's connections
/// still hold, each buffer counted once however many answers share it: a page the API reads from one shared copy
/// costs its size once for sixty slow clients, sixty different pages cost sixty sizes.
///
/// An answer whose new buffers would take the total past ``limit`` is not admitted (the listener answers 503 with
/// `Retry-After` instead), except when nothing is held, so one answer larger than the limit still goes out alone.
/// A buffer is released when libmicrohttpd frees the last answer holding it, after its last byte was sent or its
/// connection closed.
final class InFlightBytes: Sendable {
    /// One buffer of a body: where its storage starts and how many bytes it has.
    struct Buffer: Hashable, Sendable {
        let address: UInt
        let count: Int
    }

    /// The most bytes held at once.
    let limit: Int
    private let state = Mutex<(total: Int, holders: [Buffer: Int])>((0, [:]))

    init(limit: Int) { self.limit = limit }

    /// The bytes held now.
    var total: Int { state.withLock { $0.total } }

    /// Holds `buffers` when what they add fits the limit (or nothing is held yet): `true`, and each stays counted
    /// until ``release(_:)``; `false` holds nothing.
    func admit(_ buffers: [Buffer]) -> Bool {
        state.withLock { state in
            let added = Set(buffers).filter { state.holders[$0] == nil }.reduce(0) { $0 + $1.count }
            guard added == 0 || state.total == 0 || state.total + added <= limit else { return false }
            for buffer in buffers { state.holders[buffer, default: 0] += 1 }
            state.total += added
            return true
        }
    }

    /// Lets go of `buffers`, as admitted; a buffer no answer holds any more leaves the total.
    func release(_ buffers: [Buffer]) {
        state.withLock { state in
            for buffer in buffers {
                guard let count = state.holders[buffer] else { continue }
                if count > 1 {
                    state.holders[buffer] = count - 1
                } else {
                    state.holders[buffer] = nil
                    state.total -= buffer.count
                }
            }
        }
    }

    /// The buffers of `parts`, the empty ones left out.
    static func buffers(of parts: [[UInt8]]) -> [Buffer] {
        parts.compactMap { part in
            part.withUnsafeBytes { bytes in
                guard let base = bytes.baseAddress, bytes.count > 0 else { return nil }
                return Buffer(address: UInt(bitPattern: base), count: bytes.count)
            }
        }
    }
}
