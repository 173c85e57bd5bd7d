import Foundation

/// Debian's BIND 9 as a test DNS (`scripts/setup.sh --test` installs it; `../shared/notes/dns-testing.md`): an
/// authoritative `named` for the given zones on a free loopback port, with a TSIG key that may update them, and a
/// second `named` in front of it as a forwarding resolver, which follows CNAMEs from one zone into another as a CA's
/// resolver does.
///
/// Every zone's SOA names `ns.provider.test.`; TTLs are 2 seconds and negative caching 1 unless told otherwise, so a
/// record just added is seen through the resolver within seconds.
public final class BindDNS: @unchecked Sendable {
    public let directory = TemporaryDirectory("aasa-bind")
    /// The authoritative server's port, and the resolver's.
    public let port = freePort()
    public let resolverPort = freePort()
    /// The key file (BIND's format, from `tsig-keygen`) of the key `acme`, which may change every zone.
    public let keyFile: String
    /// A key the servers do not know, in the same format.
    public let unknownKeyFile: String
    /// A loopback address of this test's own (127.x.y.z) on which the authoritative server also answers on port 53,
    /// where a propagation check asks a zone's name servers: give it as the name server's A record.
    public let nameServerAddress: String

    /// A random loopback address other than 127.0.0.1.
    public static func randomLoopbackAddress() -> String {
        "127.\(UInt8.random(in: 1...254)).\(UInt8.random(in: 1...254)).\(UInt8.random(in: 1...254))"
    }
    private var processes: [ChildProcess] = []

    /// The authoritative server, and the resolver, as `HOST:PORT`.
    public var server: String { "127.0.0.1:\(port)" }
    public var resolver: String { "127.0.0.1:\(resolverPort)" }

    /// Starts both servers; `zones` maps each zone's name to its records beyond the SOA and NS, as zone file lines
    /// (`_acme-challenge.shop IN CNAME shop.provider.test.`). `updatable` lists the zones the key may change (all by
    /// default).
    /// `nameServerAddress` is where the authoritative server also listens on port 53.
    /// `negativeSeconds` is how long the resolver keeps a name it found absent (each zone's SOA minimum, and the
    /// resolver's `max-ncache-ttl`).
    public init(
        zones: [String: [String]], updatable: Set<String>? = nil,
        nameServerAddress: String = BindDNS.randomLoopbackAddress(), negativeSeconds: Int = 1
    ) throws {
        self.nameServerAddress = nameServerAddress
        // named listens only on the addresses of interfaces: give the loopback interface this one (root only).
        if nameServerAddress != "127.0.0.1" {
            _ = try? Command.run("/usr/sbin/ip", ["addr", "add", nameServerAddress + "/32", "dev", "lo"])
        }
        keyFile = directory.path + "/acme.key"
        unknownKeyFile = directory.path + "/other.key"
        for (name, path) in [("acme", keyFile), ("acme", unknownKeyFile)] {
            let key = try Command.run("/usr/sbin/tsig-keygen", ["-a", "hmac-sha256", name])
            guard key.status == 0 else { throw Failure(description: "tsig-keygen failed: \(key.stderr)") }
            try directory.write((path as NSString).lastPathComponent, key.stdout)
        }
        var declarations = ""
        for (zone, records) in zones.sorted(by: { $0.key < $1.key }) {
            let lines =
                [
                    // A negative answer is kept for the smaller of the SOA's TTL and its last field (RFC 2308).
                    "$TTL \(max(2, negativeSeconds))",
                    "@ IN SOA ns.provider.test. admin.provider.test. 1 60 60 600 \(negativeSeconds)",
                    "@ IN NS ns.provider.test.",
                ]
                + records
            try directory.write("zones/\(zone).db", lines.joined(separator: "\n") + "\n")
            let policy =
                (updatable ?? Set(zones.keys)).contains(zone) ? "update-policy { grant acme zonesub ANY; };" : ""
            declarations +=
                "zone \"\(zone)\" { type primary; file \"\(directory.path)/zones/\(zone).db\"; \(policy) };\n"
        }
        let key = try String(contentsOfFile: keyFile, encoding: .utf8)
        try directory.write(
            "named.conf",
            """
            options { directory "\(directory.path)"; listen-on port \(port) { 127.0.0.1; };
                      listen-on port 53 { \(nameServerAddress); }; listen-on-v6 { none; };
                      recursion no; pid-file "\(directory.path)/named.pid"; dnssec-validation no; };
            controls { };
            \(key)
            \(declarations)
            """)
        try directory.write(
            "resolver/named.conf",
            """
            options { directory "\(directory.path)/resolver"; listen-on port \(resolverPort) { 127.0.0.1; };
                      listen-on-v6 { none; }; recursion yes; allow-recursion { any; }; forward only;
                      forwarders { 127.0.0.1 port \(port); }; pid-file "\(directory.path)/resolver/named.pid";
                      dnssec-validation no; max-cache-ttl 2; max-ncache-ttl \(negativeSeconds); };
            controls { };
            """)
        try start(directory.path + "/named.conf", log: "named.log")
        try start(directory.path + "/resolver/named.conf", log: "resolver.log")
        let first = zones.keys.sorted().first ?? "."
        for _ in 0..<TestTime.tries(100) {
            if dig(first, "SOA", resolver: false).count == 1, dig(first, "SOA").count == 1 {
                return
            }
            usleep(100_000)
        }
        throw Failure(description: "named did not answer: \(log)")
    }

    deinit { stop() }

    private func start(_ configuration: String, log: String) throws {
        let path = directory.path + "/" + log
        _ = FileManager.default.createFile(atPath: path, contents: nil)
        processes.append(try ChildProcess("/usr/sbin/named", ["-c", configuration, "-f", "-4"], logFile: path))
    }

    /// Stops both servers, and takes the name server's address off the loopback interface.
    public func stop() {
        for process in processes { process.stop() }
        if !processes.isEmpty, nameServerAddress != "127.0.0.1" {
            _ = try? Command.run("/usr/sbin/ip", ["addr", "del", nameServerAddress + "/32", "dev", "lo"])
        }
        processes = []
    }

    /// What both servers printed.
    public var log: String {
        ["named.log", "resolver.log"].map {
            (try? String(contentsOfFile: directory.path + "/" + $0, encoding: .utf8)) ?? ""
        }.joined(separator: "\n")
    }

    /// `dig +short` for `name`'s records of `type`, through the resolver or at the authoritative server, one line
    /// each (TXT values unquoted).
    public func dig(_ name: String, _ type: String, resolver: Bool = true) -> [String] {
        let output = try? Command.run(
            "/usr/bin/dig",
            ["+short", "+time=2", "+tries=1", "-p", "\(resolver ? resolverPort : port)", "@127.0.0.1", name, type])
        return (output?.stdout ?? "").split(separator: "\n").map {
            $0.hasPrefix("\"") && $0.hasSuffix("\"") ? String($0.dropFirst().dropLast()) : String($0)
        }
    }

    /// Sends `commands` (nsupdate's language, without `server` and `send`) to the authoritative server, signed with
    /// the key.
    public func update(_ commands: String) throws {
        let script = "server 127.0.0.1 \(port)\n\(commands)\nsend\n"
        let result = try Command.run("/usr/bin/nsupdate", ["-k", keyFile], input: Array(script.utf8))
        guard result.status == 0 else { throw Failure(description: "nsupdate failed: \(result.stderr)") }
    }

    /// Whether `named`, `tsig-keygen`, `nsupdate` and `dig` are installed.
    public static var isInstalled: Bool {
        ["/usr/sbin/named", "/usr/sbin/tsig-keygen", "/usr/bin/nsupdate", "/usr/bin/dig"].allSatisfy {
            FileManager.default.isExecutableFile(atPath: $0)
        }
    }

    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }
}
