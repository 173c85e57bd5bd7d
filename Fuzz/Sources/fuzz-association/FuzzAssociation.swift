import FuzzDriver

/// `fuzz-association`: libFuzzer on FuzzTarget.association (docs/fuzzing.md).
@main
enum FuzzAssociation {
    static func main() {
        FuzzDriver.run(.association)
    }
}
