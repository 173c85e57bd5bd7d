public import AASACore
import AASAOpenSSL
public import Foundation

/// The certificate findings of `check`: for each domain, a certificate must exist, match its key, cover
/// the name, and not expire within two weeks (Apple's CDN and devices refuse invalid TLS, spec §3.2); no
/// private key (the development CA's included) may be readable by other users.
public struct CertificateCheck: Sendable {
    /// Warn when a certificate expires within this many days.
    public static let expiryWarningDays = 14

    /// The certificate folder.
    public var directory: String

    /// Creates a check of `directory`.
    public init(directory: String) {
        self.directory = directory
    }

    /// Every finding for `domains`, and for the folders themselves (unreadable files, key mismatches).
    public func check(domains: [String], now: Date = Date()) -> [Diagnostic] {
        let folder = CertificateDirectory(path: directory)
        // Read as the server reads it: what GnuTLS refuses to import (a key that is not the leaf's, an unreadable
        // key) is that folder's error here too.
        let (certificates, folderFindings) = folder.load(now: now, importing: true)
        var found = folderFindings
        if let devCAKey = folder.devCAKeyFinding() { found.append(devCAKey) }
        for domain in domains {
            let ownFolder = CertificateFile.chain.path(in: directory + "/" + domain)
            if let own = certificates.first(where: { $0.folderName == domain }), !own.covers(domain) {
                found.append(
                    Diagnostic(
                        .error, rule: .certificateName,
                        "the certificate in \(domain)/ covers \(own.names.joined(separator: ", ")), not \(domain)",
                        file: own.fullchainPath, hint: "issue a certificate whose SAN lists \(domain)"))
                continue
            }
            guard let certificate = certificates.first(where: { $0.covers(domain) }) else {
                if !found.contains(where: { $0.file?.hasPrefix(directory + "/" + domain + "/") == true }) {
                    found.append(
                        Diagnostic(
                            .error, rule: .certificateMissing, "no certificate covers \(domain)", file: ownFolder,
                            hint: "put fullchain.pem and privkey.pem in \(directory)/\(domain)/ (certbot's layout), "
                                + "or run `aasa-server certs dev` for local testing"))
                }
                continue
            }
            let days = CheckedNumber.clamped(
                certificate.notAfter.timeIntervalSince(now) / 86_400, to: Int.min...Int.max)
            if certificate.notAfter < now {
                found.append(
                    Diagnostic(
                        .error, rule: .certificateExpired,
                        "the certificate for \(domain) expired on \(Self.day(certificate.notAfter))",
                        file: certificate.fullchainPath, hint: "renew it; Apple refuses expired certificates"))
            } else if days < Self.expiryWarningDays {
                found.append(
                    Diagnostic(
                        .warning, rule: .certificateExpiring,
                        "the certificate for \(domain) expires in \(days) day\(days == 1 ? "" : "s") (\(Self.day(certificate.notAfter)))",
                        file: certificate.fullchainPath, hint: "renew it now; certbot renews 30 days ahead"))
            }
        }
        // Expired certificates are a warning when merely loaded; for a domain they serve, an error above.
        return found.filter { !($0.rule == .certificateExpired && $0.severity == .warning) }
    }

    static func day(_ date: Date) -> String {
        date.formatted(.iso8601.year().month().day())
    }
}

extension Rule {
    /// Reported by `CertificateCheck`; also by `CertificateDirectory`.
    public static let certificateMissing = Rule(
        "certificate-missing", .error,
        "`check` only: no certificate in `certs/` covers the domain, or `certs/<domain>/` holds one for other names.")

    /// Reported by `CertificateCheck`.
    public static let certificateName = Rule(
        "certificate-name", .error,
        "`check` only: no certificate in `certs/` covers the domain, or `certs/<domain>/` holds one for other names.")

    /// Reported by `CertificateCheck`; also by `CertificateDirectory`.
    public static let certificateExpired = Rule(
        "certificate-expired", .error, "The domain's certificate has expired, or expires within 14 days.")

    /// Reported by `CertificateCheck`.
    public static let certificateExpiring = Rule(
        "certificate-expiring", .warning, "The domain's certificate has expired, or expires within 14 days.")

    /// The rules of the certificates in `certs/`, in the order of the docs table: their part of `Rule.all`.
    package static let certificateRules: [Rule] = [
        .certificateMissing,
        .certificateName,
        .certificateKeyMismatch,
        .certificateInvalid,
        .privateKeyPermissions,
        .certificateExpired,
        .certificateExpiring,
    ]
}
