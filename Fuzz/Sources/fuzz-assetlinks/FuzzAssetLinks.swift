import FuzzDriver

/// `fuzz-assetlinks`: libFuzzer on FuzzTarget.assetLinks (docs/fuzzing.md).
@main
enum FuzzAssetLinks {
    static func main() {
        FuzzDriver.run(.assetLinks)
    }
}
