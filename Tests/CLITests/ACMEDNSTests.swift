import AASATestSupport
import Foundation
import Testing

/// dns-01 as an operator runs it: BIND as the provider's DNS (an authoritative server taking TSIG-signed updates,
/// a forwarding resolver in front), a tenant's domain that points nowhere but delegates `_acme-challenge` by CNAME
/// into the provider's zone, and pebble resolving through that resolver as a real CA would.
@Suite(.serialized) struct ACMEDNSTests {
    /// BIND with the provider's zone and a tenant's zone, pebble behind its resolver, and a config folder of tenant
    /// domains.
    final class Setup {
        let directory = TemporaryDirectory("aasa-acme-dns")
        let bind: BindDNS
        let pebble: Pebble

        /// `tenantRecords` are the tenant zone's records (the delegations in place from the start). The provider
        /// zone's name server answers on port 53 at its own loopback address, unless `unreachableNameServer`: then
        /// its address is 127.0.0.1, where nothing answers on port 53.
        init(
            domains: [String], tenantRecords: [String], unreachableNameServer: Bool = false, negativeSeconds: Int = 1
        ) throws {
            try #require(Pebble.isInstalled, "install pebble: scripts/setup.sh --test")
            try #require(BindDNS.isInstalled, "install bind9: scripts/setup.sh --test")
            let address = BindDNS.randomLoopbackAddress()
            bind = try BindDNS(
                zones: [
                    "provider.test": ["ns IN A \(unreachableNameServer ? "127.0.0.1" : address)"],
                    "tenant.test": tenantRecords,
                ], nameServerAddress: address, negativeSeconds: negativeSeconds)
            // Nothing answers http-01: pebble's http port is a port nobody listens on.
            pebble = try Pebble(httpPort: freePort(), dnsServer: bind.resolver)
            for domain in domains {
                try directory.write(
                    "site-config/\(domain)/site.json",
                    #"{"universalLinks": {"apps": [{"appIDs": ["ABCDE12345.com.example.shop"], "rules": [{"path": "/*"}]}]}}"#
                )
            }
        }

        /// The dns-01 options for this BIND, with the provider's zone.
        var dnsOptions: [String] {
            [
                "--acme-dns-server", bind.server, "--acme-dns-tsig-key-file", bind.keyFile, "--acme-dns-zone",
                "provider.test", "--acme-dns-resolver", bind.resolver, "--acme-dns-propagation", "resolver",
            ]
        }

        /// ``dnsOptions`` with the default propagation: through the resolver and at the zone's name servers.
        var dnsOptionsCheckingNameServers: [String] { Array(dnsOptions.dropLast(2)) }

        var common: [String] {
            [
                "--acme-directory", pebble.directoryURL, "--acme-ca-file", pebble.caFile, "--acme-agree-tos",
                "--acme-order-rate", "0", "--config", directory.path + "/site-config", "--certs",
                directory.path + "/certs",
            ]
        }

        func aasa(_ arguments: [String]) throws -> Command.Output {
            try Command.run(RepositoryPaths.executable, arguments, currentDirectory: directory.path, timeout: 180)
        }

        /// `openssl verify` of the domain's issued chain against pebble's root.
        func verify(_ folder: String) throws -> Command.Output {
            let chain = directory.path + "/certs/\(folder)/fullchain.pem"
            return try Command.run(
                "openssl", ["verify", "-CAfile", try pebble.rootFile(), "-untrusted", chain, chain])
        }

        /// Waits until `serve` serves every one of `domains` over HTTPS with a certificate that verifies against
        /// pebble's root; whether it did, and `log`'s text for the failure message.
        func waitUntilServed(_ serve: ServeProcess, _ domains: [String], log: String) throws -> (Bool, String) {
            let root = try pebble.rootFile()
            func served(_ domain: String) -> Bool {
                let answer = try? Curl.request(
                    "https://\(domain):\(serve.port)/.well-known/apple-app-site-association", caFile: root,
                    resolve: (domain, serve.port))
                return answer?.status == 200
            }
            for _ in 0..<TestTime.tries(300) {
                if domains.allSatisfy(served) { return (true, "") }
                usleep(100_000)
            }
            return (false, (try? String(contentsOfFile: directory.path + "/" + log, encoding: .utf8)) ?? "")
        }

        /// The names the issued certificate of `folder` covers.
        func names(_ folder: String) throws -> [String] {
            let text = try Command.run(
                "openssl",
                ["x509", "-noout", "-ext", "subjectAltName", "-in", directory.path + "/certs/\(folder)/fullchain.pem"])
            return text.stdout.components(separatedBy: "DNS:").dropFirst().map {
                $0.trimmingCharacters(in: CharacterSet(charactersIn: ", \n"))
            }.sorted()
        }
    }

    @Test func aDomainPointingNowhereGetsATrustedCertificateThroughItsCNAMEDelegation() throws {
        let setup = try Setup(
            domains: ["shop.tenant.test"],
            tenantRecords: ["_acme-challenge.shop IN CNAME shop.tenant.test.provider.test."])
        // The tenant's name has no address at all: http-01 could never reach it.
        #expect(setup.bind.dig("shop.tenant.test", "A").isEmpty)
        let result = try setup.aasa(["certs", "acme", "--acme-dns-names", "*"] + setup.dnsOptions + setup.common)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)\n\(setup.pebble.log)")
        #expect(result.stdout.contains("shop.tenant.test: certificate valid until 20"), "\(result.stdout)")
        let verified = try setup.verify("shop.tenant.test")
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        #expect(try setup.names("shop.tenant.test") == ["shop.tenant.test"])
        // The challenge record is gone from the provider's zone once the CA has looked.
        #expect(setup.bind.dig("shop.tenant.test.provider.test", "TXT", resolver: false).isEmpty)
        // The record was written by a dynamic update: BIND keeps a journal of the zone's updates.
        #expect(FileManager.default.fileExists(atPath: setup.bind.directory.path + "/zones/provider.test.db.jnl"))
    }

    @Test func aKeyTheDNSServerRefusesIsTheOrdersNamedErrorAndNoSecretIsPrinted() throws {
        let setup = try Setup(
            domains: ["shop.tenant.test"],
            tenantRecords: ["_acme-challenge.shop IN CNAME shop.tenant.test.provider.test."])
        var options = setup.dnsOptions
        options[options.firstIndex(of: setup.bind.keyFile)!] = setup.bind.unknownKeyFile
        let result = try setup.aasa(["certs", "acme", "--acme-dns-names", "*"] + options + setup.common)
        #expect(result.status == 1, "\(result.stdout)\n\(result.stderr)")
        let output = result.stdout + result.stderr
        // Found before any record is written: the server takes no update of the zone signed with that key.
        #expect(
            output.contains(
                "shop.tenant.test: dns-01 cannot be answered: _acme-challenge.shop.tenant.test is written in zone "
                    + "provider.test (CNAME shop.tenant.test.provider.test); but the server cannot update zone "
                    + "provider.test: 127.0.0.1:\(setup.bind.port) did not accept the update of zone provider.test "
                    + "(changing nothing) signed with TSIG key 'acme'"), "\(output)")
        #expect(output.contains("fix: give the key the zone's primary server accepts"), "\(output)")
        #expect(!setup.pebble.log.contains("Added order"), "an order was placed with a key the DNS refuses")
        for keyFile in [setup.bind.keyFile, setup.bind.unknownKeyFile] {
            let secret = try #require(
                try String(contentsOfFile: keyFile, encoding: .utf8).split(separator: "\"").dropFirst(3).first)
            #expect(!output.contains(secret))
        }
        #expect(!FileManager.default.fileExists(atPath: setup.directory.path + "/certs/shop.tenant.test/fullchain.pem"))
    }

    @Test func aHookWritesAndRemovesTheRecordsForAnyOtherProvider() throws {
        let setup = try Setup(
            domains: ["shop.tenant.test"],
            tenantRecords: ["_acme-challenge.shop IN CNAME shop.tenant.test.provider.test."])
        let calls = setup.directory.path + "/hook-calls"
        // The operator's hook: nsupdate with the provider's key, as a DNS provider's CLI would be called.
        let hook = try setup.directory.write(
            "hook.sh",
            """
            #!/bin/sh
            echo "$1 $2 $3" >> \(calls)
            case "$1" in present) verb=add ;; cleanup) verb=delete ;; *) exit 2 ;; esac
            printf 'server 127.0.0.1 \(setup.bind.port)\\nupdate %s %s 60 TXT "%s"\\nsend\\n' "$verb" "$2" "$3" \\
                | nsupdate -k \(setup.bind.keyFile) && echo "hook: $1 done for $2"
            """)
        chmod(hook, 0o755)
        let result = try setup.aasa(
            [
                "certs", "acme", "--acme-dns-names", "shop.tenant.test", "--acme-dns-hook", hook,
                "--acme-dns-resolver", setup.bind.resolver, "--acme-dns-propagation", "resolver",
            ] + setup.common)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(try setup.verify("shop.tenant.test").status == 0)
        let lines = try String(contentsOfFile: calls, encoding: .utf8).split(separator: "\n").map {
            $0.split(separator: " ").map(String.init)
        }
        #expect(
            lines.map { $0.prefix(2) } == [
                ["present", "shop.tenant.test.provider.test."], ["cleanup", "shop.tenant.test.provider.test."],
            ])
        #expect(lines.map { $0.last } == [lines[0].last, lines[0].last])
        #expect(setup.bind.dig("shop.tenant.test.provider.test", "TXT", resolver: false).isEmpty)
    }

    @Test func aFailingHookIsTheOrdersNamedErrorWithItsOutput() throws {
        let setup = try Setup(domains: ["shop.tenant.test"], tenantRecords: [])
        let hook = try setup.directory.write(
            "hook.sh", "#!/bin/sh\necho \"provider API: token expired\" >&2\nexit 3\n")
        chmod(hook, 0o755)
        let result = try setup.aasa(
            [
                "certs", "acme", "--acme-dns-names", "*", "--acme-dns-hook", hook, "--acme-dns-resolver",
                setup.bind.resolver,
            ]
                + setup.common)
        #expect(result.status == 1)
        let output = result.stdout + result.stderr
        #expect(output.contains("the DNS hook failed (exit status 3)"), "\(output)")
        #expect(output.contains("provider API: token expired"), "\(output)")
        #expect(output.contains("present _acme-challenge.shop.tenant.test."), "\(output)")
        // A hook that hangs is stopped at its time limit, and that is the order's error.
        let hanging = try setup.directory.write("hang.sh", "#!/bin/sh\necho started\nsleep 59.25\n")
        chmod(hanging, 0o755)
        let started = Date()
        let stopped = try setup.aasa(
            [
                "certs", "acme", "--acme-dns-names", "*", "--acme-dns-hook", hanging, "--acme-dns-hook-timeout", "1",
                "--acme-dns-resolver", setup.bind.resolver,
            ] + setup.common)
        #expect(stopped.status == 1)
        #expect(
            (stopped.stdout + stopped.stderr).contains("the DNS hook did not finish within 1.0 seconds"),
            "\(stopped.stdout)\(stopped.stderr)")
        #expect(Date().timeIntervalSince(started) < 30)
        // The programs the hook started went with it.
        #expect(try Command.run("/usr/bin/pgrep", ["-f", "sleep 59.25"]).stdout.isEmpty)
    }

    @Test func aMissingDelegationIsNamedOnStatusWithItsRecordAndTheDomainIsServedOnceItIsAdded() throws {
        let setup = try Setup(domains: ["shop.tenant.test"], tenantRecords: [])
        let serve = try ServeProcess(
            in: setup.directory.path,
            arguments: ["--acme", "--acme-dns-names", "*", "--acme-retry-min", "1"] + setup.dnsOptions + setup.common,
            errorLog: setup.directory.path + "/serve.log")
        #expect(serve.waitUntilHealthy())
        func certificate() -> [String: Any]? {
            guard let answer = try? Curl.request("http://127.0.0.1:\(serve.admin)/status"), answer.status == 200,
                let object = try? JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any],
                let domains = object["domains"] as? [String: Any],
                let domain = domains["shop.tenant.test"] as? [String: Any]
            else { return nil }
            return domain["certificate"] as? [String: Any]
        }
        func delegation() -> [String: Any]? { certificate()?["delegation"] as? [String: Any] }
        // Before: the record the tenant adds, named; no order placed.
        var missing: [String: Any]?
        for _ in 0..<TestTime.tries(100) {
            missing = delegation()
            if missing?["state"] as? String == "missing" { break }
            usleep(100_000)
        }
        #expect(missing?["state"] as? String == "missing", "\(String(describing: certificate()))")
        #expect(
            missing?["record"] as? String
                == "_acme-challenge.shop.tenant.test. IN CNAME shop.tenant.test.provider.test.")
        #expect(certificate()?["challenge"] as? String == "dns-01")
        #expect(certificate()?["state"] as? String == "pending")
        #expect((certificate()?["lastError"] as? String)?.contains("add _acme-challenge.shop.tenant.test.") == true)
        #expect(!setup.pebble.log.contains("Added order"), "an order was placed without the delegation")
        let metrics = try Curl.request("http://127.0.0.1:\(serve.admin)/metrics").text
        #expect(metrics.contains(#"aasa_acme_dns_delegations{state="missing"} 1"# + "\n"), "\(metrics)")
        // The tenant adds the CNAME: the certificate is ordered and served, trusted, without a restart.
        try setup.bind.update("update add _acme-challenge.shop.tenant.test 2 CNAME shop.tenant.test.provider.test.")
        let (served, log) = try setup.waitUntilServed(serve, ["shop.tenant.test"], log: "serve.log")
        #expect(served, "\(log)")
        #expect(delegation()?["state"] as? String == "in-place", "\(String(describing: certificate()))")
        #expect(delegation()?["record"] is NSNull)
        #expect(delegation()?["updatable"] as? Bool == true)
        #expect(certificate()?["state"] as? String == "valid")
        #expect(serve.terminate() == 0)
    }

    @Test func oneWildcardOrderServesEveryConfiguredSubdomain() throws {
        let subdomains = ["a.shop.tenant.test", "b.shop.tenant.test", "c.shop.tenant.test"]
        let setup = try Setup(
            domains: subdomains, tenantRecords: ["_acme-challenge.shop IN CNAME shop.tenant.test.provider.test."])
        let serve = try ServeProcess(
            in: setup.directory.path,
            arguments: ["--acme", "--acme-dns-names", "*", "--acme-wildcard", "shop.tenant.test"] + setup.dnsOptions
                + setup.common,
            errorLog: setup.directory.path + "/serve.log")
        #expect(serve.waitUntilHealthy())
        let (all, log) = try setup.waitUntilServed(serve, subdomains, log: "serve.log")
        #expect(all, "\(log)")
        // One order, for the base and the wildcard, kept in the base's folder; none for the subdomains.
        #expect(setup.pebble.log.components(separatedBy: "Added order").count - 1 == 1, "\(setup.pebble.log)")
        #expect(try setup.names("shop.tenant.test") == ["*.shop.tenant.test", "shop.tenant.test"])
        for domain in subdomains {
            #expect(!FileManager.default.fileExists(atPath: setup.directory.path + "/certs/\(domain)"))
        }
        // /metrics: one dns-01 order, its two authorizations' records seen (base and wildcard), none left.
        let metrics = try Curl.request("http://127.0.0.1:\(serve.admin)/metrics").text
        for line in [
            #"aasa_acme_dns_orders_total{result="valid"} 1"#, "aasa_acme_dns_propagation_waits_total 2",
            "aasa_acme_dns_records 0", #"aasa_acme_dns_delegations{state="in-place"} 1"#,
            "aasa_acme_dns_propagation_failures_total 0",
        ] {
            #expect(metrics.contains(line + "\n"), "\(line)")
        }
        // /status gives each subdomain the wildcard's certificate state.
        let answer = try Curl.request("http://127.0.0.1:\(serve.admin)/status")
        let object = try JSONSerialization.jsonObject(with: Data(answer.body)) as? [String: Any]
        let domains = object?["domains"] as? [String: Any]
        for domain in subdomains {
            let certificate = (domains?[domain] as? [String: Any])?["certificate"] as? [String: Any]
            #expect(
                certificate?["wildcard"] as? String == "*.shop.tenant.test",
                "\(domain): \(String(describing: certificate))")
            #expect(certificate?["state"] as? String == "valid")
            #expect(certificate?["challenge"] as? String == "dns-01")
        }
        #expect(serve.terminate() == 0)
    }

    @Test func theRecordMustBeSeenAtEveryAuthoritativeNameServerBeforeTheCALooks() throws {
        let setup = try Setup(
            domains: ["shop.tenant.test"],
            tenantRecords: ["_acme-challenge.shop IN CNAME shop.tenant.test.provider.test."])
        let options = setup.dnsOptionsCheckingNameServers
        let result = try setup.aasa(["certs", "acme", "--acme-dns-names", "*"] + options + setup.common)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(try setup.verify("shop.tenant.test").status == 0)
    }

    @Test func aRecordNeverSeenAtANameServerFailsNamingItAndIsRemoved() throws {
        let setup = try Setup(
            domains: ["shop.tenant.test"],
            tenantRecords: ["_acme-challenge.shop IN CNAME shop.tenant.test.provider.test."],
            unreachableNameServer: true)
        let options = setup.dnsOptionsCheckingNameServers
        let result = try setup.aasa(
            ["certs", "acme", "--acme-dns-names", "*", "--acme-dns-propagation-timeout", "3"] + options + setup.common)
        #expect(result.status == 1)
        let output = result.stdout + result.stderr
        #expect(output.contains("the TXT record shop.tenant.test.provider.test was not seen"), "\(output)")
        #expect(output.contains("at ns.provider.test (127.0.0.1) within 3.0 seconds"), "\(output)")
        #expect(output.contains("--acme-dns-propagation resolver"), "\(output)")
        // The CA was never asked to look: no authorization was validated either way.
        #expect(!setup.pebble.log.contains("set VALID") && !setup.pebble.log.contains("set INVALID"))
        // Removed after the failure, from the zone and from the state.
        #expect(setup.bind.dig("shop.tenant.test.provider.test", "TXT", resolver: false).isEmpty)
        let orders = try JSONSerialization.jsonObject(
            with: Data(contentsOf: URL(fileURLWithPath: setup.directory.path + "/certs/acme/orders.json")))
        let history = (orders as? [String: Any])?["shop.tenant.test"] as? [String: Any]
        #expect((history?["challengeRecords"] as? [Any])?.isEmpty == true, "\(String(describing: orders))")
        #expect((history?["lastError"] as? String)?.contains("was not seen") == true)
    }

    @Test func aRecordLeftBySIGKILLMidOrderIsRemovedAtTheNextStart() throws {
        let setup = try Setup(
            domains: ["shop.tenant.test"],
            tenantRecords: ["_acme-challenge.shop IN CNAME shop.tenant.test.provider.test."],
            unreachableNameServer: true)
        let options = setup.dnsOptionsCheckingNameServers
        // The name server never answers: the order waits for the record to be seen, with the record written.
        let first = try ServeProcess(
            in: setup.directory.path,
            arguments: ["--acme", "--acme-dns-names", "*", "--acme-dns-propagation-timeout", "600"] + options
                + setup.common,
            errorLog: setup.directory.path + "/first.log")
        var written: [String] = []
        for _ in 0..<TestTime.tries(200) {
            written = setup.bind.dig("shop.tenant.test.provider.test", "TXT", resolver: false)
            if !written.isEmpty { break }
            usleep(100_000)
        }
        #expect(written.count == 1)
        kill(first.process.processIdentifier, SIGKILL)
        first.process.waitUntilExit()
        #expect(setup.bind.dig("shop.tenant.test.provider.test", "TXT", resolver: false) == written)
        let orders = try String(contentsOfFile: setup.directory.path + "/certs/acme/orders.json", encoding: .utf8)
        #expect(orders.contains("challengeRecords") && orders.contains(written[0]), "\(orders)")
        // The next start removes it first, then orders (seen through the resolver this time) and serves.
        let second = try ServeProcess(
            in: setup.directory.path,
            arguments: ["--acme", "--acme-dns-names", "*"] + setup.dnsOptions + setup.common,
            errorLog: setup.directory.path + "/second.log")
        let (served, _) = try setup.waitUntilServed(second, ["shop.tenant.test"], log: "second.log")
        let log = (try? String(contentsOfFile: setup.directory.path + "/second.log", encoding: .utf8)) ?? ""
        #expect(served, "\(log)")
        #expect(log.contains("removed a dns-01 record an earlier run left"), "\(log)")
        #expect(setup.bind.dig("shop.tenant.test.provider.test", "TXT", resolver: false).isEmpty)
        let after =
            (try? String(contentsOfFile: setup.directory.path + "/certs/acme/orders.json", encoding: .utf8)) ?? ""
        #expect(!after.contains(written[0]), "\(after)")
        #expect(second.terminate() == 0)
    }

    @Test func checkNamesTheMissingCNAMEThenSaysWhereTheRecordIsWritten() throws {
        let setup = try Setup(
            domains: ["shop.tenant.test", "a.wild.tenant.test", "b.wild.tenant.test"], tenantRecords: [])
        let arguments =
            [
                "check", "--no-certificates", "--acme-dns-names", "shop.tenant.test", "--acme-wildcard",
                "wild.tenant.test",
                "--config", setup.directory.path + "/site-config",
            ] + setup.dnsOptions
        let before = try setup.aasa(arguments)
        #expect(before.status == 1, "\(before.stdout)\(before.stderr)")
        for name in ["shop.tenant.test", "wild.tenant.test"] {
            #expect(
                before.stdout.contains(
                    "error: [acme-dns-delegation] \(name)\(name.hasPrefix("wild") ? " and *.\(name)" : ""): dns-01: "
                        + "_acme-challenge.\(name) has no CNAME into zone provider.test: add _acme-challenge.\(name). "
                        + "IN CNAME \(name).provider.test."), "\(before.stdout)")
        }
        // One finding for the wildcard, not one per subdomain it covers.
        #expect(before.stdout.components(separatedBy: "[acme-dns-delegation]").count - 1 == 2, "\(before.stdout)")
        try setup.bind.update(
            "update add _acme-challenge.shop.tenant.test 2 CNAME shop.tenant.test.provider.test.\n"
                + "update add _acme-challenge.wild.tenant.test 2 CNAME wild.tenant.test.provider.test.")
        var after = try setup.aasa(arguments + ["--strict"])
        for _ in 0..<TestTime.tries(30) where after.status != 0 {
            usleep(500_000)  // the resolver's negative cache
            after = try setup.aasa(arguments + ["--strict"])
        }
        #expect(after.status == 0, "\(after.stdout)\(after.stderr)")
        #expect(
            after.stdout.contains(
                "note: [acme-dns-delegation] shop.tenant.test: dns-01: _acme-challenge.shop.tenant.test is written in "
                    + "zone provider.test (CNAME shop.tenant.test.provider.test)"), "\(after.stdout)")
    }

    @Test func theResolversNegativeCacheNeverHidesTheRecordTheServerIsAboutToWrite() throws {
        // The resolver keeps a name it found absent for 5 minutes, longer than the 20 s the order waits: were the name
        // the record goes to asked before it is written, the record would never be seen in time.
        let setup = try Setup(
            domains: ["shop.tenant.test"],
            tenantRecords: ["_acme-challenge.shop IN CNAME shop.tenant.test.provider.test."], negativeSeconds: 300)
        let result = try setup.aasa(
            ["certs", "acme", "--acme-dns-names", "*", "--acme-dns-propagation-timeout", "20"] + setup.dnsOptions
                + setup.common)
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        #expect(try setup.verify("shop.tenant.test").status == 0)
        // And without --acme-dns-zone: the zone is found from the SOA above the name, never the name itself.
        var options = setup.dnsOptions
        options.removeSubrange(options.firstIndex(of: "--acme-dns-zone")!...options.firstIndex(of: "provider.test")!)
        try FileManager.default.removeItem(atPath: setup.directory.path + "/certs/shop.tenant.test")
        let again = try setup.aasa(
            ["certs", "acme", "--acme-dns-names", "*", "--acme-dns-propagation-timeout", "20"] + options + setup.common)
        #expect(again.status == 0, "\(again.stdout)\n\(again.stderr)")
        #expect(try setup.verify("shop.tenant.test").status == 0)
    }
}
