import AASATestSupport
import Foundation
import Testing

/// `aasa-server import --site` against a real HTTPS site: another `aasa-server serve` on a free port, with a
/// development CA, serving `localhost`. What it serves at `/.well-known/passkey-endpoints` and
/// `/.well-known/change-password` is kept in the site.json written, and what cannot be represented is named.
@Suite(.serialized) struct ImportEndpointsTests {
    func aasa(_ arguments: [String], in directory: String) throws -> Command.Output {
        try Command.run(RepositoryPaths.executable, arguments, currentDirectory: directory, timeout: 60)
    }

    static let appleFile = #"{"webcredentials": {"apps": ["ABCDE12345.com.example.shop"]}}"#

    /// A site serving `localhost` from `files` (paths below its domain folder), started and ready.
    static func site(_ files: [String: String]) throws -> (TemporaryDirectory, ServeProcess) {
        let directory = TemporaryDirectory("aasa-import-site")
        for (path, text) in files { try directory.write("site-config/localhost/" + path, text) }
        let serve = try ServeProcess(in: directory.path, arguments: ["--dev", "--no-watch"])
        #expect(serve.waitUntilReady())
        return (directory, serve)
    }

    @Test func theSitesPasskeyEndpointsAndChangePasswordAreKept() throws {
        let (site, serve) = try Self.site([
            "site.json": #"""
            {"webCredentials": ["ABCDE12345.com.example.shop"],
             "passkeys": {"enroll": "https://shop.example/account/passkeys/new", "manage": "https://shop.example/account/passkeys"},
             "changePassword": "https://shop.example/account/password"}
            """#
        ])
        let directory = TemporaryDirectory("aasa-import-endpoints")
        try directory.write("aasa.json", Self.appleFile)
        let output = try aasa(
            [
                "import", "aasa.json", "--domain", "shop.example", "--site", "https://localhost:\(serve.port)",
                "--cacert", site.path + "/certs/dev-ca/ca.pem",
            ], in: directory.path)
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stderr.isEmpty, "\(output.stderr)")
        #expect(
            output.stdout.contains(
                "credential endpoints: changePassword https://shop.example/account/password, passkeys.enroll https://shop.example/account/passkeys/new, passkeys.manage https://shop.example/account/passkeys"
            ), "\(output.stdout)")
        let written = try String(
            contentsOfFile: directory.path + "/site-config/shop.example/site.json", encoding: .utf8)
        #expect(written.contains(#""enroll": "https://shop.example/account/passkeys/new""#), "\(written)")
        #expect(written.contains(#""changePassword": "https://shop.example/account/password""#), "\(written)")
        // What was written loads clean, and would be served as it was.
        let check = try aasa(["check", "--no-certificates"], in: directory.path)
        #expect(check.status == 0 && check.stdout.contains("0 errors, 0 warnings"), "\(check.stdout)\(check.stderr)")
    }

    /// A document with a member the draft does not define and a value that is no URL, and a page served at the
    /// change-password URL: each named, left out, and the rest kept.
    @Test func whatCannotBeRepresentedIsNamedNotDropped() throws {
        let (site, serve) = try Self.site([
            "site.json": #"{"webCredentials": ["ABCDE12345.com.example.shop"]}"#,
            "pages/.well-known/passkey-endpoints":
                #"{"enroll": "https://shop.example/passkeys/new", "manage": 5, "recover": "https://shop.example/r"}"#,
            "pages/.well-known/change-password": "<!doctype html><title>Change your password</title>",
        ])
        let directory = TemporaryDirectory("aasa-import-endpoints")
        try directory.write("aasa.json", Self.appleFile)
        let origin = "https://localhost:\(serve.port)"
        let output = try aasa(
            [
                "import", "aasa.json", "--domain", "shop.example", "--site", origin, "--cacert",
                site.path + "/certs/dev-ca/ca.pem",
            ], in: directory.path)
        #expect(output.status == 0, "\(output.stderr)")
        for expected in [
            "\(origin)/.well-known/passkey-endpoints:1:59: warning: [endpoints-import] \"manage\" is number, not a URL: left out",
            "\(origin)/.well-known/passkey-endpoints:1:62: warning: [endpoints-import] \"recover\" is not a member aasa-server serves",
            "\(origin)/.well-known/change-password: warning: [endpoints-import] \(origin)/.well-known/change-password answered HTTP 200 with a page instead of a redirect: not imported",
        ] {
            #expect(output.stderr.contains(expected), "\(expected)\n\(output.stderr)")
        }
        let written = try String(
            contentsOfFile: directory.path + "/site-config/shop.example/site.json", encoding: .utf8)
        #expect(written.contains(#""passkeys": {"#) && written.contains("https://shop.example/passkeys/new"))
        #expect(!written.contains("changePassword") && !written.contains("recover"), "\(written)")
    }

    /// A site that answers both paths with its own pages (an HTML page that is no JSON, a page over the 64 KiB read):
    /// neither is a document nor a redirect, each is named and left out, and the import goes on.
    @Test func pagesAtTheWellKnownPathsAreLeftOutNotFailures() throws {
        let (site, serve) = try Self.site([
            "site.json": #"{"webCredentials": ["ABCDE12345.com.example.shop"]}"#,
            "pages/.well-known/passkey-endpoints": "<!doctype html><title>Not found</title><p>Try the home page.",
            "pages/.well-known/change-password":
                "<!doctype html><title>Account</title>"
                + String(repeating: "<p>Change your password here.\n", count: 3_000),
        ])
        let directory = TemporaryDirectory("aasa-import-endpoints")
        try directory.write("aasa.json", Self.appleFile)
        let origin = "https://localhost:\(serve.port)"
        let output = try aasa(
            [
                "import", "aasa.json", "--domain", "shop.example", "--site", origin, "--cacert",
                site.path + "/certs/dev-ca/ca.pem",
            ], in: directory.path)
        #expect(output.status == 0, "\(output.stderr)")
        for expected in [
            "warning: [endpoints-import] \(origin)/.well-known/passkey-endpoints is not a passkey endpoints document: not imported (not JSON)",
            "warning: [endpoints-import] \(origin)/.well-known/change-password answered with over 64 KiB, a page rather than what aasa-server serves there: not imported",
        ] {
            #expect(output.stderr.contains(expected), "\(expected)\n\(output.stderr)")
        }
        #expect(!output.stderr.contains("error"), "\(output.stderr)")
        let written = try String(
            contentsOfFile: directory.path + "/site-config/shop.example/site.json", encoding: .utf8)
        #expect(!written.contains("passkeys") && !written.contains("changePassword"), "\(written)")
    }

    /// A finding on what the domain already had (a change-password page on another host) is said once, not once by
    /// the import's load and again by the endpoints' check after `--site`.
    @Test func aFindingOnWhatTheDomainHadIsSaidOnce() throws {
        let (site, serve) = try Self.site(["site.json": #"{"webCredentials": ["ABCDE12345.com.example.shop"]}"#])
        let directory = TemporaryDirectory("aasa-import-endpoints")
        try directory.write("aasa.json", Self.appleFile)
        try directory.write(
            "site-config/shop.example/site.json",
            #"{"webCredentials": ["ABCDE12345.com.example.shop"], "changePassword": "https://login.example.net/pw"}"#)
        let output = try aasa(
            [
                "import", "aasa.json", "--domain", "shop.example", "--site", "https://localhost:\(serve.port)",
                "--cacert", site.path + "/certs/dev-ca/ca.pem",
            ], in: directory.path)
        #expect(output.status == 0, "\(output.stderr)")
        #expect(output.stderr.components(separatedBy: "[credential-url-host]").count == 2, "\(output.stderr)")
    }

    @Test(arguments: ["https://shop.example/app", "https://shop.example?x=1", "http://shop.example", "https://"])
    func siteIsAnHTTPSOrigin(site: String) throws {
        let directory = TemporaryDirectory("aasa-import-endpoints")
        try directory.write("aasa.json", Self.appleFile)
        let output = try aasa(["import", "aasa.json", "--domain", "shop.example", "--site", site], in: directory.path)
        #expect(output.status != 0)
        #expect(output.stderr.contains("--site '\(site)' is not an https origin"), "\(output.stderr)")
    }

    /// A site that cannot be read writes nothing.
    @Test func aSiteThatCannotBeReadWritesNothing() throws {
        let directory = TemporaryDirectory("aasa-import-endpoints")
        try directory.write("aasa.json", Self.appleFile)
        let output = try aasa(
            ["import", "aasa.json", "--domain", "shop.example", "--site", "https://127.0.0.1:\(freePort())"],
            in: directory.path)
        #expect(output.status == 2)
        #expect(output.stderr.contains("error: [endpoints-fetch] cannot read https://127.0.0.1:"), "\(output.stderr)")
        #expect(output.stderr.contains("import failed: nothing was written"))
        #expect(!FileManager.default.fileExists(atPath: directory.path + "/site-config/shop.example/site.json"))
    }
}
