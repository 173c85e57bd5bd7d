internal import COpenSSL

/// Builds and signs X.509 v3 certificates. Internal: ``DevCertificateAuthority`` is the public face.
struct CertificateBuilder {
    /// Subject attributes as (short name, value), e.g. `("CN", "a.test")`.
    var subject: [(String, String)]
    /// Seconds from now to the start of validity (negative backdates against clock skew).
    var notBeforeOffset: Int
    /// Length of the validity period in days.
    var validityDays: Int
    /// Extensions in OpenSSL config syntax, by NID, added in order.
    var extensions: [(Int32, String)]

    /// Builds a certificate for `publicKey`, signed by `issuerKey`.
    ///
    /// `issuer` is the issuing certificate, or `nil` for a self-signed one (then `publicKey` must be `issuerKey`).
    func sign(publicKey: PrivateKey, issuer: X509Certificate?, issuerKey: PrivateKey) throws -> X509Certificate {
        guard let x509 = X509_new() else {
            throw OpenSSLError(.certificateCreation, "could not allocate a certificate")
        }
        let certificate = X509Certificate(taking: x509)  // owns x509 from here on, also on throw
        func check(_ ok: Bool, _ what: @autoclosure () -> String) throws {
            if !ok { throw OpenSSLError(.certificateCreation, "could not set \(what()) of a new certificate") }
        }
        try check(X509_set_version(x509, Int(X509_VERSION_3)) == 1, "the version")
        try check(Self.setRandomSerial(x509), "the serial number")
        try check(X509_gmtime_adj(X509_getm_notBefore(x509), notBeforeOffset) != nil, "notBefore")
        try check(
            X509_time_adj_ex(X509_getm_notAfter(x509), Int32(validityDays), notBeforeOffset, nil) != nil,
            "notAfter")
        guard let name = X509_NAME_new() else { throw OpenSSLError(.certificateCreation, "out of memory") }
        defer { X509_NAME_free(name) }
        for (field, value) in subject {
            try check(
                X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, value, -1, -1, 0) == 1,
                "subject \(field)='\(value)'")
        }
        try check(X509_set_subject_name(x509, name) == 1, "the subject")
        try check(
            X509_set_issuer_name(x509, issuer.map { X509_get_subject_name($0.pointer) } ?? name) == 1, "the issuer")
        try check(X509_set_pubkey(x509, publicKey.pointer) == 1, "the public key")

        // The issuer must be known to the extension context so authorityKeyIdentifier can copy its
        // subjectKeyIdentifier; for a self-signed certificate that is the certificate itself.
        var context = X509V3_CTX()
        X509V3_set_ctx(&context, issuer?.pointer ?? x509, x509, nil, nil, 0)
        for (nid, value) in extensions {
            guard let extensionValue = X509V3_EXT_conf_nid(nil, &context, nid, value) else {
                throw OpenSSLError(.certificateCreation, "could not build extension \(Self.name(nid))='\(value)'")
            }
            defer { X509_EXTENSION_free(extensionValue) }
            try check(X509_add_ext(x509, extensionValue, -1) == 1, "extension \(Self.name(nid))")
        }
        try check(X509_sign(x509, issuerKey.pointer, EVP_sha256()) > 0, "the signature")
        return certificate
    }

    /// 159 random bits as a positive serial (RFC 5280 §4.1.2.2 allows 20 octets; CA/B requires 64 random bits).
    private static func setRandomSerial(_ x509: OpaquePointer) -> Bool {
        var bytes = [UInt8](repeating: 0, count: 20)
        guard RAND_bytes(&bytes, Int32(bytes.count)) == 1 else { return false }
        bytes[0] &= 0x7f  // keep it positive
        bytes[0] |= 0x01  // and 20 octets long, so it never encodes shorter by accident
        guard let number = BN_bin2bn(bytes, Int32(bytes.count), nil) else { return false }
        defer { BN_free(number) }
        return BN_to_ASN1_INTEGER(number, X509_get_serialNumber(x509)) != nil
    }

    private static func name(_ nid: Int32) -> String {
        OBJ_nid2sn(nid).map { String(cString: $0) } ?? "nid \(nid)"
    }
}
