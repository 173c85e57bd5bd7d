/// The `Content-Type` of a page file, from its extension (lower-cased); unknown types are sent as
/// `application/octet-stream` with `nosniff`, so a browser never guesses HTML.
public enum ContentType {
    static let table: [String: String] = [
        "html": "text/html; charset=utf-8", "htm": "text/html; charset=utf-8",
        "css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8",
        "mjs": "text/javascript; charset=utf-8", "json": "application/json", "map": "application/json",
        "webmanifest": "application/manifest+json", "txt": "text/plain; charset=utf-8",
        "md": "text/markdown; charset=utf-8", "csv": "text/csv; charset=utf-8", "xml": "application/xml",
        "rss": "application/rss+xml", "atom": "application/atom+xml", "svg": "image/svg+xml", "png": "image/png",
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp", "avif": "image/avif",
        "ico": "image/x-icon", "bmp": "image/bmp", "woff": "font/woff", "woff2": "font/woff2", "ttf": "font/ttf",
        "otf": "font/otf", "pdf": "application/pdf", "wasm": "application/wasm", "mp4": "video/mp4",
        "webm": "video/webm", "mp3": "audio/mpeg", "ogg": "audio/ogg", "wav": "audio/wav", "zip": "application/zip",
        "gz": "application/gzip",
    ]

    /// The type for a file named `name`.
    public static func forFile(_ name: String) -> String {
        guard let dot = name.lastIndex(of: ".") else { return "application/octet-stream" }
        return table[name[name.index(after: dot)...].lowercased()] ?? "application/octet-stream"
    }

    /// Whether a file named `name` is an HTML page (gets the banner and icons).
    public static func isHTML(_ name: String) -> Bool {
        forFile(name).hasPrefix("text/html")
    }
}
