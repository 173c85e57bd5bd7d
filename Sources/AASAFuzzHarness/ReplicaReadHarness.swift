import AASACore
import Foundation

/// The `replica-read` target: bytes as a replica reads back what it or the fleet wrote, each through the decoder the
/// server runs on them:
/// - a record of the store snapshot (`--store-cache`): ``SnapshotRecord/init(bytes:)``, and its head as a start
///   reads it first (``SnapshotRecord/revision(head:)``);
/// - the frames of a pack of the snapshot, the input after the pack's magic (``SnapshotFrame/frames(in:maximumRecordBytes:)``);
/// - `certs/acme/pacing.json` (``PacingState/init(json:)``), and `certs/acme/orders.json` member by member, the store's
///   `acme_orders` history whole (``ACMEHistory/init(json:)``);
/// - the input split at its NUL bytes into the text cells PostgreSQL sends (a missing cell is `NULL`): a listing's
///   revision (``StoredRevision/read(changeID:epochSeconds:)``) and an `acme_pacing` row
///   (``PacingState/init(tokens:refilledAt:pausedUntil:pauseReason:)``).
///
/// Properties checked beyond "no crash, no hang": every failure is a named error (what, its value, the range it must
/// lie in); nothing decoded holds a value out of range; a record read whole agrees with its head and writes back the
/// same bytes; a pack's frames follow each other from its magic to where they are said to end, each writing back the
/// bytes it was read from; a history and a pacing state written as JSON read back equal.
enum ReplicaReadHarness {
    static func run(_ bytes: [UInt8]) throws(InvariantViolation) {
        try snapshotRecord(bytes)
        try snapshotPack(SnapshotFrame.fileMagic + bytes)
        if let json = JSONValue.parse(bytes) { try stateFiles(json) }
        let cells = bytes.split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        func cell(_ index: Int) -> String? { index < cells.count ? cells[index] : nil }
        do {
            let revision = try StoredRevision.read(changeID: cell(0), epochSeconds: cell(1))
            try check(revision.changeID >= 1, "a listing's change id \(revision.changeID) is below 1")
            try inRange(revision.changedAt, "a listing's time")
        } catch {
            try named(error)
        }
        do {
            try inRange(
                try PacingState(tokens: cell(0), refilledAt: cell(1), pausedUntil: cell(2), pauseReason: cell(3)),
                "an acme_pacing row")
        } catch {
            try named(error)
        }
    }

    private static func snapshotRecord(_ bytes: [UInt8]) throws(InvariantViolation) {
        let head = Result { () throws(SnapshotRecord.Failure) in
            try SnapshotRecord.revision(head: Array(bytes.prefix(SnapshotRecord.headLength)))
        }
        switch Result(catching: { () throws(SnapshotRecord.Failure) in try SnapshotRecord(bytes: bytes) }) {
        case .success(let record):
            try inRange(record.changedAt, "a record's time")
            guard case .success(let revision) = head, revision.changeID == record.changeID,
                revision.changedAt == record.changedAt
            else { throw InvariantViolation(.replicaRead, "a record's head reads \(head), the whole record not") }
            try check(record.bytes == bytes, "a record read whole writes back other bytes")
        case .failure(.value(let failure)):
            try named(failure)
            guard case .failure(.value) = head else {
                throw InvariantViolation(.replicaRead, "a record whose time is out of range has a head that reads")
            }
        case .failure(.notARecord):
            // Left out as a file that is not a record.
            break
        }
    }

    private static func snapshotPack(_ pack: [UInt8]) throws(InvariantViolation) {
        let read = SnapshotFrame.frames(in: pack, maximumRecordBytes: 1 << 16)
        var offset = SnapshotFrame.fileMagic.count
        for (at, frame) in read.frames {
            let bytes = frame.bytes
            try check(at == offset, "a pack's frame at \(at), not where the one before it ends (\(offset))")
            try check(Array(pack[at..<min(pack.count, at + bytes.count)]) == bytes, "a frame writes back other bytes")
            offset += bytes.count
        }
        try check(read.validEnd == offset, "a pack's frames end at \(offset), said to end at \(read.validEnd)")
        try check(
            (read.problem == nil) == (read.validEnd == pack.count),
            "a pack cut short at \(read.validEnd) with no reason")
    }

    private static func stateFiles(_ json: JSONValue) throws(InvariantViolation) {
        try decoding("pacing.json") {
            let state = try PacingState(json: json)
            try inRange(state, "pacing.json")
            let again = try PacingState(json: JSONValue.parse(JSONWriter(style: .pretty).bytes(state.json)) ?? .null)
            try check(again == state, "pacing.json written and read back differs: \(state) \(again)")
        }
        var histories = [json]
        if case .object(let members) = json { histories += members.map(\.value.value) }
        for value in histories {
            try decoding("a history") {
                let history = try ACMEHistory(json: value)
                try check(ACMEHistory.failureRange.contains(history.failures), "failures \(history.failures)")
                for date in history.failedValidations
                    + [history.nextAttempt, history.windowCheckedAt].compactMap({ $0 })
                {
                    try inRange(date, "a history's time")
                }
                let again = try ACMEHistory(
                    json: JSONValue.parse(JSONWriter(style: .compact).bytes(history.json)) ?? .null)
                try check(again == history, "a history written and read back differs: \(history) \(again)")
            }
        }
    }

    /// Runs `body`, a decode of `what` and its checks: a violation it finds stands, a decoder's failure must be named
    /// (``named(_:)``), and any other error is a violation.
    private static func decoding(_ what: String, _ body: () throws -> Void) throws(InvariantViolation) {
        do {
            try body()
        } catch let failure as CheckedNumber.Failure {
            try named(failure)
        } catch let violation as InvariantViolation {
            throw violation
        } catch {
            throw InvariantViolation(.replicaRead, "\(what): an error that is not named: \(error)")
        }
    }

    /// A failure must say what was read, as what, and what it must be.
    private static func named(_ error: any Error) throws(InvariantViolation) {
        guard let failure = error as? CheckedNumber.Failure else {
            throw InvariantViolation(.replicaRead, "an error that is not named: \(error)")
        }
        let text = failure.description
        try check(
            !failure.field.isEmpty && !failure.value.isEmpty && !failure.expected.isEmpty
                && text.contains(failure.field)
                && text.contains(failure.expected), "a failure that does not name what is wrong: \(text)")
    }

    private static func inRange(_ date: Date, _ what: String) throws(InvariantViolation) {
        try check(CheckedNumber.timeRange.contains(date.timeIntervalSince1970), "\(what) \(date.timeIntervalSince1970)")
    }

    private static func inRange(_ state: PacingState, _ what: String) throws(InvariantViolation) {
        try check(PacingState.tokenRange.contains(state.tokens), "\(what): tokens \(state.tokens)")
        try inRange(state.refilledAt, what)
        if let paused = state.pausedUntil { try inRange(paused, what) }
    }

    private static func check(_ condition: Bool, _ what: @autoclosure () -> String) throws(InvariantViolation) {
        guard condition else { throw InvariantViolation(.replicaRead, "out of range or inconsistent: \(what())") }
    }
}
