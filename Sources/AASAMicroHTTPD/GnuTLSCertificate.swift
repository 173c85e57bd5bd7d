internal import AASACore
internal import CGnuTLS
import Synchronization

/// One certificate imported into GnuTLS (owns one `gnutls_pcert_st`: the DER copy and the parsed public key).
///
/// Chains share their intermediates: thousands of `fullchain.pem` files usually end with the same one or two,
/// and importing each copy again cost GnuTLS a libtasn1 parse and about 1 KiB per chain
/// (docs/benchmarks.md). A ``GnuTLSCredential`` lays the chain out for GnuTLS as shallow copies of these
/// structures, and keeps the objects that own them alive. Immutable after init; GnuTLS only reads it.
final class GnuTLSCertificate: @unchecked Sendable {
    /// The imported certificate.
    let pcert: gnutls_pcert_st
    /// Whether ``pcert`` was put together here (``init(leaf:)``): its DER is this object's to deallocate, not
    /// GnuTLS's.
    let assembled: Bool

    /// Imports one DER certificate with GnuTLS; throws GnuTLS's error code when it refuses it.
    init(der: [UInt8]) throws(GnuTLSImportError) {
        var pcert = gnutls_pcert_st()
        let result = der.withUnsafeBytes { bytes in
            var datum = gnutls_datum_t(
                data: UnsafeMutablePointer(mutating: bytes.bindMemory(to: UInt8.self).baseAddress),
                size: UInt32(bytes.count))
            return gnutls_pcert_import_x509_raw(&pcert, &datum, GNUTLS_X509_FMT_DER, 0)
        }
        guard result >= 0 else { throw GnuTLSImportError(code: result) }
        self.pcert = pcert
        assembled = false
    }

    /// Imports a leaf: its public key from the numbers ``LeafPublicKey`` reads (no libtasn1 decoding), beside a
    /// copy of its DER; a key it does not read goes through ``init(der:)``. The certificate as a whole was already
    /// checked by whoever read it first (a server's ``CertificateSummary``, or GnuTLS for an intermediate).
    convenience init(leaf der: [UInt8]) throws(GnuTLSImportError) {
        try self.init(leaf: der, publicKey: LeafPublicKey(certificate: der))
    }

    /// ``init(leaf:)`` with the leaf's public key already read from `der` (`nil`: one ``LeafPublicKey`` does not
    /// read).
    convenience init(leaf der: [UInt8], publicKey: LeafPublicKey?) throws(GnuTLSImportError) {
        guard let key = publicKey?.imported() else {
            try self.init(der: der)
            return
        }
        let copy = UnsafeMutablePointer<UInt8>.allocate(capacity: der.count)
        copy.initialize(from: der, count: der.count)
        self.init(
            assembled: gnutls_pcert_st(
                pubkey: key, cert: gnutls_datum_t(data: copy, size: UInt32(der.count)), type: GNUTLS_CRT_X509))
    }

    private init(assembled pcert: gnutls_pcert_st) {
        self.pcert = pcert
        assembled = true
    }

    deinit {
        var pcert = pcert
        if assembled {
            gnutls_pubkey_deinit(pcert.pubkey)
            pcert.cert.data.deallocate()
        } else {
            gnutls_pcert_deinit(&pcert)
        }
    }
}

/// GnuTLS's error code for a certificate it refused to import.
struct GnuTLSImportError: Error {
    var code: Int32
}

/// The intermediates imported while building one certificate table or reading one certificate folder, by their
/// DER bytes, so that chains ending with the same certificates share one import. Safe to use from the importing
/// threads at once.
public final class SharedIntermediates: Sendable {
    private let imported = Mutex<[DER: GnuTLSCertificate]>([:])
    /// The intermediates of the chains kept so far, by their certificates, so the credentials of chains that end
    /// alike share one array.
    private let chains = Mutex<[[ObjectIdentifier]: [GnuTLSCertificate]]>([:])

    /// Creates an empty set.
    public init() {}

    /// DER bytes as a dictionary key: equal when the bytes are, hashed on their length and last 32 bytes (the
    /// end of the signature, as good as random), not byte by byte.
    private struct DER: Hashable {
        let bytes: [UInt8]

        func hash(into hasher: inout Hasher) {
            hasher.combine(bytes.count)
            bytes.suffix(32).withUnsafeBytes { hasher.combine(bytes: $0) }
        }
    }

    /// `certificates` (a chain's intermediates, imported here) as one array shared with every chain that has them.
    func chain(_ certificates: ArraySlice<GnuTLSCertificate>) -> [GnuTLSCertificate] {
        guard !certificates.isEmpty else { return [] }
        let key = certificates.map(ObjectIdentifier.init)
        return chains.withLock { chains in
            if let shared = chains[key] { return shared }
            let shared = Array(certificates)
            chains[key] = shared
            return shared
        }
    }

    /// The certificate with these DER bytes, imported on first use.
    func certificate(der bytes: [UInt8]) throws(GnuTLSImportError) -> GnuTLSCertificate {
        let der = DER(bytes: bytes)
        if let known = imported.withLock({ $0[der] }) { return known }
        let certificate = try GnuTLSCertificate(der: bytes)
        // Two threads may import the same bytes at once; both get the one stored first.
        return imported.withLock { cache in
            if let known = cache[der] { return known }
            cache[der] = certificate
            return certificate
        }
    }
}
