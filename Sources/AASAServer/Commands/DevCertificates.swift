import AASACore
import AASAOpenSSL
import Foundation

/// Local development certificates: a private CA in `certs/dev-ca/` and ECDSA P-256 leaf certificates for
/// each domain, so a developer can test universal links on a real device (spec §3.8, developer mode).
public struct DevCertificates: Sendable {
    /// What was created.
    public struct Report: Sendable {
        /// Path of the CA certificate to install on devices.
        public var caCertificatePath: String
        /// Names that got a new certificate.
        public var issued: [String]
        /// Names that already had a certificate covering them.
        public var kept: [String]
    }

    /// The certificate folder.
    public var certificateDirectory: String

    /// Creates the helper for `certificateDirectory`.
    public init(certificateDirectory: String) {
        self.certificateDirectory = certificateDirectory
    }

    /// Makes sure each of `names` (plus `localhost`) has a certificate, issuing from the dev CA
    /// (created on first use, key mode 0600) for those without one, or for all with `replace`, on every processor.
    /// The first name that cannot be issued or written is the error; the others are written.
    public func ensure(names: [String], replace: Bool = false) throws -> Report {
        try FileManager.default.createDirectory(atPath: certificateDirectory, withIntermediateDirectories: true)
        let authority = try DevCertificateAuthority.loadOrCreate(
            directory: certificateDirectory + "/" + CertificateDirectory.devCAFolder)
        // Only certificates valid for at least another day count; one index lookup per name, because asking
        // every certificate about every name is quadratic and `certs dev` is run for thousands of domains.
        let existing = CertificateDirectory(path: certificateDirectory).load().certificates.filter {
            $0.notAfter > Date().addingTimeInterval(86_400)
        }
        let coverage = CertificateNameIndex(subjectAlternativeNames: existing.map(\.summary.subjectAlternativeNames))
        var report = Report(caCertificatePath: authority.certificatePath, issued: [], kept: [])
        var wanted: [String] = []
        var seen: Set<String> = []
        for name in names + ["localhost"] where seen.insert(name).inserted { wanted.append(name) }
        var issuing: [String] = []
        for name in wanted {
            if !replace && coverage.firstIndex(covering: name) != nil {
                report.kept.append(name)
            } else {
                issuing.append(name)
            }
        }
        // Each certificate is a key, a signature and two files of its own: thousands are issued on every processor.
        let directory = certificateDirectory
        let outcomes = issuing.concurrentMap { name -> Result<Void, any Error> in
            // localhost also gets the loopback addresses, so https://127.0.0.1 works from a browser.
            let sans = name == "localhost" ? ["localhost", "127.0.0.1", "::1"] : [name]
            return Result { _ = try authority.issue(names: sans).writeCertbotLayout(into: directory, name: name) }
        }
        for (name, outcome) in zip(issuing, outcomes) {
            try outcome.get()
            report.issued.append(name)
        }
        return report
    }

    /// What a developer needs next: where the CA is, how to trust it on an iPhone, and the entitlement
    /// lines for each domain (spec §2.9 entitlement syntax with `:port`, §3.8 `?mode=developer`).
    /// `domains` are each domain with the services its file declares (``AssociationFile/services``); a domain
    /// with none gets `applinks` and `webcredentials`.
    public static func instructions(report: Report, domains: [(domain: String, services: [String])], httpsPort: UInt16)
        -> String
    {
        var text = """
            Development CA: \(report.caCertificatePath)
            """
        if !report.issued.isEmpty { text += "\nIssued certificates for: \(report.issued.joined(separator: ", "))" }
        text += """


            To trust it on an iPhone or iPad:
              1. Send \(report.caCertificatePath) to the device (AirDrop or mail) and open it;
                 install the profile in Settings › General › VPN & Device Management.
              2. Enable full trust in Settings › General › About › Certificate Trust Settings.
              3. Turn on Settings › Developer › Associated Domains Development.
              The device must resolve each domain to this machine (e.g. a local DNS entry).

            Entitlement lines to paste (Xcode › Signing & Capabilities › Associated Domains):
            """
        let port = httpsPort == 443 ? "" : ":\(httpsPort)"
        for (domain, services) in domains {
            for service in services.isEmpty ? ["applinks", "webcredentials"] : services {
                text += "\n  \(service):\(domain)\(port)?mode=developer"
            }
        }
        return text + "\n"
    }
}
