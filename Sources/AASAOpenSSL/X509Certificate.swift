import AASACore
internal import COpenSSL
internal import CShims.OpenSSL

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// An X.509 certificate (owns one OpenSSL `X509`).
///
/// Immutable after creation; OpenSSL's read accessors on a finished `X509` are safe to call from
/// several threads, hence `@unchecked Sendable`.
public final class X509Certificate: @unchecked Sendable {
    /// The owned `X509*`, freed in `deinit`.
    let pointer: OpaquePointer

    /// Takes ownership of `pointer`.
    init(taking pointer: OpaquePointer) {
        self.pointer = pointer
    }

    deinit { X509_free(pointer) }

    /// Parses the first certificate in PEM text (`-----BEGIN CERTIFICATE-----`).
    public convenience init(pemEncoded bytes: [UInt8]) throws {
        let parsed = try MemoryBIO.reading(bytes) { bio -> OpaquePointer in
            guard let x509 = PEM_read_bio_X509(bio, nil, nil, nil) else {
                throw OpenSSLError(.malformedPEM, "no PEM certificate found (expected '-----BEGIN CERTIFICATE-----')")
            }
            return x509
        }
        self.init(taking: parsed)
    }

    /// Parses the first certificate in PEM text.
    public convenience init(pemEncoded text: String) throws {
        try self.init(pemEncoded: Array(text.utf8))
    }

    /// Parses one DER-encoded certificate.
    public convenience init(derEncoded bytes: [UInt8]) throws {
        let parsed = try bytes.withUnsafeBufferPointer { buffer -> OpaquePointer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let x509 = d2i_X509(nil, &cursor, buffer.count) else {
                throw OpenSSLError(.malformedDER, "bytes are not a DER certificate (\(buffer.count) bytes)")
            }
            return x509
        }
        self.init(taking: parsed)
    }

    // MARK: Names

    /// The subject's common name (CN), or `nil` when the subject has none.
    public var subjectCommonName: String? {
        guard let name = X509_get_subject_name(pointer) else { return nil }
        let index = X509_NAME_get_index_by_NID(name, NID_commonName, -1)
        guard index >= 0, let entry = X509_NAME_get_entry(name, index),
            let data = X509_NAME_ENTRY_get_data(entry)
        else { return nil }
        return ASN1Text.string(data)
    }

    /// The subject distinguished name in RFC 2253 form, e.g. `CN=a.test`.
    public var subjectName: String { Self.format(X509_get_subject_name(pointer)) }

    /// The issuer distinguished name in RFC 2253 form, e.g. `CN=aasa-server development CA (host)`.
    public var issuerName: String { Self.format(X509_get_issuer_name(pointer)) }

    /// DNS names from the subjectAltName extension, in certificate order (wildcards kept as `*.example.com`).
    public var dnsNames: [String] {
        subjectAltNames.compactMap { if case .dns(let name) = $0 { name } else { nil } }
    }

    /// The DNS names and IP addresses of the subjectAltName extension, read in one pass.
    public var subjectAlternativeNames: SubjectAlternativeNames {
        var names = SubjectAlternativeNames()
        for name in subjectAltNames {
            switch name {
            case .dns(let text): names.dnsNames.append(text)
            case .ip(let text): names.ipAddresses.append(text)
            }
        }
        return names
    }

    /// IP addresses from the subjectAltName extension as text (`127.0.0.1`, `::1`).
    public var ipAddresses: [String] {
        subjectAltNames.compactMap { if case .ip(let address) = $0 { address } else { nil } }
    }

    // MARK: Validity and constraints

    /// Start of the validity period.
    public var notBefore: Date { ASN1Text.date(X509_get0_notBefore(pointer)) }

    /// End of the validity period.
    public var notAfter: Date { ASN1Text.date(X509_get0_notAfter(pointer)) }

    /// Whether basicConstraints says `CA:TRUE`.
    public var isCA: Bool { (X509_get_extension_flags(pointer) & UInt32(EXFLAG_CA)) != 0 }

    // MARK: Key and encodings

    /// The public key's algorithm and size, e.g. `ECDSA P-256` or `RSA 2048`.
    public var publicKeyDescription: String {
        guard let key = X509_get0_pubkey(pointer) else { return "unknown" }
        return KeyAlgorithm(key).description(bits: Int(EVP_PKEY_get_bits(key)))
    }

    /// The public key size in bits (256 for P-256, 2048 for RSA-2048).
    public var publicKeyBits: Int {
        guard let key = X509_get0_pubkey(pointer) else { return 0 }
        return Int(EVP_PKEY_get_bits(key))
    }

    /// SHA-256 over the DER encoding as uppercase hex pairs joined by `:` (as `openssl x509 -fingerprint -sha256`).
    public var sha256Fingerprint: String {
        (try? derEncoded()).map { SHA256Fingerprint(der: $0).description } ?? ""
    }

    /// The certificate as PEM text.
    public func pemEncoded() throws -> String {
        let bytes = try MemoryBIO.collecting(OpenSSLError(.encoding, "could not PEM-encode certificate \(subjectName)"))
        {
            PEM_write_bio_X509($0, pointer)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The certificate as DER bytes.
    public func derEncoded() throws -> [UInt8] {
        var output: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_X509(pointer, &output)
        guard length > 0, let output else {
            throw OpenSSLError(.encoding, "could not DER-encode certificate \(subjectName)")
        }
        defer { cshims_OPENSSL_free(output) }
        return Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    /// The serial number's DER content octets (a leading zero when the high bit is set), as ACME Renewal
    /// Information's certificate identifier takes it (RFC 9773 §4.1).
    public var serialNumberOctets: [UInt8] {
        let serial = X509_get0_serialNumber(pointer)
        guard let data = ASN1_STRING_get0_data(serial) else { return [] }
        let magnitude = Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(serial))))
        return (magnitude.first ?? 0x80) >= 0x80 ? [0] + magnitude : magnitude
    }

    /// The keyIdentifier of the authority key identifier extension, or `nil` without one (RFC 5280 §4.2.1.1).
    public var authorityKeyIdentifier: [UInt8]? {
        guard let identifier = X509_get0_authority_key_id(pointer), let data = ASN1_STRING_get0_data(identifier)
        else { return nil }
        return Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(identifier))))
    }

    // MARK: Hostname matching

    /// Whether this certificate is valid for `hostname` by its subjectAltName (RFC 6125 §6.4; the rules are
    /// ``SubjectAlternativeNames/covers(hostname:)``).
    public func covers(hostname: String) -> Bool {
        subjectAlternativeNames.covers(hostname: hostname)
    }

    // MARK: Private helpers

    enum SubjectAltName {
        case dns(String)
        case ip(String)
    }

    var subjectAltNames: [SubjectAltName] {
        guard let raw = X509_get_ext_d2i(pointer, NID_subject_alt_name, nil, nil) else {
            OpenSSLError.drainErrorQueue()
            return []
        }
        let names = OpaquePointer(raw)
        defer { cshims_GENERAL_NAMES_free(names) }
        var result: [SubjectAltName] = []
        for index in 0..<cshims_sk_GENERAL_NAME_num(names) {
            guard let name = cshims_sk_GENERAL_NAME_value(names, index) else { continue }
            switch name.pointee.type {
            case GEN_DNS:
                if let text = ASN1Text.string(name.pointee.d.dNSName) { result.append(.dns(text)) }
            case GEN_IPADD:
                guard let octets = name.pointee.d.iPAddress,
                    let data = ASN1_STRING_get0_data(octets)
                else { continue }
                let bytes = Array(UnsafeBufferPointer(start: data, count: Int(ASN1_STRING_length(octets))))
                if let text = IPAddressText.format(bytes) { result.append(.ip(text)) }
            default:
                continue
            }
        }
        return result
    }

    static func format(_ name: OpaquePointer?) -> String {
        guard let name else { return "" }
        let flags = cshims_name_print_flags_rfc2253_utf8()
        let bytes = try? MemoryBIO.collecting(OpenSSLError(.encoding, "could not print a distinguished name")) {
            X509_NAME_print_ex($0, name, 0, flags) >= 0 ? 1 : 0
        }
        return String(decoding: bytes ?? [], as: UTF8.self)
    }
}
