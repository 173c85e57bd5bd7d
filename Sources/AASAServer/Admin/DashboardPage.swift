import AASACore
import Foundation

/// The admin listener's `GET /`: one self-contained page (docs/operations.md, "Dashboard") that reads the same
/// JSON endpoints a script would (`/status`, `/fetches`, `/traffic`, `/match`, and the tenant API `/api/v1/` for
/// its editor) and adds no data path of its own.
///
/// Its stylesheet and script (`Dashboard/dashboard.css` and the files of `Dashboard/script/`, compiled into the
/// binary) are inlined
/// into `dashboard.html`, each without its comments, indentation and blank lines (``compactScript(_:)``,
/// ``compactStyle(_:)``, ``compactMarkup(_:)``: what the browser runs is the same, in a page of under 100 KB), and
/// the Content-Security-Policy allows exactly those two by their SHA-256 and
/// requests to its own origin only: no other script, style, frame, form target or origin can run or be reached,
/// even if a tenant's text shown on the page tried.
enum DashboardPage {
    /// The script's files in the order they run, one per section of the page: `base` (settings, state, DOM helpers,
    /// formatting), `requests`, `token` (the token form), `polling`, `status` (summary, domains, reloads), `queue`
    /// (ACME's queue and "Retry now"), `fetches`, `traffic`, `match` ("Try a URL"), `editor` (site.json through the
    /// tenant API), and `wiring`, which starts the page. They share one scope, as one script.
    static let scriptFiles: [[UInt8]] = [
        PackageResources.base_js, PackageResources.requests_js, PackageResources.token_js,
        PackageResources.polling_js, PackageResources.status_js, PackageResources.queue_js,
        PackageResources.fetches_js, PackageResources.traffic_js, PackageResources.match_js,
        PackageResources.editor_js, PackageResources.wiring_js,
    ]

    /// The page and its headers, built once.
    static let response: Response = {
        let style = compactStyle(String(decoding: PackageResources.dashboard_css, as: UTF8.self))
        let script = compactScript(scriptFiles.map { String(decoding: $0, as: UTF8.self) }.joined())
        let page = compactMarkup(String(decoding: PackageResources.dashboard_html, as: UTF8.self))
            .replacingOccurrences(of: "{{style}}", with: style)
            .replacingOccurrences(of: "{{script}}", with: script)
        return Response(
            status: 200,
            headers: [
                HTTPHeader("Content-Type", "text/html; charset=utf-8"),
                HTTPHeader("Cache-Control", "no-cache"),
                HTTPHeader("Content-Security-Policy", contentSecurityPolicy(style: style, script: script)),
                HTTPHeader("X-Content-Type-Options", "nosniff"),
                HTTPHeader("X-Frame-Options", "DENY"),
                HTTPHeader("Referrer-Policy", "no-referrer"),
                HTTPHeader("Cross-Origin-Opener-Policy", "same-origin"),
                HTTPHeader("Cross-Origin-Resource-Policy", "same-origin"),
            ],
            body: Array(page.utf8))
    }()

    /// The policy: nothing by default; the inlined script and style by hash; `fetch` to this origin; images
    /// only as `data:` URLs; no base URL, form target or framing.
    static func contentSecurityPolicy(style: String, script: String) -> String {
        func hash(_ text: String) -> String {
            "'sha256-\(Data(SHA256.digest(Array(text.utf8))).base64EncodedString())'"
        }
        return "default-src 'none'; script-src \(hash(script)); style-src \(hash(style)); connect-src 'self'; "
            + "img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    /// The script, line by line, without indentation, blank lines, `//` comment lines and `/* … */` comments that
    /// take whole lines. Line breaks stay (no statement joins another), and nothing inside a line changes; the
    /// script has no string or template literal spanning lines, whose lines would lose their indentation.
    static func compactScript(_ script: String) -> String {
        var lines: [String] = []
        var inComment = false
        for line in script.split(separator: "\n") {
            let text = trimmed(line)
            let commentEnd = commentEnd(in: text)
            if inComment {
                inComment = commentEnd == nil
                if let commentEnd, commentEnd != text.endIndex {
                    lines.append(String(trimmed(text[commentEnd...])))
                }
            } else if text.hasPrefix("/*") {
                inComment = commentEnd == nil
                // Code after the comment's end keeps the line, comment and all.
                if let commentEnd, commentEnd != text.endIndex { lines.append(String(text)) }
            } else if !text.isEmpty && !text.hasPrefix("//") {
                lines.append(String(text))
            }
        }
        return lines.joined(separator: "\n")
    }

    /// `text` without the white space (Unicode's, line breaks among it) at either end. Built at every start, as the
    /// page is: Foundation's character sets made this a tenth of a start of a few domains.
    static func trimmed(_ text: Substring) -> Substring {
        guard let first = text.firstIndex(where: { !$0.isWhitespace }),
            let last = text.lastIndex(where: { !$0.isWhitespace })
        else { return text[text.endIndex...] }
        return text[first...last]
    }

    /// Where the first `*/` in `text` ends, or `nil` when it has none.
    private static func commentEnd(in text: Substring) -> Substring.Index? {
        let bytes = text.utf8
        var index = bytes.startIndex
        while let star = bytes[index...].firstIndex(of: UInt8(ascii: "*")) {
            let next = bytes.index(after: star)
            if next != bytes.endIndex, bytes[next] == UInt8(ascii: "/") { return bytes.index(after: next) }
            index = next
        }
        return nil
    }

    /// The stylesheet without comments, and without the white space CSS does not read: runs of it become one
    /// space, none after `{`, `}`, `;`, `,` or `:` nor before `{`, `}`, `;` or `,`. Quoted strings stay as written.
    static func compactStyle(_ style: String) -> String {
        let characters = Array(style.unicodeScalars)
        var output = String.UnicodeScalarView()
        var quote: Unicode.Scalar?
        var space = false
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if let open = quote {
                output.append(character)
                if character == open { quote = nil }
                index += 1
                continue
            }
            if character == "/", index + 1 < characters.count, characters[index + 1] == "*" {
                var end = index + 2
                while end + 1 < characters.count, !(characters[end] == "*" && characters[end + 1] == "/") { end += 1 }
                index = end + 2
                space = true
                continue
            }
            if character.properties.isWhitespace {
                space = true
                index += 1
                continue
            }
            if space, let last = output.last, !"{};,:".unicodeScalars.contains(last),
                !"{};,".unicodeScalars.contains(character)
            {
                output.append(" ")
            }
            space = false
            if character == "\"" || character == "'" { quote = character }
            output.append(character)
            index += 1
        }
        return String(output)
    }

    /// The page's lines without indentation and blank lines (it has no `<pre>` or `<textarea>` content, where
    /// they would show).
    static func compactMarkup(_ markup: String) -> String {
        markup.split(separator: "\n").map(trimmed).filter { !$0.isEmpty }.joined(separator: "\n")
    }
}
