import AASACore

/// The checks of a page path in an API path (`/api/v1/domains/{name}/pages/{path}`), made before anything is read.
///
/// The listener hands the path over as sent (not percent-decoded). The raw path is refused when it holds a NUL or
/// control byte, a backslash (raw or `%5C`) or a `%` not followed by two hex digits; it is then decoded once, an
/// encoded slash (`%2F`, as an OpenAPI client sends a path parameter) separating folders as a plain one does, and
/// refused when it is not UTF-8, holds a decoded control byte or `%` (a name holding `%` is never served: a request
/// for it is decoded again), is longer than ``maximumCharacters``, has an empty segment (`//`) or a `.` or `..`
/// segment; it must be a path ``PageLoader/pathProblem(_:)`` accepts, the rule a load of `pages/` serves files by,
/// and last, ``RequestPath`` (the decoder requests are served by) must read the path a browser requests for it the
/// same, so the API writes no file a load would not serve or no request would reach.
enum APIPagePath {
    /// The most characters (Unicode scalars) of a decoded path: each percent-encoded takes at most 12 bytes, so any
    /// path within it fits a request line of ``RequestPath/maximumLength`` however it is encoded. The OpenAPI
    /// document declares it as the parameter's `maxLength`.
    static let maximumCharacters = 340

    /// The most bytes of one name of a path (a file or folder name, as a file system holds it).
    static let maximumNameBytes = 255

    /// The decoded path inside `pages/` (`about/index.html`), or the answer naming the problem and the fix: 400, or
    /// 422 for a name longer than a file name can be.
    static func decode(_ raw: String) -> Checked<String> {
        func refused(_ problem: String) -> Checked<String> {
            .refused(TenantAPI.error(400, "the page path '\(printable(raw))' \(problem)"))
        }
        let bytes = Array(raw.utf8)
        guard bytes.count <= RequestPath.maximumLength else {
            return refused("is \(bytes.count) bytes; the limit is \(RequestPath.maximumLength)")
        }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            var byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count,
                    let high = RequestPath.hexValue(bytes[index + 1]), let low = RequestPath.hexValue(bytes[index + 2])
                else {
                    return refused("has a '%' not followed by two hex digits; percent-encode a '%' in a name as %25")
                }
                byte = high << 4 | low
                if byte == UInt8(ascii: "%") {
                    return refused("holds an encoded '%' (%25); a page whose name holds '%' is never served: rename it")
                }
                index += 3
            } else {
                index += 1
            }
            if byte == 0 { return refused("holds a NUL byte; remove it") }
            if byte < 0x20 || byte == 0x7F { return refused("holds a control character; remove it") }
            if byte == UInt8(ascii: "\\") {
                return refused("holds a backslash; separate folders with '/', and never put '\\' in a page's name")
            }
            decoded.append(byte)
        }
        guard let path = String(validating: decoded, as: UTF8.self) else {
            return refused("is not UTF-8 once decoded; percent-encode the UTF-8 bytes of the name")
        }
        guard path.unicodeScalars.count <= maximumCharacters else {
            return refused(
                "is \(path.unicodeScalars.count) characters once decoded; the limit is \(maximumCharacters)")
        }
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        if segments.contains(where: { $0 == "." || $0 == ".." }) {
            return refused("holds a '.' or '..' segment; give the page's path inside pages/, from its top")
        }
        if segments.contains(where: \.isEmpty) {
            return refused("has an empty segment ('//', or a '/' at its start or end); name a file, as 'a/b.html'")
        }
        if let long = segments.first(where: { $0.utf8.count > maximumNameBytes }) {
            return .refused(
                TenantAPI.error(
                    422,
                    "the page path '\(printable(raw))' has a name of \(long.utf8.count) bytes; a file name holds at most "
                        + "\(maximumNameBytes) bytes: shorten it"))
        }
        if let problem = PageLoader().pathProblem(path) {
            return refused("is not one a load of pages/ serves: \(problem); rename it")
        }
        // The checks above name the problem; the request decoder, the one that serves the page, has the last word,
        // so the API never writes a page no request reaches.
        let requested = segments.map { String(decoding: URLText.encodeComponent($0.utf8), as: UTF8.self) }
        guard RequestPath("/" + requested.joined(separator: "/"))?.description == "/" + path else {
            return refused("is not a path a request reaches once decoded; rename it")
        }
        return .accepted(path)
    }

    /// `text` with control characters shown as `\u{…}` escapes, for a message: at most 300 bytes.
    private static func printable(_ text: String) -> String {
        UTF8Bound.cut(
            UTF8Bound.prefix(text, bytes: 301).unicodeScalars.map {
                $0.value < 0x20 || $0.value == 0x7F ? "\\u{\(String($0.value, radix: 16))}" : "\($0)"
            }
            .joined(), bytes: 300)
    }
}
