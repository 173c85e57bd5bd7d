import Foundation

/// `Tests/Tools/acme-front.py` in front of a ``Pebble``, on a free port: what Let's Encrypt offers and pebble 2.4
/// lacks (a new-order rate limit, `meta.profiles`, a pause, failing orders, held requests), with counts of what
/// it forwarded.
///
/// The front serves pebble's own certificate, so `--acme-ca-file pebble.caFile` trusts both, and passes `Host`
/// through, so every URL pebble returns names the front.
public final class ACMEFront: @unchecked Sendable {
    /// The script, found from this file's location.
    public static let script = RepositoryPaths.root + "/Tests/Tools/acme-front.py"

    /// The port the front listens on, on 127.0.0.1.
    public let port = freePort()
    private let pebble: Pebble
    private let logFile: String
    private var process: ChildProcess?

    /// The directory URL, through the front.
    public var directoryURL: String { "https://127.0.0.1:\(port)/dir" }
    /// The CA file that trusts the front (pebble's own certificate).
    public var caFile: String { pebble.caFile }

    /// Starts the front for `pebble` and waits until it answers. `rate` is the new-order token bucket (`count`
    /// orders, refilled continuously over `seconds`); `profiles` (name: description) is listed in the directory.
    public init(pebble: Pebble, rate: (count: Int, seconds: Int)? = nil, profiles: [String: String] = [:]) throws {
        self.pebble = pebble
        logFile = pebble.directory.path + "/acme-front-\(port).log"
        var arguments = [
            Self.script, "--port", "\(port)", "--pebble-port", "\(pebble.port)", "--cert", pebble.caFile, "--key",
            pebble.directory.path + "/key.pem",
        ]
        if let rate { arguments += ["--rate", "\(rate.count)/\(rate.seconds)"] }
        if !profiles.isEmpty {
            arguments += [
                "--profiles",
                profiles.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(
                    separator: ","),
            ]
        }
        _ = FileManager.default.createFile(atPath: logFile, contents: nil)
        let process = try ChildProcess("/usr/bin/python3", arguments, logFile: logFile)
        self.process = process
        for _ in 0..<TestTime.tries(200) {
            if (try? Curl.request("https://127.0.0.1:\(port)/front/stats", caFile: caFile))?.status == 200 { return }
            guard process.isRunning else { break }
            usleep(50_000)
        }
        stop()
        throw Pebble.Failure(description: "the ACME front did not answer on 127.0.0.1:\(port): \(log)")
    }

    deinit { stop() }

    /// Stops the front.
    public func stop() {
        process?.stop()
        process = nil
    }

    /// What the front printed: one line per request.
    public var log: String { (try? String(contentsOfFile: logFile, encoding: .utf8)) ?? "" }

    /// What the front counted.
    public struct Stats: Decodable, Sendable {
        /// New orders forwarded to pebble (one pebble refused for its nonce, sent again, counts once).
        public var newOrders: Int
        /// New orders answered 429 `rateLimited` (the bucket or a pause).
        public var rateLimited: Int
        /// newAccount requests forwarded.
        public var newAccounts: Int
        /// The `profile` member of each forwarded new order (nil when absent).
        public var profiles: [String?]
        /// The `replaces` member of each forwarded new order (nil when absent).
        public var replaces: [String?]
        /// ACME requests received (management requests excluded).
        public var requests: Int
    }

    /// The front's counts.
    public func stats() throws -> Stats {
        let answer = try Curl.request("https://127.0.0.1:\(port)/front/stats", caFile: caFile)
        guard answer.status == 200 else {
            throw Pebble.Failure(description: "the ACME front gave no stats: \(answer.status) \(answer.error)")
        }
        return try JSONDecoder().decode(Stats.self, from: Data(answer.body))
    }

    /// Answers every new order 429 `rateLimited` for `seconds` from now.
    public func pause(seconds: Int) throws { try manage("pause?seconds=\(seconds)") }

    /// Answers every new order 500 `serverInternal` (`on`), or forwards them again.
    public func failOrders(_ on: Bool) throws { try manage("fail-orders?on=\(on ? 1 : 0)") }

    /// Holds requests whose path starts with `pathPrefix` for `seconds` before forwarding them (0: no longer).
    public func delay(pathPrefix: String, seconds: Int) throws {
        let path = pathPrefix.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? pathPrefix
        try manage("delay?path=\(path)&seconds=\(seconds)")
    }

    private func manage(_ route: String) throws {
        let answer = try Curl.request("https://127.0.0.1:\(port)/front/\(route)", method: "POST", caFile: caFile)
        guard answer.status == 200 else {
            throw Pebble.Failure(description: "the ACME front refused \(route): \(answer.status) \(answer.text)")
        }
    }
}
