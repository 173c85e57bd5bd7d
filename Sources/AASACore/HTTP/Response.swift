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
/// built when a route table holding it is swapped in (or on first use), and kept for as long as the response
/// lives, across reloads that keep its domain unchanged.
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
    /// The transport's native forms for plain HTTP and TLS: retained object pointers, 0 until built.
    private let plainForm = Atomic<UInt>(0)
    private let secureForm = Atomic<UInt>(0)

    /// Creates a prepared response (``PreparedResponseBuilder`` prepares a table's).
    public init(_ response: Response, domainID: Int = 0, isCommon: Bool = false) {
        self.response = response
        self.domainID = domainID
        self.isCommon = isCommon
        status = response.status
        bodyByteCount = response.bodyByteCount
    }

    deinit {
        for bits in [plainForm.load(ordering: .acquiring), secureForm.load(ordering: .acquiring)] where bits != 0 {
            Unmanaged<AnyObject>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).release()
        }
    }

    /// The transport's native form for plain HTTP or TLS (`secure`), if one is kept.
    @inline(__always)
    public func transportForm<Form: AnyObject & Sendable>(secure: Bool, as _: Form.Type) -> Form? {
        let bits = secure ? secureForm.load(ordering: .acquiring) : plainForm.load(ordering: .acquiring)
        guard bits != 0 else { return nil }
        return Unmanaged<Form>.fromOpaque(UnsafeRawPointer(bitPattern: bits)!).takeUnretainedValue()
    }

    /// The native form kept for `secure`, or `make()`'s, kept from now on. `make` runs without any lock; when two
    /// threads race, both forms are equivalent and the first one stored stays.
    public func transportForm<Form: AnyObject & Sendable>(secure: Bool, make: () throws -> Form) rethrows -> Form {
        if let kept = transportForm(secure: secure, as: Form.self) { return kept }
        let made = Unmanaged.passRetained(try make())
        let bits = UInt(bitPattern: made.toOpaque())
        let (stored, first) =
            secure
            ? secureForm.compareExchange(expected: 0, desired: bits, ordering: .acquiringAndReleasing)
            : plainForm.compareExchange(expected: 0, desired: bits, ordering: .acquiringAndReleasing)
        if stored { return made.takeUnretainedValue() }
        made.release()
        return Unmanaged<Form>.fromOpaque(UnsafeRawPointer(bitPattern: first)!).takeUnretainedValue()
    }
}

/// Collects the responses a route table prepares, so the transport can build their native forms when the
/// table is swapped in (``RouteTable/preparedResponses``).
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
