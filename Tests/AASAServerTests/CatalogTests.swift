import AASACore
import AASAMicroHTTPD
import AASAOpenSSL
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// The catalog's rules, without sockets: the previous catalog plus a load gives the next catalog.
@Suite struct CatalogTests {
    static let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    /// One version of a domain as a load reads it: `path` is its one rule; `broken` a site.json that does not parse.
    static func version(_ domain: String, path: String = "/a/*", hsts: Bool = false, broken: Bool = false)
        -> LoadedDomain
    {
        let json =
            broken
            ? "{ \"universalLinks\": "
            : """
            { "universalLinks": { "apps": [ { "appIDs": ["ABCDE12345.com.example.app"], "rules": [ { "path": "\(path)" } ] } ] }\
            \(hsts ? ", \"hsts\": { \"maxAge\": 31536000 }" : "") }
            """
        return SiteConfigLoader().loadDomain(
            domain: domain, source: SourceText(name: "site-config/\(domain)/site.json", bytes: Array(json.utf8))
        ).keptBetweenLoads()
    }

    /// A load of `domains` at `time`: every folder (`complete`), or only those read plus `absent` ones.
    static func load(_ domains: [LoadedDomain], absent: [String] = [], complete: Bool = true, at time: Date) -> Load {
        let names = Set(domains.map(\.domain) + absent)
        return Load(
            time: time, scope: LoadScope(domains: complete ? nil : names, certificates: nil),
            domains: .success(domains), absent: absent)
    }

    /// A step of a domain's life and what the catalog makes of it.
    struct Step: Sendable, CustomTestStringConvertible {
        var name: String
        /// The load, `seconds` after t0.
        var domains: [LoadedDomain]
        var absent: [String] = []
        var complete = true
        var seconds: Double = 0
        /// What `shop.example` is after the step (`nil`: unknown to the catalog), and the path its served file has.
        var state: ServerStatus.DomainState.State?
        var servedPath: String?
        /// Whether the step changes what `shop.example` serves.
        var changed: Bool
        var testDescription: String { name }
    }

    static let grace = Duration.seconds(60)

    /// Each row runs after the rows before it: a domain's life from first load to removal.
    static let life: [Step] = [
        Step(
            name: "a clean first load publishes", domains: [Self.version("shop.example")], state: .published,
            servedPath: "/a/*", changed: true),
        Step(
            name: "the same bytes again republish nothing", domains: [version("shop.example")], seconds: 1,
            state: .published, servedPath: "/a/*", changed: false),
        Step(
            name: "a broken version keeps the last good one (stale)", domains: [version("shop.example", broken: true)],
            seconds: 2, state: .stale, servedPath: "/a/*", changed: false),
        Step(
            name: "a fixed version replaces it", domains: [version("shop.example", path: "/b/*")], seconds: 3,
            state: .published, servedPath: "/b/*", changed: true),
        Step(
            name: "a serving setting alone republishes", domains: [version("shop.example", path: "/b/*", hsts: true)],
            seconds: 4, state: .published, servedPath: "/b/*", changed: true),
        Step(
            name: "a folder gone within the grace is still served (removing)", domains: [], seconds: 10,
            state: .removing, servedPath: "/b/*", changed: false),
        Step(
            name: "a partial load of another domain leaves it removing", domains: [version("other.example")],
            complete: false, seconds: 20, state: .removing, servedPath: "/b/*", changed: false),
        Step(
            name: "a folder back within the grace is as it was",
            domains: [version("shop.example", path: "/b/*", hsts: true)], seconds: 30, state: .published,
            servedPath: "/b/*", changed: false),
        Step(
            name: "gone again, named absent by a partial load", domains: [], absent: ["shop.example"], complete: false,
            seconds: 40, state: .removing, servedPath: "/b/*", changed: false),
        Step(
            name: "once the grace has passed it is unpublished", domains: [], seconds: 40 + 61, state: nil,
            servedPath: nil, changed: true),
    ]

    @Test func aDomainsLifeFromFirstLoadToRemoval() throws {
        var catalog = Catalog()
        for step in Self.life {
            let load = Self.load(
                step.domains, absent: step.absent, complete: step.complete, at: Self.t0 + step.seconds)
            let transition = catalog.apply(load, trigger: .fileChange, removalGrace: Self.grace)
            let status = try #require(catalog.status)
            #expect(status.domainState("shop.example")?.state == step.state, "\(step.name)")
            let served = catalog.published["shop.example"].map { String(decoding: $0.associationFile, as: UTF8.self) }
            #expect(served?.contains("\"\(step.servedPath ?? "-")\"") ?? (step.servedPath == nil), "\(step.name)")
            #expect(transition.changed.contains("shop.example") == step.changed, "\(step.name)")
        }
    }

    @Test func aDomainThatNeverLoadedCleanIsFailedAndUnpublished() throws {
        var catalog = Catalog()
        _ = catalog.apply(
            Self.load([Self.version("shop.example", broken: true), Self.version("ok.example")], at: Self.t0),
            trigger: .start,
            removalGrace: .zero)
        #expect(catalog.status?.domainState("shop.example")?.state == .failed)
        #expect(catalog.published["shop.example"] == nil)
        #expect(catalog.status?.lastReload.result == .errors)
        #expect(catalog.status?.unpublishedDomains.map(\.domain) == ["shop.example"])
    }

    @Test func aLoadThatCannotListTheDomainsKeepsEverything() throws {
        var catalog = Catalog()
        _ = catalog.apply(Self.load([Self.version("shop.example")], at: Self.t0), trigger: .start, removalGrace: .zero)
        let failure = Diagnostic(.error, rule: .configFolder, "cannot list 'site-config'")
        let transition = catalog.apply(
            Load(time: Self.t0 + 1, scope: .everything, domains: .failure(failure)), trigger: .signal,
            removalGrace: .zero)
        #expect(transition.changed.isEmpty)
        #expect(transition.diagnostics == [failure])
        #expect(catalog.status?.lastReload.result == .failed)
        #expect(catalog.published["shop.example"] != nil)
    }

    /// Only a change of what a URL does is compared (``ChangeComparer``): the association file, assetlinks.json,
    /// the cache header, or signing turned on or off; what the comparison reads is compared whole (``DiffSide``).
    @Test(arguments: [("/b/*", false, true), ("/a/*", true, false)])
    func whatIsComparedAfterAReload(path: String, hsts: Bool, compared: Bool) {
        var catalog = Catalog()
        _ = catalog.apply(Self.load([Self.version("shop.example")], at: Self.t0), trigger: .start, removalGrace: .zero)
        let transition = catalog.apply(
            Self.load([Self.version("shop.example", path: path, hsts: hsts)], at: Self.t0 + 1), trigger: .fileChange,
            removalGrace: .zero)
        #expect(transition.changed == ["shop.example"])
        let diffs = transition.compare.compactMap { DomainChange.compare($0.old, $0.new) }
        #expect(diffs.map(\.domain) == (compared ? ["shop.example"] : []))
    }

    /// A new version that differs only in what the comparison does not read (a new signature of the same file) is
    /// republished but queues no comparison: the comparer's one thread is not spent on it.
    @Test func aNewSignatureOfTheSameFileQueuesNoComparison() throws {
        func signed(_ signature: [UInt8]) -> LoadedDomain {
            let json = """
                { "universalLinks": { "apps": [ { "appIDs": ["ABCDE12345.com.example.app"], "rules": [ { "path": "/a/*" } ] } ] },
                  "signing": true }
                """
            var loaded = SiteConfigLoader().loadDomain(
                domain: "shop.example",
                source: SourceText(name: "site-config/shop.example/site.json", bytes: Array(json.utf8)))
            loaded.signedAssociationFile = signature
            return loaded.keptBetweenLoads()
        }
        var catalog = Catalog()
        _ = catalog.apply(Self.load([signed([1, 2, 3])], at: Self.t0), trigger: .start, removalGrace: .zero)
        try #require(catalog.published["shop.example"]?.signedAssociationFile == [1, 2, 3])
        let resigned = catalog.apply(
            Self.load([signed([4, 5, 6])], at: Self.t0 + 1), trigger: .fileChange, removalGrace: .zero)
        #expect(resigned.changed == ["shop.example"])
        #expect(resigned.compare.isEmpty)
        let other = catalog.apply(
            Self.load([Self.version("shop.example", path: "/b/*")], at: Self.t0 + 2), trigger: .fileChange,
            removalGrace: .zero)
        #expect(other.compare.map(\.new.domain) == ["shop.example"], "new rules, signing turned off: compared")
    }

    /// Every field of ``PublishedDomain`` is part of what a domain serves, and the catalog republishes a version
    /// that is not `==` to the one it serves (the hsts row of ``aDomainsLifeFromFirstLoadToRemoval()`` shows a
    /// setting alone republished): a version differing in any one field is not `==`. A field added to the type and
    /// not listed here fails this test, so what it serves is decided, not forgotten.
    @Test func aVersionDifferingInAnyFieldIsNotTheSame() throws {
        let base = try #require(Self.version("shop.example").published)
        let variants: [String: @Sendable (inout PublishedDomain) -> Void] = [
            "domain": { $0.domain = "other.example" },
            "associationFile": { $0.associationFile += Array(" ".utf8) },
            "cacheControl": { $0.cacheControl = "max-age=1" },
            "assetLinks": { $0.assetLinks = Array("[]".utf8) },
            "signedAssociationFile": { $0.signedAssociationFile = [1, 2, 3] },
            "signedPaths": { $0.signedPaths = .both },
            "pagesStorage": { $0.pages = SitePages(cacheControl: "no-store") },
            "hsts": { $0.hsts = "max-age=1" },
            "credentialStorage": {
                $0.credentialEndpoints = CredentialEndpoints(changePassword: "https://shop.example/password")
            },
            "detailsSource": { $0.detailsSource = [nil, nil] },
        ]
        let fields = Mirror(reflecting: base).children.compactMap(\.label)
        #expect(Set(fields) == Set(variants.keys), "every field of PublishedDomain needs a variant here")
        for field in fields {
            var changed = base
            variants[field]?(&changed)
            #expect(changed != base, "\(field)")
        }
    }

    /// Development certificates in `certs` for `names` and no other folder (the tool adds `localhost`).
    static func certificates(_ names: [String], in certs: String) throws {
        if !names.isEmpty { _ = try DevCertificates(certificateDirectory: certs).ensure(names: names) }
        for folder in try FileManager.default.contentsOfDirectory(atPath: certs)
        where !names.contains(folder) && folder != CertificateDirectory.devCAFolder {
            try FileManager.default.removeItem(atPath: certs + "/" + folder)
        }
    }

    /// The certificate handshakes without (or with an unknown) SNI get: `certs/default/`, else the certificate of
    /// the first configured domain (by name) one covers, else the first certificate.
    @Test(arguments: [
        (["default", "a.example", "b.example"], ["a.example", "b.example"], "default"),
        (["b.example", "a.example"], ["b.example", "a.example"], "a.example"),
        (["b.example", "a.example"], ["b.example"], "b.example"),
        (["z.example"], ["a.example"], "z.example"),
        // The first domain by name that a certificate covers (a.example has none), not the first folder.
        (["b.example", "c.example"], ["c.example", "a.example"], "c.example"),
    ])
    func theDefaultCertificate(folders: [String], domains: [String], expected: String) throws {
        let scratch = TemporaryDirectory("aasa-catalog-default")
        let certs = scratch.path + "/certs"
        try Self.certificates(folders, in: certs)
        var catalog = ServedCertificates()
        let findings = try catalog.read(certs, domains: domains, at: Date())
        #expect(findings.errors.isEmpty, "\(findings)")
        #expect(catalog.table?.defaultID == expected)
        let uncovered = domains.filter { catalog.catalog.coveringFolder(of: $0) == nil }
        #expect(uncovered == domains.filter { !folders.contains($0) })
    }

    /// Which folder covers each domain follows the certificates as they change: a domain's own folder, a folder
    /// listing it among other names, a wildcard, none; the same folder the SNI table serves it from, and each
    /// folder knows the domains it covers.
    @Test func eachDomainsCoveringFolderFollowsTheCertificates() throws {
        let scratch = TemporaryDirectory("aasa-catalog-covering")
        let certs = scratch.path + "/certs"
        try FileManager.default.createDirectory(atPath: certs, withIntermediateDirectories: true)
        let authority = try DevCertificateAuthority.loadOrCreate(
            directory: certs + "/" + CertificateDirectory.devCAFolder)
        func write(_ folder: String, _ names: [String]) throws {
            try authority.issue(names: names).writeCertbotLayout(into: certs, name: folder)
        }
        let domains = ["a.example", "b.example", "c.example"]
        var catalog = ServedCertificates()
        func expectCovering(_ expected: [String: String?], _ step: String) throws {
            let findings = try catalog.read(certs, domains: domains, at: Date())
            #expect(findings.errors.isEmpty, "\(step): \(findings)")
            for domain in domains {
                let folder = catalog.catalog.coveringFolder(of: domain)
                #expect(folder == expected[domain] ?? nil, "\(step): \(domain)")
                #expect(folder == catalog.table?.entryID(covering: domain), "\(step): \(domain)")
                for other in Set(expected.values.compactMap { $0 }) {
                    #expect(
                        catalog.catalog.domains(coveredBy: other).contains(domain) == (folder == other),
                        "\(step): \(domain) by \(other)")
                }
            }
        }
        try write("a.example", ["a.example"])
        try write("shared", ["b.example", "z.example"])
        try expectCovering(["a.example": "a.example", "b.example": "shared", "c.example": nil], "first load")
        try write("b.example", ["b.example"])
        try expectCovering(["a.example": "a.example", "b.example": "b.example", "c.example": nil], "own folder")
        try write("wild", ["*.example"])
        try expectCovering(["a.example": "a.example", "b.example": "b.example", "c.example": "wild"], "wildcard")
        try write("a.example", ["x.example"])
        try expectCovering(["a.example": "wild", "b.example": "b.example", "c.example": "wild"], "own name dropped")
        try FileManager.default.removeItem(atPath: certs + "/wild")
        try FileManager.default.removeItem(atPath: certs + "/b.example")
        try expectCovering(["a.example": nil, "b.example": "shared", "c.example": nil], "folders removed")
    }

    /// With ACME, a domain no certificate covers is served a temporary certificate, the default while there is no
    /// other; its own certificate replaces it, and becomes the default.
    @Test func aTemporaryCertificateStandsInUntilTheDomainsOwnArrives() throws {
        let scratch = TemporaryDirectory("aasa-catalog-temporary")
        let certs = scratch.path + "/certs"
        try FileManager.default.createDirectory(atPath: certs, withIntermediateDirectories: true)
        var catalog = ServedCertificates(temporaryCertificates: TemporaryCertificates())
        var findings = try catalog.read(certs, domains: ["a.example"], at: Date())
        #expect(findings.errors.isEmpty, "\(findings)")
        #expect(catalog.temporary == ["a.example"])
        #expect(catalog.table?.defaultID == CertificateEntryID.temporary(domain: "a.example").tableID)
        try Self.certificates(["a.example"], in: certs)
        findings = try catalog.read(certs, domains: ["a.example"], at: Date())
        #expect(findings.errors.isEmpty, "\(findings)")
        #expect(catalog.temporary.isEmpty)
        #expect(catalog.table?.defaultID == "a.example")
        #expect(catalog.catalog.coveringFolder(of: "a.example") == "a.example")
    }

    /// Without any usable certificate (and without ACME) the catalog keeps what it serves and says why.
    @Test func noUsableCertificateKeepsTheServedOnes() throws {
        let scratch = TemporaryDirectory("aasa-catalog-none")
        let certs = scratch.path + "/certs"
        try Self.certificates(["a.example"], in: certs)
        var catalog = ServedCertificates()
        _ = try catalog.read(certs, domains: ["a.example"], at: Date())
        let table = try #require(catalog.table)
        try Self.certificates([], in: certs)
        let findings = try catalog.read(certs, domains: ["a.example"], at: Date())
        #expect(findings.contains { $0.rule == .noCertificates })
        #expect(catalog.table === table)
        #expect(catalog.served["a.example"] != nil)
    }
}
