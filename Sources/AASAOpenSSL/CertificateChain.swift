internal import COpenSSL
internal import CShims.OpenSSL
import Synchronization

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

    /// Parses every `CERTIFICATE` block in PEM text, as ``init(pemEncoded:)-([UInt8])`` does, but takes the
    /// certificates after the leaf from `intermediates` when an earlier chain held the same bytes.
    ///
    /// Thousands of `fullchain.pem` files usually end with the same one or two intermediates: parsing each copy
    /// again cost about 0.6 million instructions and 2 KB a chain. Anything unusual (a PEM header, a block
    /// that does not parse) is parsed the ordinary way, so what is accepted and every error stay the same.
    public init(pemEncoded bytes: [UInt8], sharing intermediates: IntermediateCertificates) throws {
        if let shared = Self.parse(bytes, sharing: intermediates) {
            try self.init(shared)
        } else {
            try self.init(pemEncoded: bytes)
        }
    }

    /// The chain with its intermediates from `cache`; `nil` when the ordinary parser must decide.
    private static func parse(_ bytes: [UInt8], sharing cache: IntermediateCertificates) -> [X509Certificate]? {
        ERR_set_mark()
        defer { ERR_pop_to_mark() }
        let parsed = try? MemoryBIO.reading(bytes) { bio -> [X509Certificate]? in
            var found: [X509Certificate] = []
            while true {
                var name: UnsafeMutablePointer<CChar>? = nil
                var header: UnsafeMutablePointer<CChar>? = nil
                var data: UnsafeMutablePointer<UInt8>? = nil
                var length = 0
                guard PEM_read_bio(bio, &name, &header, &data, &length) == 1, let name, let data else {
                    // The end of the input, or something the ordinary parser reports.
                    let last = ERR_peek_last_error()
                    let endOfInput = ERR_GET_LIB(last) == ERR_LIB_PEM && ERR_GET_REASON(last) == PEM_R_NO_START_LINE
                    return endOfInput && !found.isEmpty ? found : nil
                }
                defer {
                    cshims_OPENSSL_free(name)
                    cshims_OPENSSL_free(header)
                    cshims_OPENSSL_free(data)
                }
                // PEM_read_bio_X509 reads these two labels and skips every other block.
                let label = String(cString: name)
                guard label == "CERTIFICATE" || label == "X509 CERTIFICATE" else { continue }
                guard header?.pointee ?? 0 == 0 else { return nil }
                let der = UnsafeBufferPointer(start: UnsafePointer(data), count: length)
                guard let certificate = found.isEmpty ? X509Certificate(parsing: der) : cache.certificate(der: der)
                else { return nil }
                found.append(certificate)
            }
        }
        return parsed ?? nil
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

/// Certificates parsed while reading many chains, by their DER bytes, so chains that end with the same
/// intermediates share one parsed copy (``CertificateChain/init(pemEncoded:sharing:)``).
///
/// Safe to use from several threads at once; meant to live for one load of a certificate folder.
public final class IntermediateCertificates: Sendable {
    private let parsed = Mutex<[[UInt8]: X509Certificate]>([:])

    /// Creates an empty cache.
    public init() {}

    /// The certificate with these DER bytes, parsed on first use; `nil` when they do not parse.
    func certificate(der: UnsafeBufferPointer<UInt8>) -> X509Certificate? {
        let key = Array(der)
        if let known = parsed.withLock({ $0[key] }) { return known }
        guard let certificate = X509Certificate(parsing: der) else { return nil }
        // Two threads may parse the same bytes at once; both get the copy stored first.
        return parsed.withLock { cache in
            if let known = cache[key] { return known }
            cache[key] = certificate
            return certificate
        }
    }
}

extension X509Certificate {
    /// Parses one DER certificate, or `nil` (errors stay on OpenSSL's queue for the caller to drop).
    convenience init?(parsing der: UnsafeBufferPointer<UInt8>) {
        var cursor: UnsafePointer<UInt8>? = der.baseAddress
        guard let x509 = d2i_X509(nil, &cursor, der.count) else { return nil }
        self.init(taking: x509)
    }
}
