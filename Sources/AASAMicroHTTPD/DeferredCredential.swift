package import AASACore
import Synchronization

/// A certificate chain and private key checked once, and imported into GnuTLS only when a handshake asks for one of
/// its names, through the listener's ``CredentialCache``.
///
/// What it keeps is the intermediates (imported once and shared by every chain that holds them), the staple, and the
/// leaf's and key's DER: sealed in a ``CredentialVault`` when it is given one (16 bytes in memory), else in memory
/// (about a third of what GnuTLS keeps of an imported credential). A server with a million certificates holds a
/// million of these and only as many credentials as its cache.
///
/// Immutable but for the last import's failure; safe to use from any thread.
public final class DeferredCredential: Sendable {
    /// Tells this certificate apart in a ``CredentialCache`` for the life of the process.
    let serial: UInt64
    /// The leaf's and key's bytes.
    let material: Material
    /// The rest of the chain, imported.
    let intermediates: [GnuTLSCertificate]
    let staple: CertificateTable.OCSPStaple?
    /// Why the last import for a handshake failed; `nil` once one succeeds.
    private let lastFailure = Mutex<String?>(nil)

    private static let serials = Atomic<UInt64>(0)

    /// Where the leaf's and key's bytes are kept.
    enum Material: Sendable {
        /// In memory.
        case held(leaf: [UInt8], key: PrivateKeyBytes)
        /// Sealed in a vault's file.
        case sealed(CredentialVault.Entry)
    }

    /// Checks `chain` (its certificates' DER, leaf first) and `keyPEM` as ``GnuTLSCredential`` would import them,
    /// and keeps them to import when a handshake needs them: sealed in `vault` when there is one. `label` names the
    /// certificate in errors; intermediates come from `intermediates` when another chain checked with it had the
    /// same bytes.
    ///
    /// - Throws: ``HTTPListenerError``, as ``GnuTLSCredential/init(chain:keyPEM:staple:label:intermediates:)``: a
    ///   chain or key GnuTLS cannot read, or a key that is not the leaf's.
    public convenience init(
        chain: [[UInt8]], keyPEM: [UInt8], staple: CertificateTable.OCSPStaple? = nil, label: String,
        intermediates: SharedIntermediates = SharedIntermediates(), vault: CredentialVault? = nil
    ) throws {
        try self.init(
            chain: chain, leafFields: nil, keyPEM: keyPEM, staple: staple, label: label, intermediates: intermediates,
            vault: vault)
    }

    /// ``init(chain:keyPEM:staple:label:intermediates:vault:)`` with the leaf (`chain[0]`) already split into
    /// `leafFields` (``CertificateFields``): its key is read from them, not from the leaf split again.
    package convenience init(
        chain: [[UInt8]], leafFields: CertificateFields?, keyPEM: [UInt8], staple: CertificateTable.OCSPStaple? = nil,
        label: String, intermediates: SharedIntermediates = SharedIntermediates(), vault: CredentialVault? = nil
    ) throws {
        // The leaf's public key, read once: for its import and to compare the private key with. From the fields when
        // given (a key they do not give is GnuTLS's to read, as from the leaf).
        let leafKey =
            if let leafFields { LeafPublicKey(fields: leafFields) } else {
                chain.first.flatMap(LeafPublicKey.init(certificate:))
            }
        let parts = try GnuTLSCredential.importChain(
            chain, label: label, intermediates: intermediates, leafKey: leafKey)
        var key = PrivateKeyBytes(pem: keyPEM)
        // An ECDSA key that carries its public point is compared with the leaf's here, as GnuTLS would compare the
        // same two (``EmbeddedPublicKey``); any other key is imported once to be checked.
        if !key.isPEM, let embedded = EmbeddedPublicKey(der: key.bytes), let leaf = leafKey,
            let belongs = embedded.belongs(to: leaf)
        {
            guard belongs else { throw GnuTLSCredential.keyMismatch(label) }
        } else {
            do {
                _ = try GnuTLSCredential(parts: parts, key: key, staple: nil, label: label)
            } catch let error as HTTPListenerError where error.code == .invalidPrivateKey && !key.isPEM {
                // GnuTLS reads every key it reads as PEM from its DER too; should one differ, keep the PEM.
                key = PrivateKeyBytes(keepingPEM: keyPEM)
                _ = try GnuTLSCredential(parts: parts, key: key, staple: nil, label: label)
            }
        }
        self.init(
            leaf: chain[0], intermediates: intermediates.chain(parts.dropFirst()), key: key, staple: staple,
            vault: vault)
    }

    /// A credential kept as given, unchecked: what a check accepted, or in tests what GnuTLS will refuse. With a
    /// `vault`, the leaf and key are sealed there, unless it cannot take them.
    init(
        leaf: [UInt8], intermediates: [GnuTLSCertificate], key: PrivateKeyBytes, staple: CertificateTable.OCSPStaple?,
        vault: CredentialVault? = nil
    ) {
        serial = Self.serials.add(1, ordering: .relaxed).newValue
        material = vault?.seal(leaf: leaf, key: key).map(Material.sealed) ?? .held(leaf: leaf, key: key)
        self.intermediates = intermediates
        self.staple = staple
    }

    deinit {
        if case .sealed(let entry) = material { entry.release() }
    }

    /// Why the last import for a handshake failed (GnuTLS's reason, naming the certificate); `nil` when it has not
    /// failed, or succeeded since.
    public var failure: String? { lastFailure.withLock { $0 } }

    /// Whether the leaf and key are sealed in a vault.
    var isSealed: Bool {
        if case .sealed = material { true } else { false }
    }

    /// The leaf's DER and the key, from memory or read back from the vault.
    ///
    /// - Throws: ``HTTPListenerError`` when the vault's copy cannot be read or is not what was sealed.
    func bytes() throws(HTTPListenerError) -> (leaf: [UInt8], key: PrivateKeyBytes) {
        switch material {
        case .held(let leaf, let key): (leaf, key)
        case .sealed(let entry): try entry.open()
        }
    }

    /// The credential, imported now; a failure is kept as ``failure`` until an import succeeds.
    func imported(label: String) -> GnuTLSCredential? {
        let reason: String
        do {
            let (leaf, key) = try bytes()
            let parts = try [GnuTLSCertificate(leaf: leaf)] + intermediates
            let credential = try GnuTLSCredential(parts: parts, key: key, staple: staple, label: label)
            lastFailure.withLock { $0 = nil }
            return credential
        } catch let error as GnuTLSImportError {
            reason = GnuTLSCredential.error(error.code, "could not import the leaf certificate of \(label)").reason
        } catch let error as HTTPListenerError where error.code == .unreadableCredential {
            reason = "could not read the certificate of \(label) back: \(error.reason)"
        } catch {
            reason = (error as? HTTPListenerError)?.reason ?? "\(error)"
        }
        lastFailure.withLock { $0 = reason }
        return nil
    }
}
