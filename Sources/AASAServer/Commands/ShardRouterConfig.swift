import AASACore

/// `aasa-server shards nginx`: the nginx `stream` configuration of a TLS-passthrough router in front of sharded
/// servers (`serve --shard I/N`). It reads the server name of each connection's ClientHello (`ssl_preread`) and
/// passes the connection, still encrypted, to the upstream of the shard serving that name.
///
/// Configured names are listed in a `map`; any other name (a domain added after the file was generated) goes to
/// a `split_clients` with the same parts ``Shard/index(of:count:)`` uses, so nginx picks the same shard the
/// servers do. Only names made of `a-z`, `0-9`, `.` and `-`, in non-empty labels, are written: nothing read
/// from the config folder or the store can add a directive.
///
/// A shard served by several replicas has them all in its `upstream`, and the router fails a new connection over
/// to the next replica when one refuses it or does not connect in ``connectTimeout`` (``failoverDirectives``).
public struct ShardRouterConfig: Sendable {
    /// The configured domain names (the config folder's domain folders).
    public var domains: [String]
    /// How many shards, 1...``Shard/maximumCount``.
    public var count: Int
    /// Each shard's replicas' addresses for its `upstream` block, in shard order: `count` lists of one or more.
    public var upstreams: [[String]]
    /// The router's nginx `listen` value: a port (`8443`) or an address and port (`127.0.0.1:8443`).
    public var listen: String
    /// The command that generated the file, quoted in its first comment line.
    public var commandLine: String

    /// Words a `map` block reads as its own parameters: a host name equal to one is written with a `\` before it.
    static let mapKeywords: Set<String> = ["default", "hostnames", "include", "volatile"]

    /// How long nginx waits for a replica to accept a connection before it passes the connection to the next one.
    /// A refused connection (a replica that is gone from a live host) fails over at once; this bounds the wait for
    /// a host that is gone and answers nothing. Routers and shards share a network, where a connect takes
    /// milliseconds.
    public static let connectTimeout = "1s"

    /// How long nginx passes no new connection to a replica after one failed to connect (`fail_timeout`, with
    /// `max_fails=1`): one connection in this long pays for a dead replica's ``connectTimeout``, not every one.
    public static let failTimeout = "5s"

    /// Creates the configuration of shards served by one or more replicas each.
    public init(domains: [String], count: Int, upstreams: [[String]], listen: String, commandLine: String) {
        self.domains = domains
        self.count = count
        self.upstreams = upstreams
        self.listen = listen
        self.commandLine = commandLine
    }

    /// Creates the configuration of shards served by one address each.
    public init(domains: [String], count: Int, upstreams: [String], listen: String, commandLine: String) {
        self.init(
            domains: domains, count: count, upstreams: upstreams.map { [$0] }, listen: listen,
            commandLine: commandLine)
    }

    /// The most replicas any shard has.
    public var replicas: Int { upstreams.map(\.count).max() ?? 0 }

    /// The `server {}` directives that pass a new connection to a live replica when one is gone; none when every
    /// shard has one address (nginx then has nowhere else to go). `proxy_next_upstream on` passes a connection
    /// that could not be established to the next server of its upstream; `proxy_next_upstream_tries` lets it try
    /// each replica once; `proxy_connect_timeout` decides how long "could not be established" takes for a host
    /// that answers nothing (the default is 60 s).
    public var failoverDirectives: [String] {
        guard replicas > 1 else { return [] }
        return [
            "proxy_connect_timeout \(Self.connectTimeout);", "proxy_next_upstream on;",
            "proxy_next_upstream_tries \(replicas);",
        ]
    }

    /// The names of ``domains`` that ``render()`` leaves out, as given: not `a-z`, `0-9`, `.` and `-` once
    /// lower-cased, or with an empty label (a leading `.` would make a `hostnames` map entry a wildcard).
    public var skippedDomains: [String] { domains.filter { !Self.isSafeName($0.lowercased()) } }

    /// The domains ``render()`` maps, lower-cased, sorted, each once.
    public var mappedDomains: [String] {
        Set(domains.map { $0.lowercased() }.filter { Self.isSafeName($0) }).sorted()
    }

    /// Whether `value` can stand as one word of nginx configuration for an address or a `listen` value: only
    /// letters, digits and `.` `-` `_` `:` `/` `[` `]` (a host and port, an IPv6 literal, `unix:/path`).
    public static func isSafeValue(_ value: String) -> Bool {
        !value.isEmpty
            && value.utf8.allSatisfy { byte in
                isLowerCaseNameByte(byte) || (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z"))
                    || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "/")
                    || byte == UInt8(ascii: "[") || byte == UInt8(ascii: "]")
            }
    }

    /// The nginx configuration: a header comment, then one `stream` block holding the `map`, the
    /// `split_clients`, an `upstream` per shard and the `server` that listens.
    public func render() -> String {
        precondition(upstreams.count == count, "one upstream per shard")
        precondition(!upstreams.contains { $0.isEmpty }, "one or more replicas per shard")
        let names = mappedDomains
        let sizes = Self.mapHashSizes(names)
        // A line break in the command (an argument can hold one) would end the comment.
        let command = String(commandLine.map { $0.isNewline ? " " : $0 })
        let header = """
            # Generated by: \(command)
            # Routes each TLS connection, by the server name its ClientHello sends (ssl_preread), to the aasa-server
            # shard serving that domain (serve --shard I/\(count)). Names missing from the map go to \
            split_clients, which
            # computes the same hash as aasa-server (docs/operations.md, "Sharding"). Include it at the top level of
            # nginx.conf, outside http {}.
            """
        var lines = [header]
        if replicas > 1 {
            lines += [
                "# Each shard's upstream lists its replicas: a connection a replica refuses, or does not accept in "
                    + "\(Self.connectTimeout),",
                "# goes to the next one, and a replica that failed gets no new connection for \(Self.failTimeout).",
            ]
        }
        lines += [
            "stream {",
            "    map_hash_max_size \(sizes.maxSize);",
            "    map_hash_bucket_size \(sizes.bucketSize);",
            "    map $ssl_preread_server_name $aasa_shard {",
            "        hostnames;",
            "        default $aasa_shard_by_hash;",
        ]
        for name in names {
            let key = Self.mapKeywords.contains(name) ? "\\" + name : name
            lines.append("        \(key) aasa_shard_\(Shard.index(of: name, count: count));")
        }
        lines += ["    }", "    split_clients \"$ssl_preread_server_name\" $aasa_shard_by_hash {"]
        for (part, percent) in Shard.percentages(count: count).enumerated() {
            let hundredths = percent % 100
            lines.append("        \(percent / 100).\(hundredths < 10 ? "0" : "")\(hundredths)% aasa_shard_\(part);")
        }
        lines += ["        * aasa_shard_\(count - 1);", "    }"]
        for (index, replicas) in upstreams.enumerated() {
            lines.append("    upstream aasa_shard_\(index) {")
            for address in replicas {
                // One replica has nowhere to fail over to: its line stays as plain as the one-replica router's.
                let parameters = replicas.count > 1 ? " max_fails=1 fail_timeout=\(Self.failTimeout)" : ""
                lines.append("        server \(address)\(parameters);")
            }
            lines.append("    }")
        }
        lines += [
            "    server {",
            "        listen \(listen);",
            "        ssl_preread on;",
            "        proxy_pass $aasa_shard;",
        ]
        lines += failoverDirectives.map { "        " + $0 }
        lines += ["    }", "}"]
        return lines.joined(separator: "\n") + "\n"
    }

    /// `map_hash_max_size` and `map_hash_bucket_size` for `names`. nginx's defaults (2048 buckets of 64 bytes)
    /// refuse to start with a name longer than about 40 bytes ("could not build map_hash") and build a slow map
    /// past 2048 names; these give each bucket room for two entries of the longest name (an entry is a pointer
    /// and the name plus 2 bytes, 8-byte aligned) and at least twice as many buckets as names.
    static func mapHashSizes(_ names: [String]) -> (maxSize: Int, bucketSize: Int) {
        let longest = names.map(\.utf8.count).max() ?? 0
        let entry = 8 + (longest + 2 + 7) / 8 * 8
        let bucketSize = max(64, (8 + 2 * entry + 63) / 64 * 64)
        var maxSize = 2048
        while maxSize < 2 * names.count { maxSize *= 2 }
        return (maxSize, bucketSize)
    }

    /// Whether a lower-cased name is safe as a `map` key: `a-z`, `0-9`, `-` in non-empty labels separated by `.`.
    static func isSafeName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 253
            && name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
                !label.isEmpty && label.utf8.allSatisfy { isLowerCaseNameByte($0) && $0 != UInt8(ascii: ".") }
            }
    }

    /// `a-z`, `0-9`, `.` and `-`.
    private static func isLowerCaseNameByte(_ byte: UInt8) -> Bool {
        (byte >= UInt8(ascii: "a") && byte <= UInt8(ascii: "z"))
            || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "-")
    }
}
