public import AASACore
public import AASAOpenSSL
public import Foundation
import Synchronization

/// Signs the association file of every domain that turns `signing` on, when the domain loads (spec §4),
/// and checks the signing identity: key, expiry, name, chain, key size and the signed size.
///
/// A domain whose signature cannot be made gets errors, so it is not published: at start the server
/// refuses to start, and on reload the domain keeps its last good (signed) version.
public struct AssociationSigner: Sendable {
    /// The certificate folder (certbot layout), where the default identity comes from.
    public var certificateDirectory: String
    /// Earlier signatures, reused while the content and identity are unchanged.
    public var cache: SignatureCache

    /// Creates a signer reading identities from `certificateDirectory`.
    public init(certificateDirectory: String, cache: SignatureCache = SignatureCache()) {
        self.certificateDirectory = certificateDirectory
        self.cache = cache
    }

    /// A certificate chain and key that can sign for a domain, and where they came from.
    public struct Identity: Sendable {
        /// Leaf first, then intermediates.
        public var chain: CertificateChain
        /// The leaf's private key.
        public var key: PrivateKey
        /// The certificate file, for messages.
        public var certificateFile: String
        /// The key file, for messages.
        public var keyFile: String
        /// The identity's bytes, to notice a change.
        var fingerprint: String
    }

    /// Signs every domain in `loaded` that has signing on and no errors so far; appends the findings.
    ///
    /// The certificate folder and the development CA are read once for all of them, and only when a domain signs
    /// with its TLS certificate (read for each signing domain, they would make a load quadratic in the domains when
    /// thousands sign). The domains are signed on every processor.
    public func sign(_ loaded: [LoadedDomain], now: Date = Date()) -> [LoadedDomain] {
        sign(loaded, now: now, certificates: nil)
    }

    /// ``sign(_:now:)`` with the TLS certificates a server's load serves (`nil`: the folder is read here, when a
    /// domain needs it).
    func sign(_ loaded: [LoadedDomain], now: Date, certificates: SigningCertificates?) -> [LoadedDomain] {
        // Asked of each domain where the array keeps it: `contains(where:)` hands out a copy of each.
        let signs = loaded.withUnsafeBufferPointer { loaded in
            loaded.indices.contains { Self.signing(loaded[$0]) != nil }
        }
        guard signs else { return loaded }
        let tls =
            loaded.contains(where: Self.signsWithTLSCertificate)
            ? certificates ?? SigningCertificates.read(certificateDirectory) : nil
        let roots = knownRoots()
        return loaded.concurrentMap { domain in
            guard let signing = Self.signing(domain), let generated = domain.generated else { return domain }
            var domain = domain
            let (signed, findings) = sign(
                generated.bytes, domain: domain.domain, signing: signing, siteFile: domain.file, now: now,
                certificates: tls, knownRoots: roots)
            domain.signedAssociationFile = signed
            domain.diagnostics += findings
            return domain
        }
    }

    /// The signing `domain` asks for, when it is signed: enabled, its file generated, no error found.
    static func signing(_ domain: LoadedDomain) -> SigningConfig? {
        guard let signing = domain.configStorage?.value.signing, signing.enabled, domain.generated != nil,
            !domain.diagnostics.hasErrors
        else { return nil }
        return signing
    }

    /// Whether `domain` is signed with its TLS certificate (its signing names no certificate or no key of its own),
    /// so a signing needs the certificate folder's certificates.
    static func signsWithTLSCertificate(_ domain: LoadedDomain) -> Bool {
        signing(domain).map { $0.certificate == nil || $0.key == nil } ?? false
    }

    /// Signs `content` for `domain`; the signature or every reason it cannot be made. `certificates` are the TLS
    /// certificates of this load (the folder is read here when `nil`), `knownRoots` the development CA (likewise).
    func sign(
        _ content: [UInt8], domain: String, signing: SigningConfig, siteFile: String, now: Date,
        certificates: SigningCertificates? = nil, knownRoots: [X509Certificate]? = nil
    ) -> ([UInt8]?, [Diagnostic]) {
        let (found, identityProblems) = identity(
            for: domain, signing: signing, siteFile: siteFile, certificates: certificates)
        guard let identity = found else { return (nil, identityProblems) }
        var findings = Self.check(identity, domain: domain, now: now, knownRoots: knownRoots ?? self.knownRoots())
        guard !findings.hasErrors else { return (nil, findings) }
        let cacheKey = SHA256.hex(content) + "|" + identity.fingerprint
        let signed: [UInt8]
        if let cached = cache.signature(domain: domain, key: cacheKey) {
            signed = cached
        } else {
            do {
                signed = try CMSSigner(
                    certificate: identity.chain.leaf, key: identity.key,
                    intermediates: Array(identity.chain.intermediates)
                ).sign(content)
            } catch {
                return (
                    nil,
                    findings + [
                        Diagnostic(
                            .error, rule: .signingFailed, "cannot sign the file for \(domain): \(error)",
                            file: identity.certificateFile)
                    ]
                )
            }
            cache.store(signed, domain: domain, key: cacheKey)
        }
        if signed.count > AssociationGenerator.sizeLimit {
            findings.append(
                Diagnostic(
                    .error, rule: .fileSize,
                    "the signed file for \(domain) is \(signed.count) bytes (\(content.count) unsigned); Apple stops "
                        + "reading at \(AssociationGenerator.sizeLimit) (spec §3.5)",
                    file: siteFile,
                    hint:
                        "the limit applies to the signed size: shrink the config, or leave out intermediates it does not need"
                ))
            return (nil, findings)
        }
        return (signed, findings)
    }

    /// The identity `signing` names, or the TLS certificate for `domain` (from `certificates`, as this load serves
    /// them; from the certificate folder read here when `nil`).
    func identity(
        for domain: String, signing: SigningConfig, siteFile: String, certificates: SigningCertificates? = nil
    ) -> (Identity?, [Diagnostic]) {
        if let certificateName = signing.certificate, let keyName = signing.key {
            return namedIdentity(
                certificate: certificateName, key: keyName, chain: signing.chain, domain: domain, siteFile: siteFile)
        }
        let certificates = certificates ?? SigningCertificates.read(certificateDirectory)
        switch certificates.find(domain).flatMap({ identity(from: $0, domain: domain) }) {
        case .success(let identity): return (identity, [])
        case .failure(let problem): return (nil, [problem])
        }
    }

    /// The identity site.json names, relative to its folder: the tenant's own files, confined to the domain's
    /// folder and never the certificate folder.
    private func namedIdentity(certificate: String, key: String, chain: String?, domain: String, siteFile: String)
        -> (Identity?, [Diagnostic])
    {
        let folder = (siteFile as NSString).deletingLastPathComponent
        func resolve(_ name: String) -> String {
            name.hasPrefix("/") ? name : (folder as NSString).appendingPathComponent(name)
        }
        let confinement = DomainFolder(domain: domain, file: siteFile, excluding: [certificateDirectory]).confinement
        return Self.readIdentity(
            certificate: resolve(certificate), key: resolve(key), chain: chain.map(resolve), domain: domain,
            within: confinement ?? Confinement(folder: folder, excluded: [certificateDirectory]))
    }

    /// The signing identity of a TLS certificate's files: the whole chain and the key, parsed by OpenSSL.
    private func identity(from certificate: SigningCertificates.Files, domain: String) -> Result<Identity, Diagnostic> {
        let keyFile = certificate.keyPath
        let chain: CertificateChain
        do {
            chain = try CertificateChain(pemEncoded: certificate.chainPEM)
        } catch {
            return .failure(
                Diagnostic(
                    .error, rule: .signingIdentity, "cannot sign for \(domain): cannot read the chain: \(error)",
                    file: certificate.chainPath, hint: "fullchain.pem must hold PEM certificates, leaf first"))
        }
        guard let key = try? PrivateKey(pemEncoded: certificate.keyPEM) else {
            return .failure(
                Diagnostic(
                    .error, rule: .signingIdentity, "cannot sign for \(domain): cannot read the private key",
                    file: keyFile, hint: "privkey.pem must hold one unencrypted PEM private key"))
        }
        guard key.matches(chain.leaf) else {
            return .failure(
                Diagnostic(
                    .error, rule: .signingKeyMismatch,
                    "cannot sign for \(domain): \(certificateDirectory)/\(certificate.folderName)/ is not usable "
                        + "(privkey.pem does not belong to the certificate in fullchain.pem)",
                    file: keyFile, hint: "copy the key that was generated with this certificate"))
        }
        return .success(
            Identity(
                chain: chain, key: key, certificateFile: certificate.chainPath, keyFile: keyFile,
                fingerprint: SHA256.hex(certificate.chainPEM + certificate.keyPEM)))
    }

    /// Largest signing certificate, key or chain file read.
    public static let maximumIdentityFileBytes = 1 << 20

    /// Reads a named identity: `certificate` (leaf first, may hold intermediates), `key`, optional `chain`; each a
    /// regular file of at most ``maximumIdentityFileBytes`` inside `confinement` (a domain's folder; `nil` for files
    /// the operator names on the command line).
    public static func readIdentity(
        certificate: String, key: String, chain: String?, domain: String?, within confinement: Confinement? = nil
    ) -> (Identity?, [Diagnostic]) {
        var problems: [Diagnostic] = []
        func read(_ path: String, _ what: String) -> [UInt8]? {
            switch ConfinedFile.read(
                path, within: confinement ?? .anywhere, maximumBytes: maximumIdentityFileBytes)
            {
            case .success(let contents): return contents.bytes
            case .failure(.missing), .failure(.unreadable):
                problems.append(
                    Diagnostic(
                        .error, rule: .signingIdentity, "cannot read the signing \(what) '\(path)'", file: path,
                        hint: "check the path (relative to the site.json folder) and permissions"))
            case .failure(let refusal):
                problems.append(refusal.diagnostic(path, what: "the signing \(what)"))
            }
            return nil
        }
        let certificateBytes = read(certificate, "certificate")
        let keyBytes = read(key, "key")
        let chainBytes = chain.flatMap { read($0, "chain") }
        guard let certificateBytes, let keyBytes, chain == nil || chainBytes != nil else { return (nil, problems) }
        var certificates: [X509Certificate] = []
        do {
            certificates = try CertificateChain(pemEncoded: certificateBytes).certificates
        } catch {
            problems.append(
                Diagnostic(
                    .error, rule: .signingIdentity, "cannot read the signing certificate: \(error)",
                    file: certificate,
                    hint: "the file must hold PEM certificates, leaf first"))
        }
        if let chain, let chainBytes {
            do {
                certificates += try CertificateChain(pemEncoded: chainBytes).certificates
            } catch {
                problems.append(
                    Diagnostic(
                        .error, rule: .signingIdentity, "cannot read the chain: \(error)", file: chain,
                        hint: "the file must hold the intermediate certificates as PEM"))
            }
        }
        let privateKey: PrivateKey
        do {
            privateKey = try PrivateKey(pemEncoded: keyBytes)
        } catch {
            problems.append(
                Diagnostic(
                    .error, rule: .signingIdentity, "cannot read the signing key", file: key,
                    hint: "the file must hold one unencrypted PEM private key"))
            return (nil, problems)
        }
        guard problems.isEmpty, let parsed = try? CertificateChain(certificates) else { return (nil, problems) }
        return (
            Identity(
                chain: parsed, key: privateKey, certificateFile: certificate, keyFile: key,
                fingerprint: SHA256.hex(certificateBytes + keyBytes + (chainBytes ?? []))), []
        )
    }

    /// Everything that makes `identity` unfit to sign for `domain` (`nil`: any name).
    ///
    /// `knownRoots` are trust anchors that need not be in the chain (the development CA).
    public static func check(_ identity: Identity, domain: String?, now: Date, knownRoots: [X509Certificate])
        -> [Diagnostic]
    {
        let leaf = identity.chain.leaf
        var found: [Diagnostic] = []
        func report(_ rule: Rule, _ message: String, file: String? = nil, hint: String) {
            found.append(Diagnostic(.error, rule: rule, message, file: file ?? identity.certificateFile, hint: hint))
        }
        let names = leaf.dnsNames.isEmpty ? [leaf.subjectCommonName ?? leaf.subjectName] : leaf.dnsNames
        if !identity.key.matches(leaf) {
            report(
                .signingKeyMismatch,
                "the signing key (\(identity.key.keyDescription)) does not belong to the certificate for "
                    + "\(names.joined(separator: ", ")) (\(leaf.publicKeyDescription))",
                file: identity.keyFile, hint: "use the private key that was generated with this certificate")
        }
        if leaf.notAfter < now {
            report(
                .signingExpired,
                "the signing certificate for \(names.joined(separator: ", ")) expired on \(leaf.notAfter)",
                hint: "renew it; iOS refuses signatures made with an expired certificate")
        } else if leaf.notBefore > now {
            report(
                .signingExpired, "the signing certificate is not valid before \(leaf.notBefore)",
                hint: "check the system clock, or wait until the certificate is valid")
        }
        if let domain, !leaf.covers(hostname: domain) {
            report(
                .signingName, "the signing certificate covers \(names.joined(separator: ", ")), not \(domain)",
                hint:
                    "Apple requires a valid TLS certificate for the domain itself (spec §4); use one whose SAN lists \(domain)"
            )
        }
        let issuers = Array(identity.chain.intermediates) + knownRoots
        if !leaf.isSelfIssued && !issuers.contains(where: { leaf.isIssued(by: $0) }) {
            report(
                .signingChain,
                identity.chain.intermediates.isEmpty
                    ? "the signing certificate has no chain: it was issued by \(leaf.issuerName), and no intermediate "
                        + "certificate is included, so the device cannot verify the signature"
                    : "the chain does not hold the certificate that issued the leaf (\(leaf.issuerName))",
                hint: "use fullchain.pem (leaf then intermediates), or name the intermediates in \"chain\"")
        }
        if case .rsa = identity.key.algorithm, identity.key.bits < 2048 {
            report(
                .signingKeySize, "the signing key is RSA \(identity.key.bits); at least 2048 bits are required",
                file: identity.keyFile, hint: "issue a new certificate with an RSA 2048+ or ECDSA P-256 key")
        }
        return found
    }

    /// Trust anchors beside the public ones: the development CA, whose leaves carry no chain.
    func knownRoots() -> [X509Certificate] {
        let path = certificateDirectory + "/" + CertificateDirectory.devCAFolder + "/ca.pem"
        guard
            let data = try? ConfinedFile.read(
                path, within: .anywhere, maximumBytes: CertificateDirectory.maximumChainBytes
            ).get().bytes,
            let certificate = try? X509Certificate(pemEncoded: data)
        else { return [] }
        return [certificate]
    }
}

/// The last signature of each domain, so an unchanged file keeps its exact bytes (and ETag) across
/// reloads even when the signature algorithm is randomised (ECDSA).
public final class SignatureCache: Sendable {
    private let entries = Mutex([String: (key: String, signed: [UInt8])]())

    /// Creates an empty cache.
    public init() {}

    func signature(domain: String, key: String) -> [UInt8]? {
        entries.withLock { entries in entries[domain].flatMap { $0.key == key ? $0.signed : nil } }
    }

    func store(_ signed: [UInt8], domain: String, key: String) {
        entries.withLock { $0[domain] = (key, signed) }
    }
}

extension Rule {
    /// Reported by `AssociationSigner`.
    public static let signingKeyMismatch = Rule(
        "signing-key-mismatch", .error,
        "The signing key does not match, the certificate is expired or not yet valid, does not cover the domain, lacks its chain, or has an RSA key under 2048 bits."
    )

    /// Reported by `AssociationSigner`.
    public static let signingExpired = Rule(
        "signing-expired", .error,
        "The signing key does not match, the certificate is expired or not yet valid, does not cover the domain, lacks its chain, or has an RSA key under 2048 bits."
    )

    /// Reported by `AssociationSigner`.
    public static let signingName = Rule(
        "signing-name", .error,
        "The signing key does not match, the certificate is expired or not yet valid, does not cover the domain, lacks its chain, or has an RSA key under 2048 bits."
    )

    /// Reported by `AssociationSigner`.
    public static let signingChain = Rule(
        "signing-chain", .error,
        "The signing key does not match, the certificate is expired or not yet valid, does not cover the domain, lacks its chain, or has an RSA key under 2048 bits."
    )

    /// Reported by `AssociationSigner`.
    public static let signingKeySize = Rule(
        "signing-key-size", .error,
        "The signing key does not match, the certificate is expired or not yet valid, does not cover the domain, lacks its chain, or has an RSA key under 2048 bits."
    )

    /// Reported by `AssociationSigner`; also by `FileSigning`.
    public static let signingFailed = Rule("signing-failed", .error, "OpenSSL could not make the signature.")

    /// The rules of signing the Apple file, in the order of the docs table: their part of `Rule.all`.
    package static let signingRules: [Rule] = [
        .signingIdentity,
        .signingKeyMismatch,
        .signingExpired,
        .signingName,
        .signingChain,
        .signingKeySize,
        .signingFailed,
    ]
}
