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
        for folder in folders {
            let findings = folder.diagnostics
            let previous = first ? nil : catalog.served[folder.name]
            var current: ServedCertificate?
            if folder.unchanged, var previous {
                previous.loadedAt = now
                current = previous
            } else if let certificate = folder.certificate, let credential = certificate.credential {
                if var previous, previous.isSame(as: certificate) {
                    // Parsed again (its findings were due), found the same: the table keeps it, and the next
                    // load compares against these findings.
                    previous.loadedAt = now
                    previous.known = certificate.known
                    current = previous
                } else {
                    current = ServedCertificate(certificate, credential: credential, loadedAt: now)
                    changed.insert(folder.name)
                }
            }
            diagnostics += findings
            if current == nil, previous != nil { keptLastGood.append(folder.name) }
            let serving = current ?? previous
            served[folder.name] = serving
            let standing = findings.filter { $0.severity != .note }
            if !standing.isEmpty {
                self.findings[folder.name] = standing
            } else if !first {
                self.findings[folder.name] = nil
            }
        }
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
}
