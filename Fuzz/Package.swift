// swift-tools-version:6.0
import PackageDescription

/// libFuzzer executables for aasa-server (docs/fuzzing.md). Build only with the sanitizers, as scripts/fuzz does:
///
///     swift build --package-path Fuzz --scratch-path .build-fuzz -c release -Xswiftc -sanitize=fuzzer,address
///
/// A separate package so that building and testing aasa-server never links these main-less-by-design binaries.
/// The harness they run lives in the root package (AASAFuzzHarness), where ordinary tests replay found inputs.
let package = Package(
    name: "aasa-fuzz",
    dependencies: [.package(name: "aasa-server", path: "..")],
    targets: [
        // Declares LLVMFuzzerRunDriver; `-sanitize=fuzzer` links libFuzzer, which defines it.
        .systemLibrary(name: "CLibFuzzer"),
        .target(
            name: "FuzzDriver",
            dependencies: ["CLibFuzzer", .product(name: "AASAFuzzHarness", package: "aasa-server")]),
        .executableTarget(name: "fuzz-site-config", dependencies: ["FuzzDriver"]),
        .executableTarget(name: "fuzz-association", dependencies: ["FuzzDriver"]),
        .executableTarget(name: "fuzz-assetlinks", dependencies: ["FuzzDriver"]),
        .executableTarget(name: "fuzz-matcher", dependencies: ["FuzzDriver"]),
        .executableTarget(name: "fuzz-reload-comparison", dependencies: ["FuzzDriver"]),
        .executableTarget(name: "fuzz-replica-read", dependencies: ["FuzzDriver"]),
    ]
)
