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
    /// Header fields sent after ``headers`` only over TLS, such as `Strict-Transport-Security`
    /// (RFC 6797 §7.2: never over plain HTTP).
    public var httpsOnlyHeaders: [HTTPHeader]

    /// The body: one array (every response built at load, with no storage beyond the array), or parts.
    private var storage: Body

    /// How the body's bytes are kept.
    private enum Body: Sendable {
        case bytes([UInt8])
        case parts([[UInt8]])
    }

    /// Creates a response.
    public init(status: Int, headers: [HTTPHeader] = [], body: [UInt8] = [], httpsOnlyHeaders: [HTTPHeader] = []) {
        self.status = status
        self.headers = headers
        storage = .bytes(body)
        self.httpsOnlyHeaders = httpsOnlyHeaders
    }

    /// Creates a response whose body is `bodyParts` sent one after the other (empty parts are dropped).
    public init(
        status: Int, headers: [HTTPHeader] = [], bodyParts: [[UInt8]], httpsOnlyHeaders: [HTTPHeader] = []
    ) {
        self.init(status: status, headers: headers, httpsOnlyHeaders: httpsOnlyHeaders)
        let parts = bodyParts.filter { !$0.isEmpty }
        storage = parts.count <= 1 ? .bytes(parts.first ?? []) : .parts(parts)
    }

    /// Body bytes in one array: the body itself, or a copy of its parts joined (for tests and tools; the transport
    /// sends ``bodyParts``). For `HEAD` the transport sends the headers of this body without the body.
    public var body: [UInt8] {
        get {
            switch storage {
            case .bytes(let bytes): bytes
            case .parts(let parts): Array(parts.joined())
            }
        }
        set { storage = .bytes(newValue) }
    }

    /// The body's bytes in parts sent one after the other, none empty.
    ///
    /// A large page spliced per URL is its load-time chunks around the URL's values: its parts share the chunks'
    /// storage with the page itself, so a rendering of any size costs only its per-URL bytes, however many
    /// connections are sending it.
    public var bodyParts: [[UInt8]] {
        switch storage {
        case .bytes(let bytes): bytes.isEmpty ? [] : [bytes]
        case .parts(let parts): parts
        }
    }

    /// The body's length in bytes (its `Content-Length`).
    public var bodyByteCount: Int {
        switch storage {
        case .bytes(let bytes): bytes.count
        case .parts(let parts): parts.reduce(0) { $0 + $1.count }
        }
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
        hasher.combine(bodyByteCount)
        hasher.combine(httpsOnlyHeaders)
    }

    /// Equal status, headers and body bytes, however the bodies are split into parts.
    public static func == (lhs: Response, rhs: Response) -> Bool {
        guard lhs.status == rhs.status, lhs.headers == rhs.headers, lhs.httpsOnlyHeaders == rhs.httpsOnlyHeaders,
            lhs.bodyByteCount == rhs.bodyByteCount
        else { return false }
        if case .bytes(let left) = lhs.storage, case .bytes(let right) = rhs.storage { return left == right }
        return lhs.bodyParts.joined().elementsEqual(rhs.bodyParts.joined())
    }
}

/// A response built once at load time and shared by every request that routes to it.
///
/// A transport keeps its native forms of the response in the response itself (``transportForm(secure:make:)``):
/// built when it is first sent (or, for a response every domain sends alike, when a table holding it is swapped in),
/// and kept until a bounded cache lets it go (``sweepTransportForm(secure:force:)``) or the response ends, across
/// reloads that keep its domain unchanged.
public final class PreparedResponse: Sendable {
    /// What is sent.
    public let response: Response
    /// The number (``DomainIDs``) of the configured domain this response belongs to, 0 for none (an unknown
    /// host): known when the table is built, so metrics label a request without parsing its Host a second
    /// time, and key on an `Int` rather than the name. ``domainFromHost`` for a response many domains share.
    public let domainID: Int
    /// The ``domainID`` of a response every domain sends alike (a 404 or 405 without HTTPS-only headers): the
    /// request's Host names the domain it is counted under. One object serves them all; one per domain would hold
    /// about 22 MB at 100,000 domains.
    public static let domainFromHost = -1
    /// ``Response/status``, kept beside the forms so the hot path reads one object (the response's arrays
    /// live elsewhere, and at thousands of domains every object touched is a cache miss).
    public let status: Int
    /// `response.bodyByteCount`, for the same reason.
    public let bodyByteCount: Int
    /// Whether every domain sends these same bytes (a 404, a 405): a transport may share one native form
    /// between all of them.
    public let isCommon: Bool
    /// Whether TLS sends more headers than plain HTTP (``Response/httpsOnlyHeaders``): without them one native form
    /// serves both, kept as the plain one.
    public let hasHTTPSOnlyHeaders: Bool
    /// The transport's native forms for plain HTTP and TLS, and whether each was sent since a sweep last looked.
    private let forms = Mutex(TransportForms())

    /// ``PreparedResponse``'s native forms.
    private struct TransportForms {
        var plain: (any AnyObject & Sendable)?
        var secure: (any AnyObject & Sendable)?
        var plainUsed = false
        var secureUsed = false
    }

    /// What ``sweepTransportForm(secure:force:)`` did.
    public enum FormSweep: Sendable {
        /// The form was sent since the last sweep: it stays, unmarked.
        case used
        /// No form was kept.
        case absent
        /// The form was let go: the caller releases it (outside any lock of its own, since its release may free it).
        case released(any AnyObject & Sendable)
    }

    /// Creates a prepared response (``PreparedResponseBuilder`` prepares a table's).
    public init(_ response: Response, domainID: Int = 0, isCommon: Bool = false) {
        self.response = response
        self.domainID = domainID
        self.isCommon = isCommon
        status = response.status
        bodyByteCount = response.bodyByteCount
        hasHTTPSOnlyHeaders = !response.httpsOnlyHeaders.isEmpty
    }

    /// The transport's native form for plain HTTP or TLS (`secure`), if one is kept, marked as sent. The caller holds
    /// its own reference: a sweep letting go of the form meanwhile does not free it under the caller.
    @inline(__always)
    public func transportForm<Form: AnyObject & Sendable>(secure: Bool, as _: Form.Type) -> Form? {
        let secure = secure && hasHTTPSOnlyHeaders
        let kept = forms.withLock { forms -> (any AnyObject & Sendable)? in
            if secure {
                forms.secureUsed = forms.secure != nil
                return forms.secure
            }
            forms.plainUsed = forms.plain != nil
            return forms.plain
        }
        return kept as? Form
    }

    /// The native form kept for `secure`, or `make()`'s, kept from now on. `make` runs without any lock; when two
    /// threads race, both forms are equivalent and the first one kept stays.
    public func transportForm<Form: AnyObject & Sendable>(secure: Bool, make: () throws -> Form) rethrows -> Form {
        if let kept = transportForm(secure: secure, as: Form.self) { return kept }
        return keep(try make(), secure: secure).form
    }

    /// Keeps `made` as the native form for `secure` unless another thread kept one first: the form kept, and whether
    /// it is `made` (the caller's to account for, such as in a bounded cache).
    public func keep<Form: AnyObject & Sendable>(_ made: Form, secure: Bool) -> (form: Form, isNew: Bool) {
        let secure = secure && hasHTTPSOnlyHeaders
        let first = forms.withLock { forms -> (any AnyObject & Sendable)? in
            // Kept for a request about to send it: marked as sent.
            if secure {
                if forms.secure == nil { (forms.secure, forms.secureUsed) = (made, true) }
                return forms.secure
            }
            if forms.plain == nil { (forms.plain, forms.plainUsed) = (made, true) }
            return forms.plain
        }
        if first === made { return (made, true) }
        return ((first as? Form) ?? made, false)
    }

    /// A bounded cache's sweep over the form kept for `secure` (CLOCK): one sent since the last sweep stays and is
    /// unmarked; one that was not, or any with `force`, is let go and returned.
    public func sweepTransportForm(secure: Bool, force: Bool = false) -> FormSweep {
        let secure = secure && hasHTTPSOnlyHeaders
        return forms.withLock { forms -> FormSweep in
            let used = secure ? forms.secureUsed : forms.plainUsed
            guard let form = secure ? forms.secure : forms.plain else { return .absent }
            if used && !force {
                if secure { forms.secureUsed = false } else { forms.plainUsed = false }
                return .used
            }
            if secure {
                (forms.secure, forms.secureUsed) = (nil, false)
            } else {
                (forms.plain, forms.plainUsed) = (nil, false)
            }
            return .released(form)
        }
    }
}

/// Collects the responses a route table prepares, so the transport can check them when the table is swapped in
/// (``RouteTable/preparedResponses``).
public struct PreparedResponseBuilder: Sendable {
    /// Every response prepared so far, in order.
    public private(set) var responses: [PreparedResponse] = []
    /// The domain number stamped on responses prepared from now on (``PreparedResponse/domainID``), 0 for none.
    public var domainID = 0
    /// Added to the ``Response/httpsOnlyHeaders`` of responses prepared from now on (the domain's HSTS).
    public var httpsOnlyHeaders: [HTTPHeader] = []

    /// Creates an empty builder.
    public init() {}

    /// Registers `response` and returns its shared, immutable handle; `common` when every domain sends the same
    /// bytes (``PreparedResponse/isCommon``).
    public mutating func prepare(_ response: Response, common: Bool = false) -> PreparedResponse {
        var response = response
        response.httpsOnlyHeaders += httpsOnlyHeaders
        let prepared = PreparedResponse(response, domainID: domainID, isCommon: common)
        responses.append(prepared)
        return prepared
    }
}
