internal import COpenSSL
internal import CShims.OpenSSL

/// Signs bytes as a CMS SignedData blob the way Apple's iOS 8 instructions do (spec §4: `openssl smime
/// -sign -nodetach -noattr -outform DER -certfile intermediate.pem`): content embedded, DER, binary mode
/// (the bytes are signed exactly, no CRLF conversion), SHA-256, no signed attributes, intermediates included.
///
/// Without signed attributes there is no signing time, so an RSA signature is fully deterministic; ECDSA
/// signatures use a random nonce in OpenSSL 3.0, so callers that need stable bytes reuse earlier signatures.
public struct CMSSigner: Sendable {
    /// The signing certificate (the leaf).
    public let certificate: X509Certificate
    /// Its private key.
    public let key: PrivateKey
    /// Certificates to include so the verifier can build the chain (intermediates, never needed roots).
    public let intermediates: [X509Certificate]

    /// Creates a signer; throws ``OpenSSLError/Code/keyMismatch`` when `key` does not belong to `certificate`.
    public init(certificate: X509Certificate, key: PrivateKey, intermediates: [X509Certificate] = []) throws {
        try key.checkMatches(certificate)
        self.certificate = certificate
        self.key = key
        self.intermediates = intermediates
    }

    /// The DER-encoded CMS SignedData (`ContentInfo`) holding `content`.
    public func sign(_ content: [UInt8]) throws -> [UInt8] {
        // CMS_PARTIAL: build the structure, choose the digest explicitly, then finalise over the content.
        let flags = UInt32(CMS_BINARY | CMS_NOATTR | CMS_PARTIAL)
        guard let cms = CMS_sign(nil, nil, nil, nil, flags) else {
            throw OpenSSLError(.signing, "could not create a CMS SignedData structure")
        }
        defer { CMS_ContentInfo_free(cms) }
        guard CMS_add1_signer(cms, certificate.pointer, key.pointer, EVP_sha256(), flags) != nil else {
            throw OpenSSLError(
                .signing, "could not add signer \(certificate.subjectName) (\(key.keyDescription)) with SHA-256")
        }
        for intermediate in intermediates {
            // CMS_add1_cert takes its own reference; an intermediate already present is not an error to us.
            guard CMS_add1_cert(cms, intermediate.pointer) == 1 else {
                throw OpenSSLError(.signing, "could not include intermediate \(intermediate.subjectName)")
            }
        }
        try MemoryBIO.reading(content) { bio in
            guard CMS_final(cms, bio, nil, flags) == 1 else {
                throw OpenSSLError(.signing, "signing \(content.count) bytes failed")
            }
        }
        var output: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_CMS_ContentInfo(cms, &output)
        guard length > 0, let output else { throw OpenSSLError(.encoding, "could not DER-encode the CMS signature") }
        defer { cshims_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }
}

extension X509Certificate {
    /// Whether `issuer`'s subject and key issued this certificate (OpenSSL's `X509_check_issued`: names,
    /// key identifiers and key usage).
    public func isIssued(by issuer: X509Certificate) -> Bool {
        let result = X509_check_issued(issuer.pointer, pointer) == X509_V_OK
        OpenSSLError.drainErrorQueue()
        return result
    }

    /// Whether the certificate issued itself (a self-signed root or a self-signed leaf).
    public var isSelfIssued: Bool { isIssued(by: self) }
}
