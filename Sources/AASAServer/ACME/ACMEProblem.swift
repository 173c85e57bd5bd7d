import AASACore

/// A problem document from an ACME server (RFC 8555 §6.7, RFC 7807): what it refused and why, kept verbatim for
/// `/status` beside the parsed fields.
public struct ACMEProblem: Sendable, Equatable {
    /// The problem type URI, e.g. `urn:ietf:params:acme:error:rateLimited`.
    public var type: String
    /// The server's human-readable explanation.
    public var detail: String
    /// The HTTP status the problem came with.
    public var status: Int
    /// The document as the server sent it.
    public var document: String
    /// The identifiers' own problems for an order of several names (RFC 8555 §6.7.1), as `name: detail` lines.
    public var subproblems: [String]

    /// The ACME error namespace (RFC 8555 §6.7).
    static let namespace = "urn:ietf:params:acme:error:"

    /// The type without the ACME namespace (`rateLimited`), or the whole type when it is another one.
    public var kind: String {
        type.hasPrefix(Self.namespace) ? String(type.dropFirst(Self.namespace.count)) : type
    }

    /// Parses `body` answered with `status`; `nil` when it is not a JSON object.
    init?(body: [UInt8], status: Int) {
        guard let json = JSONValue.parse(body), case .object = json else { return nil }
        type = json[member: "type"]?.stringValue ?? "about:blank"
        detail = json[member: "detail"]?.stringValue ?? ""
        self.status = status
        document = String(decoding: body, as: UTF8.self)
        subproblems = (json[member: "subproblems"]?.arrayValue ?? []).map { problem in
            let name = problem[member: "identifier"]?[member: "value"]?.stringValue ?? "?"
            return name + ": " + (problem[member: "detail"]?.stringValue ?? problem[member: "type"]?.stringValue ?? "")
        }
    }

    /// The detail and the subproblems on one line.
    public var summary: String {
        let text = detail.isEmpty ? kind : detail
        return subproblems.isEmpty ? text : text + " (" + subproblems.joined(separator: "; ") + ")"
    }
}
