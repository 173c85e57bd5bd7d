import AASACore
import AASAMicroHTTPD
import AASAOpenSSL
import Foundation

/// Which certificate each folder serves after a load: its new one, or its last good one when the new files
/// fail (GnuTLS's refusals among them), and what to report about each.
struct CertificateSelection {
    var served: PersistentDictionary<String, ServedCertificate>
    /// The errors and warnings of each folder that has any.
    var findings: PersistentDictionary<String, [Diagnostic]>
    var diagnostics: [Diagnostic] = []
    /// Folders whose new files failed, so their last good certificate stays.
    var keptLastGood: [String] = []
    /// The folders whose served certificate is new, or gone.
    var changed: Set<String> = []

    /// `folders` are the folders found among those `read` (every folder when `nil`); the others keep what
    /// `catalog` had.
    init(folders: [CertificateDirectory.Folder], read: Set<String>?, previous catalog: CertificateCatalog, now: Date) {
        served = read == nil ? PersistentDictionary() : catalog.served
        findings = read == nil ? PersistentDictionary() : catalog.findings
        served.reserveCapacity(forKeys: folders.lazy.map(\.name))
        // At a start every folder is new, and there is nothing to look up, keep or forget.
        let first = catalog.served.isEmpty && catalog.findings.isEmpty
        if first { changed.reserveCapacity(folders.count) }
        for folder in folders { take(folder, previous: catalog, first: first, now: now) }
        // Folders read and not found are gone.
        let looked = read ?? Set(catalog.served.keys)
        guard !looked.isEmpty else { return }
        let found = Set(folders.map(\.name))
        for name in looked where !found.contains(name) {
            if catalog.served[name] != nil { changed.insert(name) }
            served[name] = nil
            findings[name] = nil
        }
    }

    /// Takes in `folder`: the certificate it serves now (its new one, its last good one in `catalog`, or none) and
    /// its findings. At the `first` load there is no last good one to look up.
    ///
    /// The folder is borrowed and its certificate read where it is (`folder.certificate!` once its credential is
    /// known to be there), and the certificate served is moved into the map: bound to names and chosen with `??`,
    /// each was one more copy of a dozen references.
    private mutating func take(
        _ folder: borrowing CertificateDirectory.Folder, previous catalog: CertificateCatalog, first: Bool, now: Date
    ) {
        let previous = first ? nil : catalog.served[folder.name]
        var current: ServedCertificate?
        if folder.unchanged, var previous {
            previous.loadedAt = now
            current = previous
        } else if let credential = folder.certificate?.credential {
            if var previous, previous.isSame(as: folder.certificate!) {
                // Parsed again (its findings were due), found the same: the table keeps it, and the next
                // load compares against these findings.
                previous.loadedAt = now
                previous.known = folder.certificate!.known
                current = previous
            } else {
                current = ServedCertificate(folder.certificate!, credential: credential, loadedAt: now)
                changed.insert(folder.name)
            }
        }
        diagnostics += folder.diagnostics
        if current == nil, previous != nil { keptLastGood.append(folder.name) }
        if current == nil { current = previous }
        served[folder.name] = current.take()
        let standing = folder.diagnostics.filter { $0.severity != .note }
        if !standing.isEmpty {
            findings[folder.name] = standing
        } else if !first {
            findings[folder.name] = nil
        }
    }
}
