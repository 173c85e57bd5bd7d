// swift-tools-version:6.0
import PackageDescription

/// aasa-server: generates and serves Apple's apple-app-site-association for many domains.
///
/// Dependencies point one way: executable → AASAServer → (AASAOpenSSL, AASAMicroHTTPD, AASACurl, AASAPostgres, AASAQRCode,
/// AASADNS) → AASACore, and the wrappers → C targets. Only AASAOpenSSL imports OpenSSL; only AASAMicroHTTPD imports
/// libmicrohttpd and GnuTLS; only AASACurl imports libcurl; only AASAPostgres imports libpq; only AASAQRCode imports
/// libqrencode; only AASADNS imports ldns.
/// The language features every Swift target is built with, tests included: `any` spelled out for existentials,
/// imports internal unless declared `public import` (so a C or dependency type never leaks into API by accident),
/// and a module's members visible only in files that import it.
let upcomingLanguageFeatures: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
    .enableUpcomingFeature("InternalImportsByDefault"),
    .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
    name: "aasa-server",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "aasa-server", targets: ["aasa-server"]),
        // For the libFuzzer executables in Fuzz/ (a separate package, so this one never links a main-less binary).
        .library(name: "AASAFuzzHarness", targets: ["AASAFuzzHarness"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    ],
    targets: [
        // MARK: C libraries
        .systemLibrary(
            name: "CMicroHTTPD", pkgConfig: "libmicrohttpd",
            providers: [.apt(["libmicrohttpd-dev"]), .brew(["libmicrohttpd"])]),
        .systemLibrary(
            name: "CGnuTLS", pkgConfig: "gnutls",
            providers: [.apt(["libgnutls28-dev"]), .brew(["gnutls"])]),
        .systemLibrary(
            name: "COpenSSL", pkgConfig: "openssl",
            providers: [.apt(["libssl-dev"]), .brew(["openssl"])]),
        .systemLibrary(
            name: "CCurl", pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"]), .brew(["curl"])]),
        .systemLibrary(
            name: "CLibPQ", pkgConfig: "libpq", providers: [.apt(["libpq-dev"]), .brew(["libpq"])]),
        .systemLibrary(
            name: "CQREncode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"]), .brew(["qrencode"])]),
        .systemLibrary(name: "CLDNS", pkgConfig: "ldns", providers: [.apt(["libldns-dev"]), .brew(["ldns"])]),
        .target(name: "CShims", dependencies: ["CMicroHTTPD", "CGnuTLS", "COpenSSL", "CCurl"]),

        // MARK: Swift modules
        .target(name: "AASACore", swiftSettings: upcomingLanguageFeatures),
        .target(
            name: "AASAOpenSSL", dependencies: ["AASACore", "COpenSSL", "CShims"],
            swiftSettings: upcomingLanguageFeatures),
        .target(
            name: "AASAMicroHTTPD",
            dependencies: ["AASACore", "CMicroHTTPD", "CGnuTLS", "CShims"],
            swiftSettings: upcomingLanguageFeatures),
        .target(
            name: "AASAServer",
            dependencies: [
                "AASACore", "AASAOpenSSL", "AASAMicroHTTPD", "AASACurl", "AASAPostgres", "AASAQRCode", "AASADNS",
                .product(name: "Logging", package: "swift-log"),
            ],
            // The admin dashboard, compiled into the binary (no bundle to install beside it).
            resources: [
                .embedInCode("Admin/Dashboard/dashboard.html"), .embedInCode("Admin/Dashboard/dashboard.css"),
                .embedInCode("API/openapi.json"),
                // The dashboard's script, a file per section (DashboardPage.scriptFiles joins them in order).
                .embedInCode("Admin/Dashboard/script/base.js"),
                .embedInCode("Admin/Dashboard/script/requests.js"),
                .embedInCode("Admin/Dashboard/script/token.js"),
                .embedInCode("Admin/Dashboard/script/polling.js"),
                .embedInCode("Admin/Dashboard/script/status.js"),
                .embedInCode("Admin/Dashboard/script/queue.js"),
                .embedInCode("Admin/Dashboard/script/fetches.js"),
                .embedInCode("Admin/Dashboard/script/traffic.js"),
                .embedInCode("Admin/Dashboard/script/match.js"),
                .embedInCode("Admin/Dashboard/script/editor.js"),
                .embedInCode("Admin/Dashboard/script/wiring.js"),
            ],
            swiftSettings: upcomingLanguageFeatures),
        // The only module importing libcurl: the client for outbound HTTPS (ACME, Apple's CDN, Google's API).
        .target(
            name: "AASACurl", dependencies: ["AASACore", "CCurl", "CShims"], swiftSettings: upcomingLanguageFeatures),
        // The only module importing libpq: a blocking PostgreSQL client (parameterised statements, LISTEN/NOTIFY).
        .target(name: "AASAPostgres", dependencies: ["CLibPQ"], swiftSettings: upcomingLanguageFeatures),
        // The only module importing libqrencode: QR codes of page URLs for desktop visitors, drawn as SVG.
        .target(
            name: "AASAQRCode", dependencies: ["AASACore", "CQREncode"], swiftSettings: upcomingLanguageFeatures),
        // The only module importing ldns: DNS lookups and RFC 2136 updates signed with TSIG, for ACME's dns-01.
        .target(name: "AASADNS", dependencies: ["AASACore", "CLDNS"], swiftSettings: upcomingLanguageFeatures),
        // What the fuzz targets do with one input; pure Swift, so tests replay found inputs (docs/fuzzing.md).
        .target(name: "AASAFuzzHarness", dependencies: ["AASACore"], swiftSettings: upcomingLanguageFeatures),
        .executableTarget(
            name: "aasa-server",
            dependencies: [
                "AASAServer", "AASACore", "AASACurl", "AASADNS",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: upcomingLanguageFeatures),

        // MARK: Tests
        .target(
            name: "AASATestSupport", dependencies: ["AASACore"], path: "Tests/AASATestSupport",
            swiftSettings: upcomingLanguageFeatures),
        .testTarget(
            name: "AASACoreTests", dependencies: ["AASACore", "AASATestSupport"], exclude: ["Fixtures"],
            swiftSettings: upcomingLanguageFeatures),
        .testTarget(
            name: "AASAFuzzHarnessTests", dependencies: ["AASAFuzzHarness", "AASACore", "AASATestSupport"],
            swiftSettings: upcomingLanguageFeatures),
        .testTarget(
            name: "AASAOpenSSLTests", dependencies: ["AASAOpenSSL", "AASATestSupport"],
            swiftSettings: upcomingLanguageFeatures),
        .testTarget(
            name: "AASAMicroHTTPDTests",
            dependencies: ["AASAMicroHTTPD", "AASACore", "AASAOpenSSL", "AASATestSupport"],
            swiftSettings: upcomingLanguageFeatures),
        .testTarget(
            name: "AASAServerTests",
            dependencies: [
                "AASAServer", "AASACore", "AASAOpenSSL", "AASACurl", "AASAMicroHTTPD", "AASAQRCode", "AASADNS",
                "AASATestSupport",
            ],
            swiftSettings: upcomingLanguageFeatures),
        .testTarget(
            name: "AASAQRCodeTests", dependencies: ["AASAQRCode", "AASACore", "AASATestSupport"],
            swiftSettings: upcomingLanguageFeatures),
        .testTarget(
            name: "AASADNSTests", dependencies: ["AASADNS", "AASATestSupport"],
            swiftSettings: upcomingLanguageFeatures),
        .testTarget(
            name: "AASAPostgresTests", dependencies: ["AASAPostgres", "AASATestSupport"],
            swiftSettings: upcomingLanguageFeatures),
        .testTarget(
            name: "CLITests",
            dependencies: ["aasa-server", "AASACore", "AASAServer", "AASAPostgres", "AASATestSupport"],
            swiftSettings: upcomingLanguageFeatures),
    ]
)
