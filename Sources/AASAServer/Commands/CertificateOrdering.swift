public import AASACore
import AASAMicroHTTPD
import AASAOpenSSL
import Foundation
public import Logging

/// `aasa-server certs acme`: what `serve --acme` does for the configured domains, once: every domain without a
/// usable certificate (and every one of the server's due for renewal) is ordered, then the command exits.
///
/// The CA's http-01 requests are answered by a listener of its own (`--standalone`, on the HTTP port), or by a
/// running server that answers the webroot the answers are written to (`serve --acme-webroot DIR`).
public struct CertificateOrdering {
    /// How the CA's challenges are answered.
    public enum Answering: Sendable {
        /// A temporary plain HTTP listener on this port and address.
        case standalone(port: UInt16, address: String?)
        /// Files in this webroot, which a running server answers.
        case webroot(String)
        /// No http-01 answers: every name is answered with dns-01 (``ACMESettings/dns``).
        case dnsOnly
    }

    /// The ACME settings.
    public var settings: ACMESettings
    /// The certificate folder.
    public var certificateDirectory: String
    /// How the challenges are answered.
    public var answering: Answering

    /// Creates the command's work.
    public init(settings: ACMESettings, certificateDirectory: String, answering: Answering) {
        self.settings = settings
        self.certificateDirectory = certificateDirectory
        self.answering = answering
    }

    /// What happened to one domain.
    public struct Line: Sendable {
        /// The domain.
        public var domain: String
        /// Its certificate after the run.
        public var status: DomainCertificateStatus?
        /// Why it got none, as a finding (rule `acme-order`).
        public var failure: Diagnostic?
    }

    /// Orders what `domains` need and returns a line per domain; throws a finding (`acme-setup`) when it cannot
    /// start at all (no account, the port in use).
    public func run(domains: [String], logger: Logger) throws(Diagnostic) -> [Line] {
        let responder: (any ChallengeResponder)?
        if case .webroot(let root) = answering { responder = WebrootChallenges(root: root) } else { responder = nil }
        let manager: ACMEManager
        do {
            manager = try ACMEManager.make(
                settings: settings, certificateDirectory: certificateDirectory, logger: logger, responder: responder)
        } catch {
            throw Diagnostic(
                .error, rule: .acmeSetup, error.message + (error.url.map { " (\($0))" } ?? ""), hint: error.hint)
        }
        var listener: HTTPListener?
        if case .standalone(let port, let address) = answering {
            do {
                let routes = ChallengeRoutes(SiteRoutes([]), store: manager.challenges, webroot: nil)
                listener = try HTTPListener(
                    configuration: ListenerConfiguration(port: port, bindAddress: address, tls: nil),
                    snapshot: RouteSnapshot(routes))
            } catch {
                throw Diagnostic(
                    .error, rule: .acmeSetup,
                    "--standalone could not listen on port \(port): \((error as? HTTPListenerError)?.reason ?? "\(error)")",
                    hint: "stop what uses the port, or answer through a running server with --acme-webroot")
            }
        }
        defer { listener?.stop(timeout: .seconds(1)) }
        let directory = CertificateDirectory(path: certificateDirectory)
        func served() -> [ACMEManager.ServedCertificate] {
            directory.load().certificates.map {
                ACMEManager.ServedCertificate(
                    folder: $0.folderName, subjectAlternativeNames: $0.summary.subjectAlternativeNames,
                    notBefore: $0.summary.notBefore, notAfter: $0.notAfter)
            }
        }
        manager.update(domains: domains, certificates: served())
        let failures = Dictionary(
            manager.runDue().map { ($0.domain, $0.failure) }, uniquingKeysWith: { first, _ in first })
        // What the folder holds now, as a server's reload would read it.
        manager.update(domains: domains, certificates: served())
        let statuses = manager.statuses
        return domains.map { domain in
            Line(
                domain: domain, status: statuses[domain],
                failure: failures[domain].flatMap { failure in
                    failure.map {
                        Diagnostic(
                            .error, rule: .acmeOrder, $0.message + ($0.url.map { " (\($0))" } ?? ""), hint: $0.hint)
                    }
                })
        }
    }
}

extension Rule {
    /// Reported by `CertificateOrdering`; also by `Server`.
    public static let acmeSetup = Rule(
        "acme-setup", .error,
        "`--acme` cannot run: no plain HTTP listener for the challenges, an unreadable `--acme-ca-file`, or an account key that cannot be read or created."
    )

    /// Reported by `CertificateOrdering`.
    public static let acmeOrder = Rule(
        "acme-order", .error,
        "`certs acme` could not obtain a certificate for a domain: the CA's problem document, an unreachable CA, or a challenge the CA could not validate, with the URL it tried."
    )
}
