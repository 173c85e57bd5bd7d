internal import COpenSSL

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A local certificate authority for development: issues TLS certificates that devices trust once
/// the CA certificate (`ca.pem`) is installed on them.
public final class DevCertificateAuthority: Sendable {
    /// File name of the CA certificate inside the CA directory.
    public static let certificateFileName = "ca.pem"
    /// File name of the CA private key inside the CA directory (mode 0600).
    public static let privateKeyFileName = "ca-key.pem"
    /// Longest leaf validity accepted, in days: Apple rejects TLS certificates valid for longer than 825 days.
    public static let maximumValidityDays = 825
    /// Default leaf validity, in days: 398 also satisfies the stricter limit for publicly trusted certificates.
    public static let defaultValidityDays = 398
    /// Validity of a newly created CA certificate, in days (about ten years).
    public static let caValidityDays = 3650

    /// The CA certificate.
    public let certificate: X509Certificate
    /// The CA private key.
    public let privateKey: PrivateKey
    /// The directory holding ``certificateFileName`` and ``privateKeyFileName``.
    public let directory: String

    private init(certificate: X509Certificate, privateKey: PrivateKey, directory: String) {
        self.certificate = certificate
        self.privateKey = privateKey
        self.directory = directory
    }

    /// Path of the CA certificate file.
    public var certificatePath: String { directory + "/" + Self.certificateFileName }

    /// Loads the CA from `directory`, or creates the directory (0700) and a new CA when neither file exists.
    ///
    /// A new CA has an ECDSA P-256 key, `CA:TRUE`, key usage keyCertSign/cRLSign and a subject naming
    /// this machine. If only one of the two files exists, nothing is overwritten: that is an error.
    public static func loadOrCreate(directory: String) throws -> DevCertificateAuthority {
        let certificatePath = directory + "/" + certificateFileName
        let keyPath = directory + "/" + privateKeyFileName
        switch (SecureFile.exists(certificatePath), SecureFile.exists(keyPath)) {
        case (true, true):
            let certificate = try X509Certificate(pemEncoded: SecureFile.readAll(certificatePath))
            let key = try PrivateKey(pemEncoded: SecureFile.readAll(keyPath))
            try key.checkMatches(certificate)
            guard certificate.isCA else {
                throw OpenSSLError(
                    .inconsistentFiles,
                    "'\(certificatePath)' is not a CA certificate (basicConstraints CA:TRUE missing)")
            }
            return DevCertificateAuthority(certificate: certificate, privateKey: key, directory: directory)
        case (false, false):
            return try create(directory: directory)
        case (true, false), (false, true):
            throw OpenSSLError(
                .inconsistentFiles,
                "'\(directory)' has only one of \(certificateFileName) and \(privateKeyFileName); "
                    + "restore the missing file or remove both to create a new CA")
        }
    }

    private static func create(directory: String) throws -> DevCertificateAuthority {
        try SecureFile.createDirectory(directory, mode: 0o700)
        let key = try PrivateKey.generate(.ecdsaP256)
        let builder = CertificateBuilder(
            subject: [("O", "aasa-server development"), ("CN", commonName())],
            notBeforeOffset: -3600,
            validityDays: caValidityDays,
            extensions: [
                (NID_basic_constraints, "critical,CA:TRUE"),
                (NID_key_usage, "critical,keyCertSign,cRLSign"),
                (NID_subject_key_identifier, "hash"),
                (NID_authority_key_identifier, "keyid:always"),
            ])
        let certificate = try builder.sign(publicKey: key, issuer: nil, issuerKey: key)
        // Key first: a certificate without its key is the inconsistent state loadOrCreate refuses.
        try SecureFile.writeAtomically(
            Array(key.pemEncoded().utf8), to: directory + "/" + privateKeyFileName, mode: 0o600)
        try SecureFile.writeAtomically(
            Array(certificate.pemEncoded().utf8), to: directory + "/" + certificateFileName, mode: 0o644)
        return DevCertificateAuthority(certificate: certificate, privateKey: key, directory: directory)
    }

    /// `aasa-server development CA (<hostname>)`, cut to the 64 characters X.520 allows in a CN.
    private static func commonName() -> String {
        var buffer = [CChar](repeating: 0, count: 256)
        let host =
            gethostname(&buffer, buffer.count) == 0
            ? String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) : "unknown"
        let prefix = "aasa-server development CA ("
        return prefix + host.prefix(64 - prefix.count - 1) + ")"
    }

    /// Issues a TLS server certificate for `names` with a fresh key.
    ///
    /// Every name becomes a SAN entry: DNS names (wildcards as `*.example.com`) as dNSName, IP literals
    /// (`127.0.0.1`, `::1`) as iPAddress. The first name is also the subject CN when it fits.
    /// The certificate has extendedKeyUsage serverAuth, a random serial and key identifiers.
    public func issue(
        names: [String], validityDays: Int = DevCertificateAuthority.defaultValidityDays,
        key parameters: PrivateKey.GenerationParameters = .ecdsaP256
    ) throws -> IssuedCertificate {
        guard !names.isEmpty else { throw OpenSSLError(.invalidName, "a certificate needs at least one name") }
        guard (1...Self.maximumValidityDays).contains(validityDays) else {
            throw OpenSSLError(
                .invalidValidity,
                "validity of \(validityDays) days is outside 1...\(Self.maximumValidityDays) "
                    + "(Apple rejects TLS certificates valid longer than 825 days)")
        }
        let altNames = try names.map { name -> String in
            if let address = IPAddressText.normalized(name) { return "IP:" + address }
            guard Self.isValidDNSName(name) else {
                throw OpenSSLError(
                    .invalidName, "'\(name)' is neither a DNS name (letters, digits, '-', '.', leading '*.') nor an IP")
            }
            return "DNS:" + HostnamePattern.canonical(name)
        }
        let key = try PrivateKey.generate(parameters)
        let keyUsage =
            key.algorithm == .rsa ? "critical,digitalSignature,keyEncipherment" : "critical,digitalSignature"
        let firstName = HostnamePattern.canonical(names[0])
        let builder = CertificateBuilder(
            subject: firstName.utf8.count <= 64 ? [("CN", firstName)] : [],
            notBeforeOffset: -300,
            validityDays: validityDays,
            extensions: [
                (NID_basic_constraints, "critical,CA:FALSE"),
                (NID_key_usage, keyUsage),
                (NID_ext_key_usage, "serverAuth"),
                (NID_subject_alt_name, altNames.joined(separator: ",")),
                (NID_subject_key_identifier, "hash"),
                (NID_authority_key_identifier, "keyid:always"),
            ])
        let leaf = try builder.sign(publicKey: key, issuer: certificate, issuerKey: privateKey)
        return IssuedCertificate(certificate: leaf, privateKey: key)
    }

    /// Letters, digits and hyphens in dot-separated labels of 1...63 characters; optionally `*.` in front.
    static func isValidDNSName(_ name: String) -> Bool {
        var name = Substring(name)
        if name.hasSuffix(".") { name = name.dropLast() }
        if name.hasPrefix("*.") { name = name.dropFirst(2) }
        guard !name.isEmpty, name.utf8.count <= 253 else { return false }
        return name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            (1...63).contains(label.utf8.count) && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.utf8.allSatisfy { byte in
                    (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
                        || byte == 0x2d || byte == 0x5f
                }
        }
    }
}
