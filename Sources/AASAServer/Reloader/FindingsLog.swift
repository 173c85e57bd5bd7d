import AASACore
import Foundation
import Logging

/// Writes a load's findings to the log, at most ``CappedFindings/shownPerSource`` in full per domain or folder:
/// one tenant's thousand findings are a few lines, not a flood that hides the others'.
struct FindingsLog: Sendable {
    let logger: Logger

    /// Logs each domain's findings.
    func log(_ loaded: [LoadedDomain]) {
        for domain in loaded where !domain.diagnostics.isEmpty {
            log(CappedFindings(domain.diagnostics), source: domain.domain)
        }
    }

    /// Logs findings that are not a domain's (certificate folders, the whole load), capped per file's folder.
    func log(_ diagnostics: [Diagnostic]) {
        var order: [String] = []
        var bySource: [String: [Diagnostic]] = [:]
        for diagnostic in diagnostics {
            let source = diagnostic.file.map { ($0 as NSString).deletingLastPathComponent } ?? ""
            if bySource[source] == nil { order.append(source) }
            bySource[source, default: []].append(diagnostic)
        }
        for source in order { log(CappedFindings(bySource[source]!), source: source) }
    }

    private func log(_ findings: CappedFindings, source: String) {
        func log(_ severity: Diagnostic.Severity, _ metadata: Logger.Metadata) {
            switch severity {
            case .error: logger.error("config error", metadata: metadata)
            case .warning: logger.warning("config warning", metadata: metadata)
            case .note: logger.info("config note", metadata: metadata)
            }
        }
        for diagnostic in findings.shown { log(diagnostic.severity, ["diagnostic": "\(diagnostic.description)"]) }
        for more in findings.more {
            log(more.severity, ["source": "\(source)", "diagnostic": "\(CappedFindings.summary(of: more))"])
        }
    }
}
