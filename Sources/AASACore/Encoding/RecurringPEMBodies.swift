import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The decoded bodies of the PEM blocks that recur from file to file: a chain's intermediates (``PEMBlocks`` gives it
/// only certificates that follow a certificate, never a key).
///
/// Every certificate folder of a CA's domains holds the same one or two intermediates after its leaf, so a start
/// of 100,000 domains decodes the same base64 text 100,000 times (more than half of a chain's text). A body kept
/// here is compared with the text (a `memcmp`) and its bytes shared instead.
///
/// Bounded, since what is kept comes from tenants' files: only bodies of at most ``maximumTextBytes`` are kept, at
/// most ``capacity`` of them, the oldest replaced first; a file of bodies never seen before costs one comparison
/// of its length with each kept body. Safe to use from any thread.
final class RecurringPEMBodies: Sendable {
    /// The process's bodies.
    static let shared = RecurringPEMBodies()

    /// The most bodies kept at once: a CA has a few intermediates in use at a time.
    static let capacity = 8
    /// The longest body text kept: an intermediate's is under 3 KB.
    static let maximumTextBytes = 8 * 1024

    private struct Body {
        var text: [UInt8]
        var bytes: [UInt8]
    }

    /// The kept bodies, and the position the next one replaces once there are ``capacity``.
    private let kept = Mutex<(bodies: [Body], next: Int)>(([], 0))

    /// How many bodies are kept now.
    var count: Int { kept.withLock { $0.bodies.count } }

    /// The bytes of `text`, decoded by `decode` or taken from a body already kept; `nil` when `decode` fails.
    func bytes(of text: ArraySlice<UInt8>, decode: (ArraySlice<UInt8>) -> [UInt8]?) -> [UInt8]? {
        guard !text.isEmpty, text.count <= Self.maximumTextBytes else { return decode(text) }
        let found = text.withUnsafeBufferPointer { text in
            kept.withLock { kept in
                kept.bodies.first { body in
                    body.text.count == text.count
                        && body.text.withUnsafeBufferPointer {
                            memcmp($0.baseAddress!, text.baseAddress!, text.count) == 0
                        }
                }?.bytes
            }
        }
        if let found { return found }
        guard let bytes = decode(text) else { return nil }
        let body = Body(text: Array(text), bytes: bytes)
        // The body replaced is returned, and freed once the lock is released, not while other threads wait for it.
        _ = kept.withLock { kept -> Body? in
            guard kept.bodies.count == Self.capacity else {
                kept.bodies.append(body)
                return nil
            }
            let replaced = kept.bodies[kept.next]
            kept.bodies[kept.next] = body
            kept.next = (kept.next + 1) % Self.capacity
            return replaced
        }
        return bytes
    }
}
