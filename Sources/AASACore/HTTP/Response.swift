import Synchronization

/// One HTTP header field as sent on the wire.
public struct HTTPHeader: Sendable, Hashable {
    /// Field name, e.g. `Content-Type`.
    public var name: String
    /// Field value, already valid for the wire (no CR/LF).
    public var value: String

    /// Creates a header field.
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// A complete HTTP response: status, headers and body bytes.
///
/// The transport adds `Content-Length`, `Date` and connection management itself; everything else
/// a client sees is here.
public struct Response: Sendable, Hashable {
    /// HTTP status code.
    public var status: Int
    /// Header fields in the order they are sent.
    public var headers: [HTTPHeader]
    /// Body bytes. For `HEAD` the transport sends the headers of this body without the body.
    public var body: [UInt8]
    /// Header fields sent after ``headers`` only over TLS, such as `Strict-Transport-Security`
    /// (RFC 6797 §7.2: never over plain HTTP).
    public var httpsOnlyHeaders: [HTTPHeader]

    /// Creates a response.
    public init(status: Int, headers: [HTTPHeader] = [], body: [UInt8] = [], httpsOnlyHeaders: [HTTPHeader] = []) {
        self.status = status
        self.headers = headers
        self.body = body
        self.httpsOnlyHeaders = httpsOnlyHeaders
    }

    /// The header fields sent over plain HTTP (`secure` false) or TLS.
    public func headers(secure: Bool) -> [HTTPHeader] {
        secure ? headers + httpsOnlyHeaders : headers
    }

    /// The value of the first header named `name` (case-insensitive), if any.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.name.lowercased() == wanted }?.value
    }

    /// Hashes everything but the body's bytes, only its length: a served body's headers carry its ETag (a
    /// digest of those bytes), and the standard hash went through a body byte by byte, about a hundred
    /// instructions each, for every response of every domain at each load. Equality still compares the bytes.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(status)
        hasher.combine(headers)
        hasher.combine(body.count)
        hasher.combine(httpsOnlyHeaders)
    }
}

/// A response built once at load time and shared by every request that routes to it.
///
/// `id` is dense within its ``RouteTable`` (0..<count), so a transport can keep its own native
/// handle per prepared response in a plain array indexed by `id` (the hot path is precomputed).
public final class PreparedResponse: Sendable {
    /// Position of this response in its table's ``RouteTable/preparedResponses``.
    public let id: Int
    /// What is sent.
    public let response: Response
    /// The number (``DomainIDs``) of the configured domain this response belongs to, 0 for none (an unknown
    /// host): known when the table is built, so metrics label a request without parsing its Host a second
    /// time, and key on an `Int` rather than the name.
    public let domainID: Int
    /// ``Response/status``, kept beside the handle so the hot path reads one object (the response's arrays
    /// live elsewhere, and at thousands of domains every object touched is a cache miss).
    public let status: Int
    /// `response.body.count`, for the same reason.
    public let bodyByteCount: Int
    /// For a response kept outside any route table (``init(kept:domainID:)``), where the transport keeps the
    /// native form it built on first use; `nil` for a table's responses, whose native forms the transport
    /// builds with the table.
    public let transportForms: TransportForms?

    /// Creates a prepared response; only ``PreparedResponseBuilder`` hands out ids.
    init(id: Int, response: Response, domainID: Int) {
        self.id = id
        self.response = response
        self.domainID = domainID
        status = response.status
        bodyByteCount = response.body.count
        transportForms = nil
    }

    /// A response built after the table, and kept for later requests (a page rendered for one URL,
    /// ``RenderedPages``): its id is -1, and the transport builds its native form once, into
    /// ``transportForms``.
    public init(kept response: Response, domainID: Int = 0) {
        id = -1
        self.response = response
        self.domainID = domainID
        status = response.status
        bodyByteCount = response.body.count
        transportForms = TransportForms()
    }
}

/// A transport's native forms of one kept ``PreparedResponse``: one for plain HTTP, one for TLS (which
/// differ by the HTTPS-only headers).
public final class TransportForms: Sendable {
    private let forms = Mutex<(plain: (any AnyObject & Sendable)?, secure: (any AnyObject & Sendable)?)>((nil, nil))

    /// The form kept for `secure`, or `make()`'s, kept from now on. `make` runs outside the lock; when two
    /// threads race, both forms are equivalent and the first one stored stays.
    public func form<Form: AnyObject & Sendable>(secure: Bool, make: () throws -> Form) rethrows -> Form {
        let kept = forms.withLock { secure ? $0.secure : $0.plain }
        if let kept = kept as? Form { return kept }
        let made = try make()
        return forms.withLock { forms in
            if let first = (secure ? forms.secure : forms.plain) as? Form { return first }
            if secure { forms.secure = made } else { forms.plain = made }
            return made
        }
    }
}

/// Hands out dense ids while a route table is being built.
public struct PreparedResponseBuilder: Sendable {
    /// Every response prepared so far, in id order.
    public private(set) var responses: [PreparedResponse] = []
    /// The domain number stamped on responses prepared from now on (``PreparedResponse/domainID``), 0 for none.
    public var domainID = 0
    /// Added to the ``Response/httpsOnlyHeaders`` of responses prepared from now on (the domain's HSTS).
    public var httpsOnlyHeaders: [HTTPHeader] = []

    /// Creates an empty builder.
    public init() {}

    /// Registers `response` and returns its shared, immutable handle.
    public mutating func prepare(_ response: Response) -> PreparedResponse {
        var response = response
        response.httpsOnlyHeaders += httpsOnlyHeaders
        let prepared = PreparedResponse(id: responses.count, response: response, domainID: domainID)
        responses.append(prepared)
        return prepared
    }
}
