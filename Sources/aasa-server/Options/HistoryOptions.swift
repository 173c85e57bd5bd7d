import AASAServer
import ArgumentParser

/// What the tenant API's history keeps (`serve`): the bounds of ``HistoryPolicy``.
struct HistoryOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Entries of the tenant API's history kept per domain; older ones are deleted with the next write "
                + "(env: \(EnvironmentVariable.historyRevisions)).", valueName: "count"))
    var historyRevisions: Int = Environment.value(.historyRevisions, domainHistoryCapacity)

    @Option(
        help: ArgumentHelp(
            "Mebibytes of history kept per domain: each entry counts its site.json and 3 KiB; at least 2 "
                + "(env: \(EnvironmentVariable.historyBytes)).", valueName: "MiB"))
    var historyBytes: Int = Environment.value(.historyBytes, 16)

    @Option(
        help: ArgumentHelp(
            "Mebibytes of history kept for all domains together, the oldest entries deleted first; at least "
                + "--history-bytes (env: \(EnvironmentVariable.historyTotalBytes)).", valueName: "MiB"))
    var historyTotalBytes: Int = Environment.value(.historyTotalBytes, 1024)

    @Option(
        help: ArgumentHelp(
            "How long the history of a removed domain is kept after its removal, e.g. 30d, 12h "
                + "(env: \(EnvironmentVariable.historyRetention)).", valueName: "duration"))
    var historyRetention: String = Environment.value(.historyRetention, "30d")

    @Option(
        help: ArgumentHelp(
            "How long the store's changes are kept for replicas to catch up with; a replica further behind reads "
                + "everything again, e.g. 7d (env: \(EnvironmentVariable.changesRetention)).", valueName: "duration"))
    var changesRetention: String = Environment.value(.changesRetention, "7d")

    mutating func validate() throws {
        guard historyRevisions >= 1 && historyRevisions <= 1_000_000 else {
            throw ValidationError("--history-revisions must be between 1 and 1000000")
        }
        let least = (HistoryPolicy.minimumBytesPerDomain + (1 << 20) - 1) >> 20
        guard historyBytes >= least && historyBytes <= 1 << 20 else {
            throw ValidationError(
                "--history-bytes must be between \(least) MiB (the largest site.json and its entry) and 1048576")
        }
        guard historyTotalBytes >= historyBytes && historyTotalBytes <= 1 << 30 else {
            throw ValidationError("--history-total-bytes must be at least --history-bytes (\(historyBytes) MiB)")
        }
        for (option, text) in [("--history-retention", historyRetention), ("--changes-retention", changesRetention)]
        where !(ServerOptions.seconds(text).map { $0 >= 1 && $0 <= 3_650 * 86_400 } ?? false) {
            throw ValidationError(
                "\(option) '\(text)' is not a duration from 1s to 3650d: write 30d, 12h or 90m")
        }
    }

    /// The policy these options describe, once validated.
    var policy: HistoryPolicy {
        HistoryPolicy(
            revisions: historyRevisions, bytesPerDomain: historyBytes << 20, totalBytes: historyTotalBytes << 20,
            retention: ServerOptions.seconds(historyRetention) ?? 30 * 86_400,
            changesRetention: ServerOptions.seconds(changesRetention) ?? 7 * 86_400)
    }
}

/// The variables of the history options, in the order of the options.
extension EnvironmentVariable {
    static let historyRevisions: Self = "AASA_SERVER_HISTORY_REVISIONS"
    static let historyBytes: Self = "AASA_SERVER_HISTORY_BYTES"
    static let historyTotalBytes: Self = "AASA_SERVER_HISTORY_TOTAL_BYTES"
    static let historyRetention: Self = "AASA_SERVER_HISTORY_RETENTION"
    static let changesRetention: Self = "AASA_SERVER_CHANGES_RETENTION"
}
