internal import AASACore
internal import COpenSSL
internal import CShims.OpenSSL

/// A PKCS#10 certificate signing request (RFC 2986) for DNS names: what ACME's finalize sends (RFC 8555 §7.4).
public struct CertificateSigningRequest: Sendable {
    /// The DER encoding of the `CertificationRequest`.
    public let der: [UInt8]

    /// ``der`` as unpadded base64url: the `csr` member of a finalize request (RFC 8555 §7.4).
    public var base64URL: String { Base64URL.encode(der) }

    /// A request for `dnsNames`, signed by `key` with SHA-256, whose public key it carries.
    ///
    /// Every name becomes a dNSName in a subjectAltName extension request (RFC 2985 §5.4.2); the first is also the
    /// subject CN when it fits its 64-character bound (RFC 5280 Appendix A). ACME reads the names from the
    /// extension (RFC 8555 §7.4), and each must be an identifier of the order.
    public init(key: PrivateKey, dnsNames: [String]) throws {
        guard !dnsNames.isEmpty else {
            throw OpenSSLError(.invalidName, "a certificate signing request needs at least one name")
        }
        let altNames = try dnsNames.map { name -> String in
            guard IPAddressText.normalized(name) == nil, DevCertificateAuthority.isValidDNSName(name) else {
                throw OpenSSLError(
                    .invalidName, "'\(name)' is not a DNS name (letters, digits, '-', '.', leading '*.')")
            }
            return "DNS:" + HostnamePattern.canonical(name)
        }
        guard let request = X509_REQ_new() else {
            throw OpenSSLError(.certificateCreation, "could not allocate a certificate signing request")
        }
        defer { X509_REQ_free(request) }
        func check(_ ok: Bool, _ what: @autoclosure () -> String) throws {
            if !ok { throw OpenSSLError(.certificateCreation, "could not set \(what()) of a signing request") }
        }
        try check(X509_REQ_set_version(request, Int(X509_REQ_VERSION_1)) == 1, "the version")
        guard let name = X509_NAME_new() else { throw OpenSSLError(.certificateCreation, "out of memory") }
        defer { X509_NAME_free(name) }
        let commonName = HostnamePattern.canonical(dnsNames[0])
        if commonName.utf8.count <= 64 {
            try check(
                X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8, commonName, -1, -1, 0) == 1,
                "subject CN='\(commonName)'")
        }
        try check(X509_REQ_set_subject_name(request, name) == 1, "the subject")
        try check(X509_REQ_set_pubkey(request, key.pointer) == 1, "the public key")
        try Self.requestExtension(NID_subject_alt_name, altNames.joined(separator: ","), in: request)
        try check(X509_REQ_sign(request, key.pointer, EVP_sha256()) > 0, "the signature")

        var output: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_X509_REQ(request, &output)
        guard length > 0, let output else {
            throw OpenSSLError(.encoding, "could not DER-encode a certificate signing request")
        }
        defer { cshims_OPENSSL_free(output) }
        der = Array(UnsafeBufferPointer(start: output, count: Int(length)))
    }

    /// Adds the extension `nid` with `value` in OpenSSL config syntax to the request's extensionRequest attribute.
    private static func requestExtension(_ nid: Int32, _ value: String, in request: OpaquePointer) throws {
        guard let extensions = cshims_sk_X509_EXTENSION_new_null() else {
            throw OpenSSLError(.certificateCreation, "out of memory")
        }
        defer { cshims_sk_X509_EXTENSION_pop_free(extensions) }
        guard let requested = X509V3_EXT_conf_nid(nil, nil, nid, value) else {
            throw OpenSSLError(.certificateCreation, "could not build extension '\(value)' of a signing request")
        }
        guard cshims_sk_X509_EXTENSION_push(extensions, requested) > 0 else {
            X509_EXTENSION_free(requested)  // the stack owns it only once pushed
            throw OpenSSLError(.certificateCreation, "out of memory")
        }
        guard X509_REQ_add_extensions(request, extensions) == 1 else {
            throw OpenSSLError(.certificateCreation, "could not add extension '\(value)' to a signing request")
        }
    }
}
