/// The `passkeys` section of a site config: the document served at `/.well-known/passkey-endpoints` (W3C, "A
/// Well-Known URL for Relying Party Passkey Endpoints", §3.1 Server Response and §3.1.1 JSON Response).
///
/// Each member is optional; a credential manager links straight to the page it names. An object with no member
/// is served as `{}`, which the draft allows to say the site supports passkeys without naming a page.
public struct PasskeyEndpoints: Sendable, Hashable {
    /// The page that creates a passkey for the signed-in account (`enroll`).
    public var enroll: String?
    /// The page that lists and manages the account's passkeys (`manage`).
    public var manage: String?
    /// A page saying how the site uses WebAuthn's PRF extension (`prfUsageDetails`, in the Editor's Draft).
    public var prfUsageDetails: String?

    /// Creates the section.
    public init(enroll: String? = nil, manage: String? = nil, prfUsageDetails: String? = nil) {
        self.enroll = enroll
        self.manage = manage
        self.prfUsageDetails = prfUsageDetails
    }

    /// The members the draft defines, in the order they are served, and where each is kept: every list of them
    /// (the served document, the site.json keys, what `import` reads) is this one.
    static let fields: [(member: String, keyPath: any WritableKeyPath<PasskeyEndpoints, String?> & Sendable)] = [
        ("enroll", \.enroll), ("manage", \.manage), ("prfUsageDetails", \.prfUsageDetails),
    ]
    /// The members' names.
    static let members = fields.map(\.member)
    /// The keys of the site.json object.
    static let keys = members + ["comment"]

    /// The URLs set, by member name, in the served order.
    public var urls: [(member: String, url: String)] {
        Self.fields.compactMap { field in self[keyPath: field.keyPath].map { (field.member, $0) } }
    }

    /// Whether no member is set (served as `{}`).
    public var isEmpty: Bool { urls.isEmpty }

    /// The served document: a JSON object of the members set (§3.1.1).
    public var jsonValue: JSONValue {
        .members(urls.map { ($0.member, .string($0.url)) })
    }

    /// The served bytes, compact JSON.
    public var body: [UInt8] { JSONWriter(style: .compact).bytes(jsonValue) }

    /// Decodes the site.json object; `nil` (reported) when it is not one.
    static func read(_ node: JSONNode, path: @autoclosure () -> KeyPath, reader: JSONReader) -> PasskeyEndpoints? {
        guard let object = reader.object(node, path: path(), known: keys) else { return nil }
        var endpoints = PasskeyEndpoints()
        for field in fields {
            if let member = object[field.member], let url = reader.string(member.value, path: path().key(field.member))
            {
                endpoints[keyPath: field.keyPath] = url
            }
        }
        if let member = object["comment"] { _ = reader.string(member.value, path: path().key("comment")) }
        return endpoints
    }
}
