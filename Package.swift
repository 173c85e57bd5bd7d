// swift-tools-version:6.0
import PackageDescription

/// aasa-server: generates and serves Apple's apple-app-site-association for many domains.
///
/// Dependencies point one way: executable → AASAServer → (AASAOpenSSL, AASAMicroHTTPD) → AASACore, and the two
/// wrappers → C targets. Only AASAOpenSSL imports OpenSSL; only AASAMicroHTTPD imports libmicrohttpd and GnuTLS.
let strict: [SwiftSetting] = [.enableUpcomingFeature("ExistentialAny")]

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
        .target(name: "CShims", dependencies: ["CMicroHTTPD", "CGnuTLS", "COpenSSL"]),

        // MARK: Swift modules
        .target(name: "AASACore", swiftSettings: strict),
        .target(name: "AASAOpenSSL", dependencies: ["AASACore", "COpenSSL", "CShims"], swiftSettings: strict),
        .target(
            name: "AASAMicroHTTPD",
            dependencies: ["AASACore", "CMicroHTTPD", "CGnuTLS", "CShims"],
            swiftSettings: strict),
        .target(
            name: "AASAServer",
            dependencies: [
                "AASACore", "AASAOpenSSL", "AASAMicroHTTPD",
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),
        // What the fuzz targets do with one input; pure Swift, so tests replay found inputs (docs/fuzzing.md).
        .target(name: "AASAFuzzHarness", dependencies: ["AASACore"], swiftSettings: strict),
        .executableTarget(
            name: "aasa-server",
            dependencies: [
                "AASAServer", "AASACore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            swiftSettings: strict),

        // MARK: Tests
        .target(name: "AASATestSupport", path: "Tests/AASATestSupport"),
        .testTarget(name: "AASACoreTests", dependencies: ["AASACore", "AASATestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "AASAFuzzHarnessTests", dependencies: ["AASAFuzzHarness", "AASACore", "AASATestSupport"]),
        .testTarget(name: "AASAOpenSSLTests", dependencies: ["AASAOpenSSL", "AASATestSupport"]),
        .testTarget(
            name: "AASAMicroHTTPDTests", dependencies: ["AASAMicroHTTPD", "AASACore", "AASAOpenSSL", "AASATestSupport"]),
        .testTarget(
            name: "AASAServerTests", dependencies: ["AASAServer", "AASACore", "AASAOpenSSL", "AASATestSupport"]),
        .testTarget(name: "CLITests", dependencies: ["aasa-server", "AASACore", "AASATestSupport"]),
    ]
)
