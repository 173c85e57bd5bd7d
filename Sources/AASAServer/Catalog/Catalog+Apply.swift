import AASACore
import Foundation

extension Catalog {
    /// What turning a catalog into the next one did.
    struct Transition: Sendable {
        /// The load's domains as they were taken in: signed, or why the domains could not be listed.
        var domains: Result<[LoadedDomain], Diagnostic>
        /// Every finding of the load: the domains' (or why the domains could not be listed), then the
        /// certificates'.
        var diagnostics: [Diagnostic]
        /// The domains whose served version changed.
        var changed: [String]
        /// The new versions to compare with those they replaced, once published (``ChangeComparer``).
        var compare: [ChangeComparer.Job]
        /// What taking in the certificates did; `nil` when the load read none.
        var certificates: CertificateIntake?
    }

    /// Takes in `load`: first its certificates (each folder keeps its last good certificate, each domain is covered
    /// by the certificate its handshakes get, ``CertificateCatalog/take(_:only:domains:allDomains:isConfigured:temporary:location:at:)``),
    /// then its domains signed with them by `signer` (without one, as they are), then the domains as
    /// ``apply(_:absent:complete:at:removalGrace:)`` says: clean domains replace their published version, broken
    /// ones keep theirs, folders gone for `removalGrace` are unpublished. The status describes the load.
    ///
    /// Consumes `load`: the signed domains replace those read, rather than being kept beside them.
    mutating func apply(
        _ load: consuming Load, signer: (any LoadSigner)? = nil, trigger: ReloadTrigger, removalGrace: Duration
    ) -> Transition {
        let complete = load.scope.domains == nil
        var intake: CertificateIntake?
        if let read = load.certificates {
            intake = takeCertificates(read, of: load)
        }
        var diagnostics: [Diagnostic] = []
        var changed: [String] = []
        var compare: [ChangeComparer.Job] = []
        var failed = false
        var read: [String]?
        let signing = load.certificates.map { _ in certificates }
        var domains = load.domains
        load.domains = .success([])
        if let signer { domains = domains.map { signer.sign($0, with: signing, at: load.time) } }
        switch domains {
        case .success(let loaded):
            diagnostics = loaded.flatMap(\.diagnostics)
            (changed, compare) = apply(
                loaded, absent: load.absent, complete: complete, at: load.time, removalGrace: removalGrace)
            if !complete { read = loaded.map(\.domain) + load.absent }
        case .failure(let error):
            diagnostics = [error]
            failed = true
            read = []
        }
        diagnostics += intake?.diagnostics ?? []
        updateStatus(
            domains: read.map { Array(Set($0 + changed)) }, started: started ?? load.time, trigger: trigger,
            at: load.time, diagnostics: diagnostics, failed: failed)
        return Transition(
            domains: domains, diagnostics: diagnostics, changed: changed, compare: compare, certificates: intake)
    }

    /// Takes the certificates `read` by `load` into ``certificates``, covering the domains the catalog has once the
    /// load is taken in: those it read, and the others it had that the load did not find gone.
    private mutating func takeCertificates(_ read: CertificateRead, of load: Load) -> CertificateIntake {
        let location = load.certificatesLocation
        let temporary = load.temporaryCertificates
        guard load.scope.domains != nil else {
            // Every domain: those listed, or the last load's when they could not be listed.
            let all = (try? load.domains.get())?.map(\.domain) ?? loaded.keys
            return certificates.take(
                read, only: load.scope.certificates, domains: all, temporary: temporary, location: location,
                at: load.time)
        }
        let present = Set((try? load.domains.get())?.map(\.domain) ?? [])
        let gone = Set(load.absent)
        let previous = loaded
        // Only configured domains get coverage (and, with ACME, a temporary certificate): not a stray file of the
        // config folder, nor a name a certificate lists that no domain has.
        return certificates.take(
            read, only: load.scope.certificates, domains: Array(present),
            allDomains: { previous.keys.filter { !gone.contains($0) } + present.subtracting(previous.keys) },
            isConfigured: { present.contains($0) || (previous[$0] != nil && !gone.contains($0)) },
            temporary: temporary, location: location, at: load.time)
    }
}
