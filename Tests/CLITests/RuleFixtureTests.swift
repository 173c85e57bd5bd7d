import AASACore
import AASAServer
import AASATestSupport
import Foundation
import Testing

/// Every rule in `Rule.all` has a checked trigger: a fixture that makes the `aasa-server` binary report it, and
/// where one exists, the nearest input that does not.
///
/// Three kinds of fixture, all under `Tests/AASACoreTests/Fixtures/`:
/// - `site-lint/<rule>.fail.json|.pass.json` (one site.json) and `lint/<rule>.fail.json|.pass.json` (one Apple-format
///   file), run by `LintFixtureTests` through `SiteConfigLoader` and `AssociationChecker`;
/// - `import/<rule>.fail.json|.pass.json`: a file given to `aasa-server import --domain shop.example`;
/// - `rules/<rule>/fail/` and `rules/<rule>/pass/`: a working folder (`site-config/`, `certs/`, pages, an
///   assetlinks file) that a ``Scenario`` below runs a command in, after preparing what cannot be committed
///   (keys and certificates, symlinks, files over a cap, modes).
@Suite(.serialized) struct RuleFixtureTests {
    /// The domain every folder fixture configures.
    static let domain = "shop.example"
    static let fixtures = RepositoryPaths.fixtures

    /// How a scenario runs the binary.
    enum Run: Sendable {
        /// A command that ends by itself (`check`, `import`, `certs acme`); ``freePortArgument`` becomes a port
        /// free when it runs.
        case tool([String])
        /// `serve --no-watch` with these arguments, stopped once it is healthy or has exited.
        case serve([String])
    }

    /// Stands for a port free when the scenario runs: `scenarios` is made once, long before each runs, and a port
    /// chosen then may be taken by another test by the time it is used.
    static let freePortArgument = "<free port>"

    /// One rule's trigger: the command, what the test makes in the copied fixture folder first, and whether the
    /// rule has a passing neighbour.
    struct Scenario: Sendable, CustomStringConvertible {
        var rule: String
        var run: Run
        /// Makes what cannot be committed, in the working folder; `true` for the failing variant.
        var prepare: @Sendable (String, Bool) throws -> Void = { _, _ in }
        /// Why there is no passing variant, or `nil` when there is one.
        var noPass: String? = nil
        /// For the failing variant, something else already listens on the HTTPS port.
        var portInUse = false

        var description: String { rule }

        /// What a run of the passing variant prints when it found nothing at all.
        var cleanRun: String {
            switch run {
            case .tool(let arguments) where arguments.first == "import": "site-config/shop.example/site.json: "
            case .tool(let arguments) where arguments.contains("--aasa") || arguments.contains("--assetlinks"):
                "0 errors, 0 warnings in 1 file"
            case .tool: "0 errors, 0 warnings in 1 domain"
            case .serve: "domains=1 failed=0"
            }
        }
    }

    /// Rules no input can trigger, with why: the coverage test accepts exactly these without a fixture.
    static let unreachable: [String: String] = [
        "assetlinks-structure":
            "import decides a file is assetlinks.json only when it starts with `[` (an array) or is an object with "
            + "`relation`/`target`, and stops at invalid JSON, so the importer never sees another root value"
    ]

    static let check = Run.tool(["check", "--no-certificates"])
    static let checkCertificates = Run.tool(["check"])
    static let serve = Run.serve([])

    static let scenarios: [Scenario] = [
        // The config folder and each domain's site.json, as the loader reads them.
        Scenario(
            rule: "config-folder", run: check,
            prepare: { dir, failing in
                if failing { #expect(!FileManager.default.fileExists(atPath: dir + "/site-config")) }
            }
        ),
        Scenario(rule: "domain-name", run: check),
        Scenario(rule: "missing-file", run: check),
        Scenario(
            rule: "file-too-large", run: check,
            prepare: { dir, failing in
                // A valid site.json one byte over the 1 MiB cap (spaces before the closing brace).
                let cap = 1 << 20
                let head = #"{"webCredentials": ["ABCDE12345.com.example.app"]"#
                let size = failing ? cap + 1 : cap
                try write(
                    dir, "site-config/shop.example/site.json",
                    head + String(repeating: " ", count: size - head.utf8.count - 1) + "}")
            }),
        Scenario(
            rule: "file-unreadable", run: check,
            prepare: { dir, failing in
                // A symlink to itself: opening it fails (ELOOP), which no mode bit does for root.
                if failing { try replaceWithSymlink(dir + "/site-config/shop.example/site.json", to: "site.json") }
            }),
        Scenario(
            rule: "path-outside", run: check,
            prepare: { dir, failing in
                if failing {
                    try replaceWithSymlink(dir + "/site-config/shop.example/site.json", to: "../../outside.json")
                }
            }),
        Scenario(rule: "file-type", run: check),
        // Pages, touch icons and the landing page.
        Scenario(
            rule: "private-key-in-page", run: check,
            prepare: { dir, failing in
                // The armour is made here so that no file of the repository carries it.
                if failing {
                    try write(
                        dir, "site-config/shop.example/pages/notes.txt",
                        "-----BEGIN " + "PRIVATE KEY-----\nbm90IGEga2V5\n-----END " + "PRIVATE KEY-----\n")
                }
            }),
        Scenario(rule: "page-name", run: check),
        Scenario(
            rule: "page-symlink", run: check,
            prepare: { dir, failing in
                let link = dir + "/site-config/shop.example/pages/hosts"
                try FileManager.default.createDirectory(
                    atPath: dir + "/site-config/shop.example/pages", withIntermediateDirectories: true)
                if failing {
                    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "/etc/hosts")
                } else {
                    try write(dir, "site-config/shop.example/pages/hosts", "127.0.0.1 localhost\n")
                }
            }),
        Scenario(
            rule: "page-too-large", run: check,
            prepare: { dir, failing in
                // Sparse files: the size is what counts, not the disk.
                try sparseFile(dir + "/site-config/shop.example/pages/big.bin", size: 16 << 20 + (failing ? 1 : 0))
            }),
        Scenario(
            rule: "pages-too-large", run: check,
            prepare: { dir, failing in
                for index in 0..<(failing ? 5 : 4) {
                    try sparseFile(dir + "/site-config/shop.example/pages/part\(index).bin", size: 15 << 20)
                }
            }),
        Scenario(
            rule: "pages-memory", run: .serve(["--pages-memory", "1"]),
            prepare: { dir, failing in
                try devCertificates(dir)
                try sparseFile(dir + "/site-config/shop.example/pages/video.bin", size: failing ? 2 << 20 : 64 << 10)
            }),
        Scenario(rule: "touch-icon-missing", run: check),
        Scenario(rule: "touch-icon-format", run: check),
        Scenario(rule: "touch-icon-square", run: check),
        Scenario(rule: "touch-icon-size", run: check),
        Scenario(rule: "touch-icon-180", run: check),
        Scenario(rule: "landing-template", run: check),
        Scenario(rule: "android-wildcard-differs", run: check),
        // Signing identities named by site.json; made here, as a user's openssl would.
        Scenario(
            rule: "signing-key-mismatch", run: check,
            prepare: { dir, failing in
                let folder = try signingFolder(dir)
                try selfSigned(folder, name: domain)
                if failing { try newKey(folder + "/key.pem") }
            }),
        Scenario(
            rule: "signing-expired", run: check,
            prepare: { dir, failing in
                let folder = try signingFolder(dir)
                if failing { try expired(folder, name: domain) } else { try selfSigned(folder, name: domain) }
            }),
        Scenario(
            rule: "signing-name", run: check,
            prepare: { dir, failing in try selfSigned(try signingFolder(dir), name: failing ? "other.example" : domain)
            }),
        Scenario(
            rule: "signing-chain", run: check,
            prepare: { dir, failing in try issuedByCA(try signingFolder(dir), name: domain) }),
        Scenario(
            rule: "signing-key-size", run: check,
            prepare: { dir, failing in
                try selfSigned(try signingFolder(dir), name: domain, key: failing ? "rsa:1024" : "rsa:2048")
            }),
        Scenario(
            rule: "signing-failed", run: check,
            prepare: { dir, failing in try issuedByCA(try signingFolder(dir), name: domain, keyAgreement: failing) }),
        // The certificate folder, as `check` reads it.
        Scenario(
            rule: "certificate-missing", run: checkCertificates,
            prepare: { dir, failing in
                try selfSigned(
                    try certificateFolder(dir, failing ? "other.example" : domain),
                    name: failing ? "other.example" : domain, names: ("fullchain.pem", "privkey.pem"))
            }),
        Scenario(
            rule: "certificate-name", run: checkCertificates,
            prepare: { dir, failing in
                try selfSigned(
                    try certificateFolder(dir, domain), name: failing ? "other.example" : domain,
                    names: ("fullchain.pem", "privkey.pem"))
            }),
        Scenario(
            rule: "certificate-expired", run: checkCertificates,
            prepare: { dir, failing in
                let folder = try certificateFolder(dir, domain)
                if failing {
                    try expired(folder, name: domain, names: ("fullchain.pem", "privkey.pem"))
                } else {
                    try selfSigned(folder, name: domain, names: ("fullchain.pem", "privkey.pem"))
                }
            }),
        Scenario(
            rule: "certificate-expiring", run: checkCertificates,
            prepare: { dir, failing in
                try selfSigned(
                    try certificateFolder(dir, domain), name: domain, days: failing ? 5 : 90,
                    names: ("fullchain.pem", "privkey.pem"))
            }),
        Scenario(
            rule: "certificate-key-mismatch", run: checkCertificates,
            prepare: { dir, failing in
                let folder = try certificateFolder(dir, domain)
                try selfSigned(folder, name: domain, names: ("fullchain.pem", "privkey.pem"))
                if failing { try newKey(folder + "/privkey.pem") }
            }),
        Scenario(
            rule: "certificate-invalid", run: checkCertificates,
            prepare: { dir, failing in
                let folder = try certificateFolder(dir, domain)
                // The failing fixture's fullchain.pem is committed: armour around bytes that are no certificate.
                let chain = try? String(contentsOfFile: folder + "/fullchain.pem", encoding: .utf8)
                try selfSigned(folder, name: domain, names: ("fullchain.pem", "privkey.pem"))
                if failing, let chain { try write(folder, "fullchain.pem", chain) }
            }),
        Scenario(
            rule: "private-key-permissions", run: checkCertificates,
            prepare: { dir, failing in
                let folder = try certificateFolder(dir, domain)
                try selfSigned(folder, name: domain, names: ("fullchain.pem", "privkey.pem"))
                #expect(chmod(folder + "/privkey.pem", failing ? 0o644 : 0o600) == 0)
            }),
        Scenario(
            rule: "ocsp-staple", run: checkCertificates,
            prepare: { dir, _ in
                try selfSigned(
                    try certificateFolder(dir, domain), name: domain, names: ("fullchain.pem", "privkey.pem"))
            }),
        // What only `serve` reports.
        Scenario(
            rule: "no-certificates", run: serve,
            prepare: { dir, failing in
                if failing {
                    try FileManager.default.createDirectory(atPath: dir + "/certs", withIntermediateDirectories: true)
                } else {
                    try devCertificates(dir)
                }
            }),
        Scenario(rule: "no-domain-served", run: serve, prepare: { dir, _ in try devCertificates(dir) }),
        Scenario(rule: "listener", run: serve, prepare: { dir, _ in try devCertificates(dir) }, portInUse: true),
        // A replica stopped while it waits for a store that does not answer (nothing listens on port 1).
        Scenario(
            rule: "store-unreachable", run: .serve(["--store", "postgresql://postgres@127.0.0.1:1/aasa"]),
            noPass: "a run that reaches a store needs a database: StoreFleetTests runs replicas on one"),
        // A replica started from its snapshot with the store down (nothing listens on port 1), the domain's record
        // dated NaN.
        Scenario(
            rule: "stored-value",
            run: .serve(["--store", "postgresql://postgres@127.0.0.1:1/aasa", "--store-cache", "cache"]),
            prepare: { dir, failing in
                try write(dir, "cache/state", "5\n")
                let site = Array(#"{"webCredentials": ["ABCDE12345.com.example.app"]}"#.utf8)
                var record = Array("AASASNP1".utf8)
                for value in [UInt64(5), (failing ? Double.nan : 1_767_225_600).bitPattern] {
                    record += (0..<8).map { UInt8(truncatingIfNeeded: value >> UInt64(56 - 8 * $0)) }
                }
                for value in [1, 9] { record += (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * $0)) } }
                record += Array("site.json".utf8)
                record += (0..<4).map { UInt8(truncatingIfNeeded: site.count >> (24 - 8 * $0)) } + site
                try FileManager.default.createDirectory(
                    atPath: dir + "/cache", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                let pack = SnapshotFrame.fileMagic + SnapshotFrame(put: domain, record: record).bytes
                try Data(pack).write(to: URL(fileURLWithPath: dir + "/cache/domains.pack"))
            },
            noPass: "a replica that serves its snapshot needs its certificates sealed under a store key: "
                + "StoredValueTests runs one"),
        Scenario(
            rule: "acme-setup",
            run: .tool([
                "certs", "acme", "--domain", domain, "--standalone", "--http-port", freePortArgument,
                "--acme-directory", "https://127.0.0.1:1/directory", "--acme-email", "ops@shop.example",
                "--acme-ca-file", "missing-ca.pem",
            ]),
            noPass: "a CA file that can be read leads to an order, which needs a reachable ACME server"),
        Scenario(
            rule: "acme-dns-delegation",
            run: .tool([
                "check", "--no-certificates", "--acme-dns-names", "*", "--acme-dns-server", "127.0.0.1:1",
                "--acme-dns-resolver", "127.0.0.1:1",
            ]),
            noPass: "a delegation that is in place is a note, which needs a DNS that answers: ACMEDNSTests runs BIND"),
        Scenario(
            rule: "acme-order",
            run: .tool([
                "certs", "acme", "--domain", domain, "--standalone", "--http-port", freePortArgument,
                "--acme-directory", "https://127.0.0.1:1/directory", "--acme-email", "ops@shop.example",
            ]),
            noPass: "an order that succeeds needs an ACME server (ACMELiveTests runs one with Pebble)"),
        // Tools given one file.
        Scenario(rule: "existing-config", run: .tool(["import", "aasa.json", "--domain", domain])),
        Scenario(rule: "write-failed", run: .tool(["import", "aasa.json", "--domain", domain])),
        Scenario(rule: "endpoints-import", run: .tool(["import", "passkey-endpoints.json", "--domain", domain])),
        Scenario(
            rule: "endpoints-fetch",
            run: .tool(["import", "aasa.json", "--domain", domain, "--site", "https://127.0.0.1:1"]),
            noPass: "a site that answers is ImportEndpointsTests' real server"),
        Scenario(rule: "signed-file", run: .tool(["check", "--aasa", "aasa"])),
        Scenario(rule: "android-dynamic-rules", run: .tool(["check", "--assetlinks", "assetlinks.json"])),
    ]

    /// The rules `import/` fixtures cover.
    static let importRules = Set(
        RepositoryPaths.files(in: fixtures + "/import", endingWith: ".fail.json").map {
            String($0.dropLast(".fail.json".count))
        })

    /// Every rule id with a trigger: the file fixtures of `lint/`, `site-lint/` and `import/`, and the scenarios.
    static var covered: Set<String> {
        var ids = importRules.union(scenarios.map(\.rule))
        for folder in ["lint", "site-lint"] {
            for name in RepositoryPaths.files(in: fixtures + "/" + folder, endingWith: ".fail.json") {
                ids.insert(String(name.dropLast(".fail.json".count)))
            }
        }
        return ids
    }

    @Test func everyRuleHasATrigger() {
        let all = Set(Rule.all.map(\.id))
        let missing = all.subtracting(Self.covered).subtracting(Self.unreachable.keys).sorted()
        #expect(missing.isEmpty, "rules without a fixture: \(missing.joined(separator: ", "))")
        // A fixture or an exception for an id that is no rule is a typo or a removed rule.
        #expect(Self.covered.union(Self.unreachable.keys).subtracting(all).sorted() == [])
        #expect(Self.covered.intersection(Self.unreachable.keys).sorted() == [])
        // Each folder of rules/ belongs to a scenario, so none is left unrun.
        let folders = (try? FileManager.default.contentsOfDirectory(atPath: Self.fixtures + "/rules")) ?? []
        #expect(Set(folders).subtracting(Self.scenarios.map(\.rule)).sorted() == [])
    }

    @Test(arguments: scenarios)
    func theFailingFixtureReportsItsRule(scenario: Scenario) throws {
        let output = try Self.run(scenario, failing: true)
        #expect(output.contains("[\(scenario.rule)]"), "\(output)")
    }

    @Test(arguments: scenarios.filter { $0.noPass == nil })
    func thePassingFixtureDoesNot(scenario: Scenario) throws {
        let output = try Self.run(scenario, failing: false)
        #expect(!output.contains("[\(scenario.rule)]"), "\(output)")
        // And ran to the end with no other finding, so the rule's absence is not a stop before its check.
        #expect(output.contains(scenario.cleanRun), "\(output)")
    }

    @Test(arguments: importRules.sorted())
    func importReportsTheRuleOfItsFailingFixtureOnly(rule: String) throws {
        for failing in [true, false] {
            let directory = TemporaryDirectory("aasa-rule")
            let file = Self.fixtures + "/import/\(rule).\(failing ? "fail" : "pass").json"
            let output = try Command.run(
                RepositoryPaths.executable, ["import", file, "--domain", Self.domain], currentDirectory: directory.path)
            #expect(output.stderr.contains("[\(rule)]") == failing, "\(failing) \(output.stdout)\(output.stderr)")
            // The passing file is imported whole, with no finding.
            #expect(failing || (output.status == 0 && output.stderr.isEmpty), "\(output.stderr)")
        }
    }

    /// Copies the scenario's fixture folder to a fresh working folder, prepares it and runs the binary there;
    /// returns everything it printed.
    static func run(_ scenario: Scenario, failing: Bool) throws -> String {
        let directory = TemporaryDirectory("aasa-rule")
        let source = fixtures + "/rules/\(scenario.rule)/\(failing ? "fail" : "pass")"
        if FileManager.default.fileExists(atPath: source) {
            for name in try FileManager.default.contentsOfDirectory(atPath: source) {
                try directory.copy(source + "/" + name, to: name)
            }
        }
        try scenario.prepare(directory.path, failing)
        switch scenario.run {
        case .tool(let arguments):
            let output = try Command.run(
                RepositoryPaths.executable, arguments.map { $0 == freePortArgument ? "\(freePort())" : $0 },
                currentDirectory: directory.path, timeout: 120)
            return output.stdout + output.stderr
        case .serve(let arguments):
            let blocked = scenario.portInUse && failing ? freePort() : nil
            let blocker = blocked.flatMap { boundLoopbackSocket(port: $0) }
            defer { if let blocker { close(blocker) } }
            if let blocker { #expect(listen(blocker, 1) == 0) }
            let log = directory.path + "/serve.log"
            #expect(FileManager.default.createFile(atPath: log, contents: nil))
            let environment = blocked.map {
                ["AASA_SERVER_HTTPS_PORT": "\($0)", "AASA_SERVER_ADMIN_PORT": "\(freePort())"]
            }
            let process = try ServeProcess(
                in: directory.path, arguments: ["--no-watch", "--threads", "1"] + arguments,
                environment: environment ?? [:], errorOutput: try FileHandle(forWritingTo: URL(fileURLWithPath: log)))
            // Up to ten seconds: healthy, or exited with its error.
            for _ in 0..<TestTime.tries(100) where process.process.isRunning {
                if (try? Curl.request("http://127.0.0.1:\(process.admin)/healthz"))?.status == 200 { break }
                usleep(100_000)
            }
            _ = process.terminate()
            return try String(contentsOfFile: log, encoding: .utf8)
        }
    }

    // MARK: Files the fixtures cannot hold

    static func write(_ directory: String, _ relativePath: String, _ text: String) throws {
        let path = directory + "/" + relativePath
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }

    static func replaceWithSymlink(_ path: String, to destination: String) throws {
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: destination)
    }

    static func sparseFile(_ path: String, size: Int) throws {
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: path, contents: nil))
        #expect(truncate(path, off_t(size)) == 0)
    }

    static func openssl(_ arguments: [String], in directory: String? = nil) throws {
        let output = try Command.run("openssl", arguments, currentDirectory: directory)
        if output.status != 0 {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: output.stderr])
        }
    }

    static func signingFolder(_ directory: String) throws -> String {
        let folder = directory + "/site-config/\(domain)/signing"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    static func certificateFolder(_ directory: String, _ name: String) throws -> String {
        let folder = directory + "/certs/\(name)"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return folder
    }

    /// `certs dev`: the development CA and a certificate for every configured domain.
    static func devCertificates(_ directory: String) throws {
        let output = try Command.run(RepositoryPaths.executable, ["certs", "dev"], currentDirectory: directory)
        #expect(output.status == 0, "\(output.stderr)")
    }

    static func keyArguments(_ key: String) -> [String] {
        key == "ec" ? ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"] : ["-newkey", key]
    }

    /// A self-signed certificate for `name`, valid for `days`, and its key, as `names` in `folder`.
    /// A new P-256 key at `path`, in place of the key a certificate was made with.
    static func newKey(_ path: String) throws {
        try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", path])
    }

    static func selfSigned(
        _ folder: String, name: String, days: Int = 90, key: String = "ec",
        names: (String, String) = ("cert.pem", "key.pem")
    ) throws {
        try openssl(
            [
                "req", "-x509", "-nodes", "-days", "\(days)", "-subj", "/CN=\(name)", "-addext",
                "subjectAltName=DNS:\(name)",
            ]
                + keyArguments(key) + ["-keyout", names.1, "-out", names.0], in: folder)
        #expect(chmod(folder + "/" + names.1, 0o600) == 0)
    }

    /// A self-signed certificate for `name` that expired in 2020 (`openssl ca` sets past dates).
    static func expired(_ folder: String, name: String, names: (String, String) = ("cert.pem", "key.pem")) throws {
        let work = folder + "/.ca"
        try write(work, "index.txt", "")
        try write(work, "serial", "01\n")
        try write(
            work, "ca.cnf",
            """
            [ca]
            default_ca = fixture
            [fixture]
            database = index.txt
            new_certs_dir = .
            serial = serial
            default_md = sha256
            policy = anything
            unique_subject = no
            copy_extensions = copy
            [anything]
            commonName = supplied

            """)
        try openssl(
            ["req", "-new", "-nodes", "-subj", "/CN=\(name)", "-addext", "subjectAltName=DNS:\(name)"]
                + keyArguments("ec") + ["-keyout", "../" + names.1, "-out", "request.csr"], in: work)
        try openssl(
            [
                "ca", "-batch", "-notext", "-config", "ca.cnf", "-selfsign", "-keyfile", "../" + names.1, "-in",
                "request.csr", "-startdate", "20200101000000Z", "-enddate", "20200201000000Z", "-out", "../" + names.0,
            ], in: work)
        try FileManager.default.removeItem(atPath: work)
        #expect(chmod(folder + "/" + names.1, 0o600) == 0)
    }

    /// A leaf for `name` issued by a throwaway CA: `cert.pem`, `key.pem`, and the CA as `chain.pem`. With
    /// `keyAgreement`, the leaf's key is X25519: it matches the certificate and passes every check of the identity,
    /// but cannot sign, so OpenSSL's CMS signing fails.
    static func issuedByCA(_ folder: String, name: String, keyAgreement: Bool = false) throws {
        try openssl(
            ["req", "-x509", "-nodes", "-days", "30", "-subj", "/CN=Fixture CA"] + keyArguments("ec")
                + ["-keyout", "ca-key.pem", "-out", "chain.pem"], in: folder)
        try openssl(
            ["req", "-new", "-nodes", "-subj", "/CN=\(name)"] + keyArguments("ec")
                + ["-keyout", "key.pem", "-out", "leaf.csr"], in: folder)
        var forcedKey: [String] = []
        if keyAgreement {
            try openssl(["genpkey", "-algorithm", "X25519", "-out", "key.pem"], in: folder)
            try openssl(["pkey", "-in", "key.pem", "-pubout", "-out", "leaf-public.pem"], in: folder)
            forcedKey = ["-force_pubkey", "leaf-public.pem"]
        }
        try write(folder, "leaf.ext", "subjectAltName=DNS:\(name)\n")
        try openssl(
            [
                "x509", "-req", "-in", "leaf.csr", "-CA", "chain.pem", "-CAkey", "ca-key.pem", "-CAcreateserial",
                "-days", "30", "-extfile", "leaf.ext", "-out", "cert.pem",
            ] + forcedKey, in: folder)
        for file in ["ca-key.pem", "leaf.csr", "leaf.ext", "chain.srl", "leaf-public.pem"] {
            try? FileManager.default.removeItem(atPath: folder + "/" + file)
        }
        #expect(chmod(folder + "/key.pem", 0o600) == 0)
    }
}
