import AASACore

/// The `reload-comparison` target: two versions of a domain's `site.json` (the input split at its first NUL byte,
/// which JSON never holds; without one, the input against itself), loaded as the server loads a domain and
/// compared as a reload compares them (``DomainDiff`` of the published versions, within
/// ``ComparisonBudget/Limits/standard``).
///
/// Properties checked beyond "no crash, no hang, no memory past libFuzzer's limit":
/// - the comparison uses no more than its budget allows, and one cut short says "not compared: too complex";
/// - a version compared with itself changes no URL's answer.
enum ReloadComparisonHarness {
    static func run(_ bytes: [UInt8]) throws(InvariantViolation) {
        let split = bytes.firstIndex(of: 0)
        let oldBytes = split.map { Array(bytes[..<$0]) } ?? bytes
        let newBytes = split.map { Array(bytes[($0 + 1)...]) } ?? bytes
        let domain = SiteConfigHarness.domain
        func published(_ bytes: [UInt8]) -> PublishedDomain? {
            SiteConfigLoader().loadDomain(domain: domain, source: SourceText(name: "\(domain)/site.json", bytes: bytes))
                .published
        }
        guard let old = published(oldBytes), let new = published(newBytes) else { return }
        let diff = DomainDiff(
            domain: domain, old: DiffSide(published: old), new: DiffSide(published: new), limits: .standard)
        let used = diff.budget
        let limits = used.limits
        guard used.states <= limits.states, used.edges <= limits.edges, used.bytes <= limits.bytes,
            used.steps <= limits.steps
        else {
            throw InvariantViolation(
                .reloadComparison,
                "the comparison used \(used.states) states, \(used.edges) edges, \(used.bytes) bytes, \(used.steps) steps, past its limits"
            )
        }
        if !diff.isComplete && !diff.summary.hasPrefix(DomainDiff.tooComplex) {
            throw InvariantViolation(.reloadComparison, "a comparison cut short does not say so: \(diff.summary)")
        }
        if split == nil, diff.isComplete, !diff.changes.isEmpty {
            throw InvariantViolation(
                .reloadComparison,
                "a version compared with itself changes URLs: \(diff.changes.map(\.description).joined(separator: "; "))"
            )
        }
    }
}
