import FuzzDriver

/// `fuzz-reload-comparison`: libFuzzer on FuzzTarget.reloadComparison (docs/fuzzing.md).
@main
enum FuzzReloadComparison {
    static func main() {
        FuzzDriver.run(.reloadComparison)
    }
}
