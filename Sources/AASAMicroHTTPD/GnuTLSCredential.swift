internal import AASACore
internal import CGnuTLS
internal import CShims.GnuTLS

/// One certificate chain and its private key, imported into GnuTLS once (owns the privkey, and the array GnuTLS
/// reads the chain from; the certificates in it are owned by ``GnuTLSCertificate`` objects, intermediates
/// shared between the chains of one table).
///
/// A server checks each certificate folder by importing it once, as it reads it (so a refused key is that folder's
/// finding), and keeps a ``DeferredCredential``; a handshake imports the credential again when it first needs it,
/// and the listener's ``CredentialCache`` keeps a bounded number. Certificates made in memory (an ACME domain's
/// temporary one) are served as credentials directly
/// (``CertificateTable/Entry/init(id:names:credential:isFallback:)``).
///
/// Immutable after init; GnuTLS only reads these during handshakes, from any thread, hence `@unchecked Sendable`.
public final class GnuTLSCredential: @unchecked Sendable {
    /// Most certificates accepted in one chain (leaf + intermediates).
    static let maximumChainLength = 16

    /// The chain as GnuTLS reads it, leaf first: shallow copies of ``parts``' structures.
    let certificates: UnsafeMutablePointer<gnutls_pcert_st>
    /// What owns each entry of ``certificates``.
    private let parts: [GnuTLSCertificate]
    /// Number of entries in ``certificates``.
    var count: UInt32 { UInt32(parts.count) }
    /// The imported private key.
    let privateKey: gnutls_privkey_t
    /// The OCSP response to staple (owns its bytes), or `nil`.
    let staple: UnsafeMutablePointer<gnutls_ocsp_data_st>?

    /// Imports a PEM chain and PEM key, and copies the staple into GnuTLS's form; `label` names the entry in errors.
    /// Intermediates come from `intermediates` when another chain imported with it had the same bytes.
    ///
    /// - Throws: ``HTTPListenerError``: `invalid-certificate` for a chain GnuTLS cannot read, `invalid-private-key`
    ///   for a key it cannot read, `key-mismatch` for a key that is not the leaf's.
    public convenience init(
        chainPEM: [UInt8], keyPEM: [UInt8], staple: CertificateTable.OCSPStaple? = nil, label: String,
        intermediates: SharedIntermediates = SharedIntermediates()
    ) throws {
        let blocks: [PEMBlocks.Block]
        do {
            blocks = try PEMBlocks(chainPEM).blocks.filter(\.isCertificate)
        } catch {
            throw HTTPListenerError(
                .invalidCertificate, "could not import the certificate chain of \(label): \(error.reason)")
        }
        try self.init(
            chain: blocks.map(\.bytes), keyPEM: keyPEM, staple: staple, label: label, intermediates: intermediates)
    }

    /// ``init(chainPEM:keyPEM:staple:label:intermediates:)`` for a chain already decoded: its certificates' DER,
    /// leaf first (a server reading a certificate folder decodes the PEM once, for its summary and for this).
    public convenience init(
        chain: [[UInt8]], keyPEM: [UInt8], staple: CertificateTable.OCSPStaple? = nil, label: String,
        intermediates: SharedIntermediates = SharedIntermediates()
    ) throws {
        try self.init(
            parts: try Self.importChain(
                chain, label: label, intermediates: intermediates,
                leafKey: chain.first.flatMap(LeafPublicKey.init(certificate:))),
            key: PrivateKeyBytes(pem: keyPEM), staple: staple, label: label)
    }

    /// A credential of certificates imported before (leaf first) and `key`.
    init(parts: [GnuTLSCertificate], key: PrivateKeyBytes, staple: CertificateTable.OCSPStaple?, label: String)
        throws
    {
        let imported = UnsafeMutablePointer<gnutls_pcert_st>.allocate(capacity: parts.count)
        imported.initialize(from: parts.map(\.pcert), count: parts.count)

        var privateKey: gnutls_privkey_t? = nil
        var keyResult = gnutls_privkey_init(&privateKey)
        if keyResult >= 0, let privateKey {
            keyResult = key.bytes.withUnsafeBytes { bytes in
                var datum = gnutls_datum_t(
                    data: UnsafeMutablePointer(mutating: bytes.bindMemory(to: UInt8.self).baseAddress),
                    size: UInt32(bytes.count))
                return gnutls_privkey_import_x509_raw(
                    privateKey, &datum, key.isPEM ? GNUTLS_X509_FMT_PEM : GNUTLS_X509_FMT_DER, nil, 0)
            }
        }
        guard keyResult >= 0, let privateKey else {
            if let privateKey { gnutls_privkey_deinit(privateKey) }
            imported.deallocate()
            throw Self.error(keyResult, "could not import the private key of \(label)", code: .invalidPrivateKey)
        }
        self.certificates = imported
        self.parts = parts
        self.privateKey = privateKey
        self.staple = staple.map(Self.ocspData)

        // A key that does not belong to the leaf makes every handshake fail; refuse it here instead.
        guard Self.belongTogether(imported.pointee.pubkey, privateKey) else { throw Self.keyMismatch(label) }
    }

    /// The error for a private key that is not the leaf's, in the chain `label` names.
    static func keyMismatch(_ label: String) -> HTTPListenerError {
        HTTPListenerError(
            .keyMismatch,
            "the private key of \(label) does not belong to its leaf certificate; pair each chain with its own key")
    }

    /// The certificates after the leaf, as imported (shared with the other chains that hold them).
    var intermediates: ArraySlice<GnuTLSCertificate> { parts.dropFirst() }

    deinit {
        // The structures themselves are ``parts``' to free.
        certificates.deallocate()
        gnutls_privkey_deinit(privateKey)
        if let staple {
            staple.pointee.response.data.deallocate()
            staple.deallocate()
        }
    }

    /// Every certificate of a chain (DER, leaf first; a PEM chain's `CERTIFICATE` and `X509 CERTIFICATE` blocks,
    /// as GnuTLS reads a chain): the leaf imported with `leafKey` (what ``LeafPublicKey/init(certificate:)`` reads
    /// of the first block, read once by the caller), the rest taken from `intermediates`.
    static func importChain(
        _ blocks: [[UInt8]], label: String, intermediates: SharedIntermediates, leafKey: LeafPublicKey?
    ) throws -> [GnuTLSCertificate] {
        guard !blocks.isEmpty else {
            throw HTTPListenerError(
                .invalidCertificate, "could not import the certificate chain of \(label): it holds no certificate")
        }
        guard blocks.count <= maximumChainLength else {
            throw HTTPListenerError(
                .invalidCertificate,
                "could not import the certificate chain of \(label): \(blocks.count) certificates, at most "
                    + "\(maximumChainLength)")
        }
        return try blocks.enumerated().map { index, der in
            do throws(GnuTLSImportError) {
                guard index == 0 else { return try intermediates.certificate(der: der) }
                return try GnuTLSCertificate(leaf: der, publicKey: leafKey)
            } catch {
                throw Self.error(error.code, "could not import certificate \(index + 1) of the chain of \(label)")
            }
        }
    }

    /// GnuTLS's `gnutls_ocsp_data_st` for `staple`, with its own copy of the bytes (freed in deinit).
    private static func ocspData(_ staple: CertificateTable.OCSPStaple) -> UnsafeMutablePointer<gnutls_ocsp_data_st> {
        let bytes = UnsafeMutablePointer<UInt8>.allocate(capacity: max(1, staple.response.count))
        bytes.initialize(from: staple.response, count: staple.response.count)
        let data = UnsafeMutablePointer<gnutls_ocsp_data_st>.allocate(capacity: 1)
        var value = gnutls_ocsp_data_st()
        value.version = 0
        value.response = gnutls_datum_t(data: bytes, size: UInt32(staple.response.count))
        value.exptime = time_t(staple.expires)
        data.initialize(to: value)
        return data
    }

    /// Whether `key` is the private half of `publicKey` (the leaf's).
    ///
    /// Compares the public parameters as GnuTLS holds them: the curve and point of an ECDSA key, the modulus
    /// and exponent of an RSA key; other kinds by key ID. Key IDs encode the SubjectPublicKeyInfo in ASN.1,
    /// twice per certificate: a quarter of importing one, and a start imports thousands.
    private static func belongTogether(_ publicKey: gnutls_pubkey_t?, _ key: gnutls_privkey_t) -> Bool {
        guard let publicKey else { return false }
        var derived: gnutls_pubkey_t? = nil
        guard gnutls_pubkey_init(&derived) >= 0, let derived else { return false }
        defer { gnutls_pubkey_deinit(derived) }
        guard gnutls_pubkey_import_privkey(derived, key, 0, 0) >= 0 else { return false }
        let algorithm = gnutls_pubkey_get_pk_algorithm(publicKey, nil)
        guard algorithm == gnutls_pubkey_get_pk_algorithm(derived, nil) else { return false }
        switch gnutls_pk_algorithm_t(UInt32(algorithm)) {
        case GNUTLS_PK_ECDSA:
            return eccParameters(publicKey).map { $0 == eccParameters(derived) } ?? false
        case GNUTLS_PK_RSA:
            return rsaParameters(publicKey).map { $0 == rsaParameters(derived) } ?? false
        default:
            return keyID(of: publicKey).map { $0 == keyID(of: derived) } ?? false
        }
    }

    /// An ECDSA key's curve and point.
    private static func eccParameters(_ key: gnutls_pubkey_t) -> [[UInt8]]? {
        var curve = GNUTLS_ECC_CURVE_INVALID
        var x = gnutls_datum_t()
        var y = gnutls_datum_t()
        guard gnutls_pubkey_export_ecc_raw2(key, &curve, &x, &y, 0) >= 0 else { return nil }
        return [[UInt8(truncatingIfNeeded: curve.rawValue)], taking(&x), taking(&y)]
    }

    /// An RSA key's modulus and public exponent.
    private static func rsaParameters(_ key: gnutls_pubkey_t) -> [[UInt8]]? {
        var modulus = gnutls_datum_t()
        var exponent = gnutls_datum_t()
        guard gnutls_pubkey_export_rsa_raw2(key, &modulus, &exponent, 0) >= 0 else { return nil }
        return [taking(&modulus), taking(&exponent)]
    }

    /// The bytes of a datum GnuTLS allocated, which is freed.
    private static func taking(_ datum: inout gnutls_datum_t) -> [UInt8] {
        defer {
            cshims_gnutls_free(datum.data)
            datum = gnutls_datum_t()
        }
        guard let data = datum.data else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(datum.size)))
    }

    private static func keyID(of publicKey: gnutls_pubkey_t) -> [UInt8]? {
        var id = [UInt8](repeating: 0, count: 64)
        var size = id.count
        guard gnutls_pubkey_get_key_id(publicKey, GNUTLS_KEYID_USE_SHA256.rawValue, &id, &size) >= 0 else {
            return nil
        }
        return Array(id.prefix(size))
    }

    static func error(
        _ result: Int32, _ what: String, code: HTTPListenerError.Code = .invalidCertificate
    ) -> HTTPListenerError {
        let text = gnutls_strerror(result).map { String(cString: $0) } ?? "GnuTLS error \(result)"
        return HTTPListenerError(code, "\(what): \(text)")
    }
}
