internal import CLibPQ

/// What a connection URI says about where it goes, for messages: `host:port/database`, and the password, so that it
/// can be scrubbed from any text libpq echoes back.
struct ConnectionTarget: Sendable {
    /// `host:port/database`, with libpq's defaults where the URI names none.
    let server: String
    /// Strings that must never appear in a message: the password, as written and as decoded.
    let secrets: [String]
    /// Why libpq could not read the URI, already scrubbed; `nil` when it could.
    let parseError: String?

    init(uri: String) {
        let written = Self.writtenPasswords(in: uri)
        var message: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(uri, &message) else {
            let reason = message.map { String(cString: $0) } ?? "libpq could not read it"
            if let message { PQfreemem(message) }
            secrets = written
            server = "(unreadable connection URI)"
            parseError = Self.scrub(reason, secrets: written)
            return
        }
        defer { PQconninfoFree(options) }
        var values: [String: String] = [:]
        var option = options
        while let keyword = option.pointee.keyword {
            if let value = option.pointee.val { values[String(cString: keyword)] = String(cString: value) }
            option += 1
        }
        let host = values["host"].flatMap { $0.isEmpty ? nil : $0 } ?? values["hostaddr"] ?? "localhost"
        let port = values["port"].flatMap { $0.isEmpty ? nil : $0 } ?? "5432"
        let database = values["dbname"].flatMap { $0.isEmpty ? nil : $0 } ?? values["user"] ?? "(default database)"
        server = "\(host):\(port)/\(database)"
        secrets = (written + [values["password"]].compactMap { $0 }).filter { !$0.isEmpty }
        parseError = nil
    }

    /// `text` with every secret replaced by `***`.
    func scrub(_ text: String) -> String { Self.scrub(text, secrets: secrets) }

    private static func scrub(_ text: String, secrets: [String]) -> String {
        secrets.filter { !$0.isEmpty }.sorted { $0.count > $1.count }.reduce(text) { $0.replacing($1, with: "***") }
    }

    /// The password as written in a URI's user info (`scheme://user:password@host`) or a `password=` keyword, found
    /// without libpq so that even a URI libpq refuses has its password scrubbed from libpq's complaint.
    private static func writtenPasswords(in uri: String) -> [String] {
        var found: [String] = []
        if let scheme = uri.firstRange(of: "://") {
            let rest = uri[scheme.upperBound...]
            let authority = rest.prefix { $0 != "/" && $0 != "?" }
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                found.append(String(authority[authority.index(after: colon)..<at]))
            }
            if let query = rest.firstIndex(of: "?") {
                for pair in rest[rest.index(after: query)...].split(separator: "&")
                where pair.hasPrefix("password=") {
                    found.append(String(pair.dropFirst("password=".count)))
                }
            }
        } else if let keyword = uri.firstRange(of: "password") {
            let afterKeyword = uri[keyword.upperBound...].drop { $0 == " " || $0 == "=" }
            let value =
                afterKeyword.first == "'"
                ? afterKeyword.dropFirst().prefix { $0 != "'" } : afterKeyword.prefix { $0 != " " }
            found.append(String(value))
        }
        return found.filter { !$0.isEmpty }
    }
}
