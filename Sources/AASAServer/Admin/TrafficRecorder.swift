public import AASACore
public import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Counts and records what clients fetch, for `/metrics`, `/fetches`, the access log and the `--dev`
/// fetch printout. It observes every request on the public listeners (``RequestObserver``).
///
/// Counter labels are bounded: a host that is not a published domain counts as `unknown`, and paths fall
/// into a fixed set of resources, so a scanner cannot blow up the metrics.
public final class TrafficRecorder: RequestObserver {
    /// Who fetched: Apple's CDN, a device directly, Google's verifier, a browser, or something else.
    public enum ClientClass: String, Sendable, CaseIterable {
        case appleCDN = "apple-cdn"
        case device
        case google
        case browser
        case other

        /// Classifies a `User-Agent` value (spec §3.7: `AASA-Bot/1.0.0` is Apple's CDN; devices fetching
        /// directly in developer/managed mode send `swcd` / `CFNetwork … Darwin`).
        static func of(_ userAgent: UnsafeRawBufferPointer?) -> ClientClass {
            guard let userAgent, !userAgent.isEmpty else { return .other }
            if userAgent.starts(with: "AASA-Bot".utf8) { return .appleCDN }
            if contains(userAgent, "swcd") || contains(userAgent, "CFNetwork") { return .device }
            if contains(userAgent, "Google") || contains(userAgent, "google") { return .google }
            if userAgent.starts(with: "Mozilla/".utf8) { return .browser }
            return .other
        }

        private static func contains(_ haystack: UnsafeRawBufferPointer, _ needle: StaticString) -> Bool {
            needle.withUTF8Buffer { needle in
                guard haystack.count >= needle.count else { return false }
                for start in 0...(haystack.count - needle.count)
                where haystack[start] == needle[0] && haystack[start..<start + needle.count].elementsEqual(needle) {
                    return true
                }
                return false
            }
        }
    }

    /// The resource a request was for.
    public enum Resource: String, Sendable, CaseIterable {
        case wellKnownAssociation = "/.well-known/apple-app-site-association"
        case rootAssociation = "/apple-app-site-association"
        case assetLinks = "/.well-known/assetlinks.json"
        case other

        static func of(_ path: UnsafeRawBufferPointer) -> Resource {
            for (resource, bytes) in byteForms
            where bytes.count == path.count
                && bytes.withUnsafeBytes({ memcmp($0.baseAddress!, path.baseAddress!, path.count) == 0 })
            {
                return resource
            }
            return .other
        }

        /// The paths as bytes, compared with memcmp on every request.
        private static let byteForms: [(Resource, [UInt8])] = [wellKnownAssociation, rootAssociation, assetLinks].map {
            ($0, Array($0.rawValue.utf8))
        }

        /// Whether this is an association file, whose fetches are logged one by one.
        var isAssociationFile: Bool { self != .other }
    }

    /// One fetch of an association file.
    public struct Fetch: Sendable {
        /// When it was answered.
        public var time: Date
        /// The domain (host) asked for, or `unknown`.
        public var domain: String
        /// The path.
        public var resource: Resource
        /// Who fetched it.
        public var client: ClientClass
        /// The `User-Agent` as sent (at most 256 characters).
        public var userAgent: String
        /// The client's address.
        public var remoteAddress: String
        /// The response status.
        public var status: Int
        /// Body bytes sent.
        public var bytes: Int
    }

    struct CounterKey: Hashable {
        var domain: String
        var resource: Resource
        var status: Int
        var client: ClientClass
    }

    /// How many fetches `/fetches` can return.
    public static let fetchLogCapacity = 1000

    /// The numbers route tables stamp on their responses (``PreparedResponse/domainID``); counters key on
    /// them, and names are looked up only when `/metrics` is rendered.
    public let domainIDs = DomainIDs()

    /// Request counts by ``packed(domainID:resource:status:client:)`` (an `Int` key hashes without reading
    /// the domain's name), and the last hour's counts per minute and client class: one lock for both, taken
    /// once per request.
    private let counters = Mutex<(byKey: [Int: Int], minutes: MinuteCounts)>(([:], MinuteCounts()))
    private let domains = Mutex(PersistentDictionary<String, PublishedDomain>())
    /// A fetch as logged: its domain by number, named when the log is read (naming it on every request
    /// would touch one more object per domain).
    private struct LoggedFetch {
        var fetch: Fetch
        var domainID: Int
    }

    private let fetches = Mutex<(ring: [LoggedFetch], next: Int)>(([], 0))
    private let accessLog: AccessLog?
    private let onFetch: (@Sendable (Fetch) -> Void)?

    /// Creates a recorder; `accessLog` writes one line per request, `onFetch` hears about each
    /// association-file fetch (used by `serve --dev` to print them).
    public init(accessLog: AccessLog? = nil, onFetch: (@Sendable (Fetch) -> Void)? = nil) {
        self.accessLog = accessLog
        self.onFetch = onFetch
    }

    /// The domains counted under their own name (any other host counts as `unknown`): the published ones a server
    /// keeps, shared without a copy.
    public func setDomains(_ published: PersistentDictionary<String, PublishedDomain>) {
        domains.withLock { $0 = published }
    }

    /// Counts the request; association fetches also go to the fetch log.
    public func requestAnswered(_ request: some HTTPRequest, status: Int, bodyBytes: Int, prepared: PreparedResponse?) {
        let resource = request.withPath(Resource.of)
        let client = request.withHeader("User-Agent", ClientClass.of)
        // A prepared response already knows its domain (the router looked the host up): only responses built
        // per request, and the access log, need the Host parsed again here. The counters and the fetch log
        // keep the domain's number; its name is looked up when they are read.
        let domainID: Int
        var host: String?
        if let prepared, prepared.domainID != PreparedResponse.domainFromHost {
            domainID = prepared.domainID
        } else {
            host = Self.host(of: request)
            let known = host.flatMap { host in domains.withLock { $0[host] != nil } ? host : nil }
            domainID = known.flatMap(domainIDs.existingID) ?? 0
        }
        let key = Self.packed(domainID: domainID, resource: resource, status: status, client: client)
        let minute = Self.currentMinute()
        counters.withLock {
            $0.byKey[key, default: 0] += 1
            $0.minutes.count(client, minute: minute)
        }
        if let accessLog {
            accessLog.write(
                request, host: host ?? Self.host(of: request) ?? "-", status: status, bytes: bodyBytes, client: client)
        }
        guard resource.isAssociationFile else { return }
        let userAgent =
            request.withHeader("User-Agent") { $0.map { String(decoding: $0.prefix(256), as: UTF8.self) } } ?? ""
        var fetch = Fetch(
            time: Date(), domain: "", resource: resource, client: client, userAgent: userAgent,
            remoteAddress: request.remoteAddress, status: status, bytes: bodyBytes)
        let logged = LoggedFetch(fetch: fetch, domainID: domainID)
        fetches.withLock { log in
            if log.ring.count < Self.fetchLogCapacity {
                log.ring.append(logged)
            } else {
                log.ring[log.next] = logged
            }
            log.next = (log.next + 1) % Self.fetchLogCapacity
        }
        if let onFetch {
            fetch.domain = domainIDs.names(of: [domainID])[0] ?? "unknown"
            onFetch(fetch)
        }
    }

    static func host(of request: some HTTPRequest) -> String? {
        request.withHeader("Host") { $0.flatMap(HostName.normalized) }
            ?? request.tlsServerName.flatMap(HostName.normalized)
    }

    /// The recent fetches, newest first, optionally of one domain and one client class.
    public func recentFetches(domain: String? = nil, client: ClientClass? = nil, limit: Int = fetchLogCapacity)
        -> [Fetch]
    {
        let (ring, next) = fetches.withLock { ($0.ring, $0.next) }
        let ordered =
            ring.count < Self.fetchLogCapacity
            ? ring.reversed() : Array(ring[..<next].reversed() + ring[next...].reversed())
        let names = domainIDs.names(of: ordered.map(\.domainID))
        let named = zip(ordered, names).lazy.map { logged, name in
            var fetch = logged.fetch
            fetch.domain = name ?? "unknown"
            return fetch
        }
        return Array(
            named.filter { (domain == nil || $0.domain == domain) && (client == nil || $0.client == client) }
                .prefix(limit))
    }

    /// Every request counter: domain, path, status, client class → count.
    func counts() -> [(CounterKey, Int)] {
        let packed = counters.withLock { Array($0.byKey) }
        let names = domainIDs.names(of: packed.map { $0.key >> 24 })
        return zip(packed, names).map { counter, name in
            let key = counter.key
            return (
                CounterKey(
                    domain: name ?? "unknown", resource: Self.resources[(key >> 4) & 0xF],
                    status: (key >> 8) & 0xFFFF, client: Self.clients[key & 0xF]),
                counter.value
            )
        }
    }

    /// Requests per client class in each minute of the last hour, oldest first, ending with the current minute
    /// (still counting): what the dashboard's traffic chart draws (`GET /traffic`).
    public func lastHour() -> [(start: Date, counts: [ClientClass: Int])] {
        let now = Self.currentMinute()
        let minutes = counters.withLock { $0.minutes }
        return ((now - MinuteCounts.capacity + 1)...now).map { minute in
            let counts = minutes.counts(minute: minute)
            return (
                Date(timeIntervalSince1970: Double(minute * 60)),
                Dictionary(uniqueKeysWithValues: zip(Self.clients, counts))
            )
        }
    }

    /// Minutes since the epoch from the coarse real-time clock: read on every request, so the cheapest clock.
    static func currentMinute() -> Int {
        var time = timespec()
        #if os(Linux)
            clock_gettime(CLOCK_REALTIME_COARSE, &time)
        #else
            clock_gettime(CLOCK_REALTIME, &time)
        #endif
        return time.tv_sec / 60
    }

    /// One counter's key in an `Int`: domain number, status (three digits, or whatever a transport reported,
    /// kept to 16 bits), resource and client class.
    static func packed(domainID: Int, resource: Resource, status: Int, client: ClientClass) -> Int {
        let resourceIndex = resources.firstIndex(of: resource)!
        let clientIndex = client.index
        return domainID << 24 | (status & 0xFFFF) << 8 | resourceIndex << 4 | clientIndex
    }

    /// The cases in the order ``packed(domainID:resource:status:client:)`` numbers them, made once (`allCases`
    /// builds a new array at every use, and this runs for every request).
    private static let resources = Resource.allCases
    private static let clients = ClientClass.allCases
}

/// Counts per client class for each of the last 60 minutes, in a ring indexed by minute.
struct MinuteCounts {
    static let capacity = 60
    /// The minute each slot counts (minutes since the epoch); a slot of an older minute is stale.
    private var minutes = [Int](repeating: -1, count: capacity)
    /// ``TrafficRecorder/ClientClass/allCases``' counts of each slot, one after the other.
    private var counts = [Int](repeating: 0, count: capacity * TrafficRecorder.ClientClass.allCases.count)

    private static let classes = TrafficRecorder.ClientClass.allCases.count

    /// Counts one request of `client` in `minute`, reusing the slot of the minute an hour before.
    mutating func count(_ client: TrafficRecorder.ClientClass, minute: Int) {
        let slot = minute % Self.capacity
        if minutes[slot] != minute {
            minutes[slot] = minute
            for index in slot * Self.classes..<(slot + 1) * Self.classes { counts[index] = 0 }
        }
        counts[slot * Self.classes + client.index] += 1
    }

    /// The counts of `minute` in ``TrafficRecorder/ClientClass/allCases`` order; zeros for a minute not kept.
    func counts(minute: Int) -> ArraySlice<Int> {
        let slot = minute % Self.capacity
        guard minutes[slot] == minute else { return ArraySlice(repeating: 0, count: Self.classes) }
        return counts[slot * Self.classes..<(slot + 1) * Self.classes]
    }
}

extension TrafficRecorder.ClientClass {
    /// The class's position in `allCases`, without building the array per request.
    var index: Int {
        switch self {
        case .appleCDN: 0
        case .device: 1
        case .google: 2
        case .browser: 3
        case .other: 4
        }
    }
}

extension TrafficRecorder.Fetch {
    /// The fetch as a JSON object for `/fetches`.
    var jsonValue: JSONValue {
        .members([
            ("time", .string(time.formatted(.iso8601))), ("domain", .string(domain)),
            ("path", .string(resource.rawValue)),
            ("client", .string(client.rawValue)), ("userAgent", .string(userAgent)),
            ("remoteAddress", .string(remoteAddress)),
            ("status", .number(Double(status))), ("bytes", .number(Double(bytes))),
        ])
    }

    /// One line for a developer: "10:02:13 shop.example /.well-known/apple-app-site-association ← device (…) → 200",
    /// with control characters from the request escaped (``LogEscaping``) so they cannot act on the terminal.
    public var line: String {
        let clock = time.formatted(.dateTime.hour(.twoDigits(amPM: .omitted)).minute(.twoDigits).second(.twoDigits))
        let who: String
        switch client {
        case .appleCDN: who = "Apple's CDN"
        case .device: who = "a device (developer mode)"
        case .google: who = "Google's verifier"
        case .browser: who = "a browser"
        case .other: who = "a client"
        }
        return
            "\(clock) \(who) fetched \(LogEscaping.escape(domain))\(resource.rawValue) from \(LogEscaping.escape(remoteAddress)) → \(status) (\(bytes) bytes) [\(LogEscaping.escape(userAgent))]"
    }
}
