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

    /// Logs what taking in the certificates did: the folders that keep their last good certificate, the findings,
    /// why the read was not taken, and the domains whose handshakes get the default certificate (`defaultEntry`).
    func log(_ intake: CertificateIntake, defaultEntry: CertificateEntryID?) {
        for folder in intake.keptLastGood {
            logger.warning(
                "certificate folder failed to load; serving its last good certificate",
                metadata: ["folder": "\(folder)"])
        }
        log(intake.diagnostics.filter { $0 != intake.refusal })
        if let refusal = intake.refusal {
            let message: Logger.Message =
                refusal.rule == .noCertificates
                ? "no usable certificate; keeping the current ones"
                : "certificates not reloaded; keeping the current ones"
            logger.error(message, metadata: ["diagnostic": "\(refusal)"])
        }
        for domain in intake.uncovered {
            logger.warning(
                "no certificate covers this domain; clients will get the default certificate and fail to verify it",
                metadata: ["domain": "\(domain)", "default": "\(defaultEntry?.tableID ?? "")"])
        }
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
