import AASACore
import Foundation

extension Catalog {
    /// What turning a catalog into the next one did.
    struct Transition: Sendable {
        /// Every finding of the load: the domains' (or why the domains could not be listed), then the
        /// certificates'.
        var diagnostics: [Diagnostic]
        /// The domains whose served version changed.
        var changed: [String]
        /// The new versions to compare with those they replaced, once published (``ChangeComparer``).
        var compare: [ChangeComparer.Job]
        /// Whether the SNI table is a new one.
        var certificatesChanged: Bool
    }

    /// Takes in `load` (see ``apply(_:absent:complete:at:removalGrace:)``): clean domains replace their published
    /// version, broken ones keep theirs, folders gone for `removalGrace` are unpublished, each certificate folder
    /// keeps its last good certificate, and the status describes the load.
    mutating func apply(_ load: Load, trigger: ReloadTrigger, removalGrace: Duration) -> Transition {
        var diagnostics: [Diagnostic] = []
        var changed: [String] = []
        var compare: [ChangeComparer.Job] = []
        var failed = false
        var read: [String]?
        switch load.domains {
        case .success(let loaded):
            diagnostics = loaded.flatMap(\.diagnostics)
            let complete = load.scope.domains == nil
            (changed, compare) = apply(
                loaded, absent: load.absent, complete: complete, at: load.time, removalGrace: removalGrace)
            if !complete { read = loaded.map(\.domain) + load.absent }
        case .failure(let error):
            diagnostics = [error]
            failed = true
            read = []
        }
        let table = certificates.table
        if let (next, certificateDiagnostics) = load.certificates {
            certificates = next
            diagnostics += certificateDiagnostics
        }
        updateStatus(
            domains: read.map { Array(Set($0 + changed)) }, started: started ?? load.time, trigger: trigger,
            at: load.time, diagnostics: diagnostics, failed: failed)
        return Transition(
            diagnostics: diagnostics, changed: changed, compare: compare,
            certificatesChanged: certificates.table !== table
        )
    }
}
