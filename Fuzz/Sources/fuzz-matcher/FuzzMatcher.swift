import FuzzDriver

/// `fuzz-matcher`: libFuzzer on FuzzTarget.matcher (docs/fuzzing.md).
@main
enum FuzzMatcher {
    static func main() {
        FuzzDriver.run(.matcher)
    }
}
