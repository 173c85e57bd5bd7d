public import AASACore
import AASAOpenSSL
public import Foundation

/// `aasa-server sign`: CMS-signs any file for operators who host it elsewhere (spec §4), with the same
/// identity checks the server runs.
public struct FileSigning: Sendable {
    /// The file to sign (its bytes are signed exactly).
    public var input: String
    /// PEM certificate, leaf first (may hold intermediates).
    public var certificate: String
    /// PEM private key.
    public var key: String
    /// PEM intermediates, if not in `certificate`.
    public var chain: String?
    /// The signed file to write (DER).
    public var output: String
    /// The domain the certificate must cover, if given.
    public var domain: String?

    /// Creates a signing job.
    public init(input: String, certificate: String, key: String, chain: String?, output: String, domain: String?) {
        self.input = input
        self.certificate = certificate
        self.key = key
        self.chain = chain
        self.output = output
        self.domain = domain
    }

    /// Signs and writes the output; returns warnings, or throws every reason it cannot.
    public func run(now: Date = Date()) throws(DiagnosticsError) -> (bytes: Int, diagnostics: [Diagnostic]) {
        guard let data = FileManager.default.contents(atPath: input) else {
            throw DiagnosticsError([
                Diagnostic(.error, rule: .missingFile, "cannot read '\(input)'", file: input, hint: "check the path")
            ])
        }
        let (found, problems) = AssociationSigner.readIdentity(
            certificate: certificate, key: key, chain: chain, domain: domain)
        guard let identity = found else { throw DiagnosticsError(problems) }
        var diagnostics = AssociationSigner.check(identity, domain: domain, now: now, knownRoots: [])
        // Without a trust store to consult, a leaf issued straight by a root is only a warning here.
        diagnostics = diagnostics.map { finding in
            guard finding.rule == .signingChain, identity.chain.intermediates.isEmpty else { return finding }
            var warning = finding
            warning.severity = .warning
            return warning
        }
        guard !diagnostics.hasErrors else { throw DiagnosticsError(diagnostics) }
        let content = Array(data)
        if content.starts(with: [0xEF, 0xBB, 0xBF]) {
            diagnostics.append(
                Diagnostic(
                    .warning, rule: .bom, "the file starts with a byte order mark, which is signed too", file: input,
                    hint: "remove it; the signed JSON must start with {"))
        }
        let signed: [UInt8]
        do {
            signed = try CMSSigner(
                certificate: identity.chain.leaf, key: identity.key, intermediates: Array(identity.chain.intermediates)
            ).sign(content)
        } catch {
            throw DiagnosticsError(diagnostics + [Diagnostic(.error, rule: .signingFailed, "\(error)", file: input)])
        }
        if signed.count > AssociationGenerator.sizeLimit {
            diagnostics.append(
                Diagnostic(
                    .warning, rule: .fileSize,
                    "the signed file is \(signed.count) bytes; Apple stops reading at \(AssociationGenerator.sizeLimit)",
                    file: output))
        }
        do {
            try AtomicFile.write(signed, to: output)
        } catch {
            throw DiagnosticsError(
                diagnostics + [
                    Diagnostic(.error, rule: .writeFailed, "cannot write \(output): \(error)", file: output)
                ])
        }
        return (signed.count, diagnostics)
    }
}
