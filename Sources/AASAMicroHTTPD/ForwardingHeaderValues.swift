internal import CMicroHTTPD

/// Every value of `X-Forwarded-For` and of `Forwarded`, in the order received.
///
/// libmicrohttpd's lookup returns only the first header of a name, but a proxy that adds its own header line
/// (rather than appending to the client's) puts the one to believe last; so all are collected.
struct ForwardingHeaderValues {
    var xForwardedFor: [String] = []
    var forwarded: [String] = []

    /// Collects them from `connection`'s request headers.
    static func read(_ connection: OpaquePointer) -> ForwardingHeaderValues {
        var values = ForwardingHeaderValues()
        withUnsafeMutablePointer(to: &values) { pointer in
            _ = MHD_get_connection_values_n(connection, .HEADER_KIND, collect, pointer)
        }
        return values
    }

    /// libmicrohttpd's iterator: capture-free, the collection arrives as `cls` (valid for the call above).
    private static let collect: MHD_KeyValueIteratorN = { cls, _, key, keySize, value, valueSize in
        guard let cls, let key, let value else { return .YES }
        let values = cls.assumingMemoryBound(to: ForwardingHeaderValues.self)
        let name = UnsafeRawBufferPointer(start: key, count: keySize)
        let text = { String(decoding: UnsafeRawBufferPointer(start: value, count: valueSize), as: UTF8.self) }
        if equalsIgnoringCase(name, "x-forwarded-for") {
            values.pointee.xForwardedFor.append(text())
        } else if equalsIgnoringCase(name, "forwarded") {
            values.pointee.forwarded.append(text())
        }
        // Enough for any real chain; a client cannot make us collect without bound.
        return values.pointee.xForwardedFor.count + values.pointee.forwarded.count < 64 ? .YES : .NO
    }

    private static func equalsIgnoringCase(_ bytes: UnsafeRawBufferPointer, _ name: StaticString) -> Bool {
        name.withUTF8Buffer { name in
            bytes.count == name.count && zip(bytes, name).allSatisfy { $0 | 0x20 == $1 | 0x20 }
        }
    }
}
