import FuzzDriver

/// `fuzz-site-config`: libFuzzer on FuzzTarget.siteConfig (docs/fuzzing.md).
@main
enum FuzzSiteConfig {
    static func main() {
        FuzzDriver.run(.siteConfig)
    }
}
