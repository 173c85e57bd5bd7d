import AASACore

/// The checks of a page path in an API path (`/api/v1/domains/{name}/pages/{path}`), made before anything is read.
///
/// The listener hands the path over as sent (not percent-decoded). The raw path is refused when it holds a NUL or
/// control byte, a backslash (raw or `%5C`), an encoded slash (`%2F`: a page's folders are real slashes) or a `%`
/// not followed by two hex digits; it is then decoded once and refused when it is not UTF-8, holds a decoded
/// control byte or `%` (a name holding `%` is never served: a request for it is decoded again), has an empty
/// segment (`//`) or a `.` or `..` segment; it must be a path ``PageLoader/pathProblem(_:)`` accepts, the rule a load
/// of `pages/` serves files by, and last, one ``RequestPath`` (the decoder requests are served by) reads the same, so
/// the API writes no file a load would not serve or no request would reach.
enum APIPagePath {
    /// The decoded path inside `pages/` (`about/index.html`), or the 400 answer naming the problem and the fix.
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
                if byte == UInt8(ascii: "/") {
                    return refused("holds an encoded slash (%2F); separate folders with a plain '/'")
                }
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
        let segments = path.split(separator: "/", omittingEmptySubsequences: false)
        if segments.contains(where: { $0 == "." || $0 == ".." }) {
            return refused("holds a '.' or '..' segment; give the page's path inside pages/, from its top")
        }
        if segments.contains(where: \.isEmpty) {
            return refused("has an empty segment ('//', or a '/' at its start or end); name a file, as 'a/b.html'")
        }
        if let problem = PageLoader().pathProblem(path) {
            return refused("is not one a load of pages/ serves: \(problem); rename it")
        }
        // The checks above name the problem; the request decoder, the one that serves the page, has the last word,
        // so the API never writes a page no request reaches.
        guard RequestPath("/" + raw)?.description == "/" + path else {
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
