internal import COpenSSL

/// A certificate chain as deployed: the leaf first, then intermediates (a certbot `fullchain.pem`).
public struct CertificateChain: Sendable {
    /// Every certificate in file order; never empty.
    public let certificates: [X509Certificate]

    /// The end-entity certificate (the first one).
    public var leaf: X509Certificate { certificates[0] }

    /// Everything after the leaf.
    public var intermediates: ArraySlice<X509Certificate> { certificates.dropFirst() }

    /// Creates a chain from certificates in order; throws ``OpenSSLError/Code/emptyChain`` when empty.
    public init(_ certificates: [X509Certificate]) throws {
        guard !certificates.isEmpty else {
            throw OpenSSLError(.emptyChain, "certificate chain is empty; expected the leaf certificate first")
        }
        self.certificates = certificates
    }

    /// Parses every `CERTIFICATE` block in PEM text.
    public init(pemEncoded bytes: [UInt8]) throws {
        let parsed = try MemoryBIO.reading(bytes) { bio -> [X509Certificate] in
            var found: [X509Certificate] = []
            while let x509 = PEM_read_bio_X509(bio, nil, nil, nil) {
                found.append(X509Certificate(taking: x509))
            }
            // The loop ends on "no start line" after the last block; anything else is a broken block.
            let last = ERR_peek_last_error()
            let endOfInput = ERR_GET_LIB(last) == ERR_LIB_PEM && ERR_GET_REASON(last) == PEM_R_NO_START_LINE
            if last != 0 && !endOfInput {
                throw OpenSSLError(
                    .malformedPEM, "certificate \(found.count + 1) in the PEM chain is malformed")
            }
            OpenSSLError.drainErrorQueue()
            return found
        }
        guard !parsed.isEmpty else {
            throw OpenSSLError(
                .emptyChain, "no certificate in PEM input (expected '-----BEGIN CERTIFICATE-----', leaf first)")
        }
        self.certificates = parsed
    }

    /// Parses every `CERTIFICATE` block in PEM text.
    public init(pemEncoded text: String) throws {
        try self.init(pemEncoded: Array(text.utf8))
    }

    /// The whole chain as concatenated PEM.
    public func pemEncoded() throws -> String {
        try certificates.map { try $0.pemEncoded() }.joined()
    }
}
