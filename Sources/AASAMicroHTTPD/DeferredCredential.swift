internal import AASACore
import Synchronization

/// A certificate chain and private key checked once, and imported into GnuTLS only when a handshake asks for one of
/// its names, through the listener's ``CredentialCache``.
///
/// What it keeps is about a third of what GnuTLS keeps of an imported credential: the leaf's DER, the key's DER, the
/// intermediates (imported once and shared by every chain that holds them) and the staple. A server with a million
/// certificates holds a million of these and only as many credentials as its cache.
///
/// Immutable but for the last import's failure; safe to use from any thread.
public final class DeferredCredential: Sendable {
    /// Tells this certificate apart in a ``CredentialCache`` for the life of the process.
    let serial: UInt64
    /// The leaf's DER.
    let leaf: [UInt8]
    /// The rest of the chain, imported.
    let intermediates: [GnuTLSCertificate]
    let key: PrivateKeyBytes
    let staple: CertificateTable.OCSPStaple?
    /// Why the last import for a handshake failed; `nil` once one succeeds.
    private let lastFailure = Mutex<String?>(nil)

    private static let serials = Atomic<UInt64>(0)

    /// Checks `chain` (its certificates' DER, leaf first) and `keyPEM` as ``GnuTLSCredential`` would import them,
    /// and keeps them to import when a handshake needs them. `label` names the certificate in errors; intermediates
    /// come from `intermediates` when another chain checked with it had the same bytes.
    ///
    /// - Throws: ``HTTPListenerError``, as ``GnuTLSCredential/init(chain:keyPEM:staple:label:intermediates:)``: a
    ///   chain or key GnuTLS cannot read, or a key that is not the leaf's.
    public convenience init(
        chain: [[UInt8]], keyPEM: [UInt8], staple: CertificateTable.OCSPStaple? = nil, label: String,
        intermediates: SharedIntermediates = SharedIntermediates()
    ) throws {
        let parts = try GnuTLSCredential.importChain(chain, label: label, intermediates: intermediates)
        var key = PrivateKeyBytes(pem: keyPEM)
        do {
            _ = try GnuTLSCredential(parts: parts, key: key, staple: nil, label: label)
        } catch let error as HTTPListenerError where error.code == .invalidPrivateKey && !key.isPEM {
            // GnuTLS reads every key it reads as PEM from its DER too; should one differ, keep the PEM.
            key = PrivateKeyBytes(keepingPEM: keyPEM)
            _ = try GnuTLSCredential(parts: parts, key: key, staple: nil, label: label)
        }
        self.init(leaf: chain[0], intermediates: Array(parts.dropFirst()), key: key, staple: staple)
    }

    /// A credential kept as given, unchecked: what a check accepted, or in tests what GnuTLS will refuse.
    init(leaf: [UInt8], intermediates: [GnuTLSCertificate], key: PrivateKeyBytes, staple: CertificateTable.OCSPStaple?)
    {
        serial = Self.serials.add(1, ordering: .relaxed).newValue
        self.leaf = leaf
        self.intermediates = intermediates
        self.key = key
        self.staple = staple
    }

    /// Why the last import for a handshake failed (GnuTLS's reason, naming the certificate); `nil` when it has not
    /// failed, or succeeded since.
    public var failure: String? { lastFailure.withLock { $0 } }

    /// The credential, imported now; a failure is kept as ``failure`` until an import succeeds.
    func imported(label: String) -> GnuTLSCredential? {
        do {
            let parts = try [GnuTLSCertificate(leaf: leaf)] + intermediates
            let credential = try GnuTLSCredential(parts: parts, key: key, staple: staple, label: label)
            lastFailure.withLock { $0 = nil }
            return credential
        } catch let error as GnuTLSImportError {
            let reason = GnuTLSCredential.error(error.code, "could not import the leaf certificate of \(label)").reason
            lastFailure.withLock { $0 = reason }
        } catch {
            let reason = (error as? HTTPListenerError)?.reason ?? "\(error)"
            lastFailure.withLock { $0 = reason }
        }
        return nil
    }
}
