import Synchronization

/// One resource served with fixed bytes: its 200 response, its 304 answer, and its ETag.
public final class StaticResource: Sendable {
    /// The full response for `GET` and `HEAD`.
    public let ok: PreparedResponse
    /// The strong ETag as sent, quotes included (the same string as the `ETag` headers').
    public let etag: String
    /// The 304, a retained object pointer once made, 0 until then.
    private let notModifiedSlot = Atomic<UInt>(0)

    /// Prepares the responses for `body` with `contentType` and `cacheControl`.
    ///
    /// The ETag is derived from the bytes, so every replica and every reload gives the same tag for the
    /// same content, and `If-None-Match` works across a fleet behind one load balancer: 78 bits of their SHA-256 in
    /// 13 base64url characters, so that the quoted tag is 15 bytes and Swift keeps it inside the string itself
    /// rather than in an allocation of its own (two per domain). The header list is one literal, so its array has
    /// exactly the room it needs: a server keeps one per resource for every domain.
    public init(body: [UInt8], contentType: String, cacheControl: String, builder: inout PreparedResponseBuilder) {
        let encoded = Base64URL.encode(SHA256.digest(body).prefix(10))
        // Written into the string's own bytes: joined with `+`, the quotes and the tag were three appends.
        let tag = String(unsafeUninitializedCapacity: 15) { tag in
            tag[0] = UInt8(ascii: "\"")
            let end = tag[1...].initialize(fromContentsOf: encoded.utf8.prefix(13))
            tag[end] = UInt8(ascii: "\"")
            return end + 1
        }
        etag = tag
        ok = builder.prepare(
            Response(
                status: 200,
                headers: [
                    HTTPHeader("Content-Type", contentType), HTTPHeader("ETag", tag),
                    HTTPHeader("Cache-Control", cacheControl), HTTPHeader("X-Content-Type-Options", "nosniff"),
                ],
                body: body))
    }

    deinit {
        let bits = notModifiedSlot.load(ordering: .acquiring)
        if bits != 0 { Unmanaged<PreparedResponse>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).release() }
    }

    /// The `304 Not Modified` answer for a matching `If-None-Match`: the 200's `ETag` and `Cache-Control` (and
    /// HTTPS-only headers), no body. Made on first use and kept: most domains' files are never asked for
    /// conditionally, and at 100,000 domains two 304s each would hold about 45 MB. When two threads race, both
    /// make the same response and the first one stored stays.
    public var notModified: PreparedResponse {
        let bits = notModifiedSlot.load(ordering: .acquiring)
        if bits != 0 {
            return Unmanaged<PreparedResponse>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).takeUnretainedValue()
        }
        var response = Response(
            status: 304, headers: ok.response.headers.filter { $0.name == "ETag" || $0.name == "Cache-Control" })
        response.httpsOnlyHeaders = ok.response.httpsOnlyHeaders
        let made = Unmanaged.passRetained(PreparedResponse(response, domainID: ok.domainID))
        let (stored, first) = notModifiedSlot.compareExchange(
            expected: 0, desired: UInt(bitPattern: made.toOpaque()), ordering: .acquiringAndReleasing)
        if stored { return made.takeUnretainedValue() }
        made.release()
        return Unmanaged<PreparedResponse>.fromOpaque(UnsafeRawPointer(bitPattern: first)!).takeUnretainedValue()
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
