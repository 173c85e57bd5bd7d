/// One resource served with fixed bytes: its 200 response, its 304 answer, and its ETag.
public struct StaticResource: Sendable {
    /// The full response for `GET` and `HEAD`.
    public let ok: PreparedResponse
    /// The `304 Not Modified` answer for a matching `If-None-Match`.
    public let notModified: PreparedResponse
    /// The strong ETag as sent, quotes included (the same string as the `ETag` headers').
    public let etag: String

    /// Prepares the responses for `body` with `contentType` and `cacheControl`.
    ///
    /// The ETag is derived from the bytes, so every replica and every reload gives the same tag for the
    /// same content, and `If-None-Match` works across a fleet behind one load balancer. Every header list is
    /// one literal, so its array has exactly the room it needs: a server keeps two of them per resource for
    /// every domain.
    public init(body: [UInt8], contentType: String, cacheControl: String, builder: inout PreparedResponseBuilder) {
        let tag = "\"" + String(SHA256.hex(body).prefix(32)) + "\""
        etag = tag
        ok = builder.prepare(
            Response(
                status: 200,
                headers: [
                    HTTPHeader("Content-Type", contentType), HTTPHeader("ETag", tag),
                    HTTPHeader("Cache-Control", cacheControl), HTTPHeader("X-Content-Type-Options", "nosniff"),
                ],
                body: body))
        notModified = builder.prepare(
            Response(status: 304, headers: [HTTPHeader("ETag", tag), HTTPHeader("Cache-Control", cacheControl)]))
    }

    /// The 200 or, when `ifNoneMatch` names this resource's tag, the 304 (RFC 9110 §13.1.2).
    public func answer(ifNoneMatch: UnsafeRawBufferPointer?) -> PreparedResponse {
        guard let ifNoneMatch else { return ok }
        var etag = etag
        return etag.withUTF8 { Self.entityTagList(ifNoneMatch, contains: $0) } ? notModified : ok
    }

    /// Whether the comma-separated `If-None-Match` list contains `tag` or `*`, by weak comparison
    /// (RFC 9110 §13.1.2: `If-None-Match` uses weak comparison, so `W/"x"` matches `"x"`).
    static func entityTagList(_ list: UnsafeRawBufferPointer, contains tag: UnsafeBufferPointer<UInt8>) -> Bool {
        var index = 0
        let count = list.count
        while index < count {
            while index < count && (list[index] == 0x20 || list[index] == 0x09 || list[index] == 0x2C) { index += 1 }
            guard index < count else { return false }
            if list[index] == UInt8(ascii: "*") { return true }
            if index + 1 < count && list[index] == UInt8(ascii: "W") && list[index + 1] == UInt8(ascii: "/") {
                index += 2
            }
            let start = index
            if index < count && list[index] == UInt8(ascii: "\"") {
                index += 1
                while index < count && list[index] != UInt8(ascii: "\"") { index += 1 }
                index = min(index + 1, count)
            } else {
                while index < count && list[index] != 0x2C { index += 1 }
            }
            if index - start == tag.count {
                var equal = true
                for offset in 0..<tag.count where list[start + offset] != tag[offset] {
                    equal = false
                    break
                }
                if equal { return true }
            }
        }
        return false
    }
}
