import FuzzDriver

/// `fuzz-replica-read`: libFuzzer on FuzzTarget.replicaRead (docs/fuzzing.md).
@main
enum FuzzReplicaRead {
    static func main() {
        FuzzDriver.run(.replicaRead)
    }
}
