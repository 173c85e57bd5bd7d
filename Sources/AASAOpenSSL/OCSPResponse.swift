internal import COpenSSL
internal import CShims.OpenSSL

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif

/// A DER-encoded OCSP response (RFC 6960) read from a staple file, checked before it is stapled.
///
/// Stapling a response that does not verify would make clients that check staples refuse the
/// connection, so ``validate(leaf:issuer:now:)`` checks everything a client checks: the response
/// is `successful`, answers for this leaf's serial and issuer, says `good`, is inside its validity
/// window, and is signed by the issuer or a responder the issuer delegated to.
public struct OCSPResponse: Sendable {
    /// The response as read.
    public let der: [UInt8]

    /// Keeps `der` for checking; nothing is parsed until ``validate(leaf:issuer:now:)``.
    public init(derEncoded der: [UInt8]) {
        self.der = der
    }

    /// What a valid response says.
    public struct Validity: Sendable, Equatable {
        /// When the responder produced the status.
        public var thisUpdate: Date
        /// When a newer status is due: stop stapling this one then.
        public var nextUpdate: Date
    }

    /// Checks the response for `leaf`, issued by `issuer`, at `now`.
    ///
    /// - Throws: ``OpenSSLError`` `ocsp-response` saying what is wrong and how to get a fresh response.
    public func validate(leaf: X509Certificate, issuer: X509Certificate, now: Date = Date()) throws -> Validity {
        let response = try der.withUnsafeBufferPointer { buffer -> OpaquePointer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            guard let parsed = d2i_OCSP_RESPONSE(nil, &cursor, buffer.count) else {
                throw OpenSSLError(.malformedDER, "the file is not a DER OCSP response (\(buffer.count) bytes)")
            }
            return parsed
        }
        defer { OCSP_RESPONSE_free(response) }
        let status = OCSP_response_status(response)
        guard status == OCSP_RESPONSE_STATUS_SUCCESSFUL else {
            throw OpenSSLError(
                .ocspResponse,
                "the responder answered '\(String(cString: OCSP_response_status_str(Int(status))))', not 'successful'")
        }
        guard let basic = OCSP_response_get1_basic(response) else {
            throw OpenSSLError(.ocspResponse, "the response holds no basic OCSP response")
        }
        defer { OCSP_BASICRESP_free(basic) }
        try verifySignature(basic, issuer: issuer)

        guard let id = OCSP_cert_to_id(nil, leaf.pointer, issuer.pointer) else {
            throw OpenSSLError(.ocspResponse, "cannot build the OCSP certificate ID of the leaf")
        }
        defer { OCSP_CERTID_free(id) }
        var certificateStatus: Int32 = -1
        var reason: Int32 = -1
        var revoked: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>? = nil
        var thisUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>? = nil
        var nextUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>? = nil
        guard OCSP_resp_find_status(basic, id, &certificateStatus, &reason, &revoked, &thisUpdate, &nextUpdate) == 1
        else {
            throw OpenSSLError(
                .ocspResponse, "the response is about another certificate (no status for this leaf's serial number)")
        }
        guard certificateStatus == V_OCSP_CERTSTATUS_GOOD else {
            let text = String(cString: OCSP_cert_status_str(Int(certificateStatus)))
            throw OpenSSLError(.ocspResponse, "the responder says the certificate is '\(text)'")
        }
        guard let thisUpdate, let nextUpdate else {
            throw OpenSSLError(
                .ocspResponse, "the response has no nextUpdate, so nobody can tell when it goes stale")
        }
        let thisDate = ASN1Text.date(UnsafePointer(thisUpdate))
        let nextDate = ASN1Text.date(UnsafePointer(nextUpdate))
        // Five minutes of clock skew either way, as `openssl ocsp -validity_period` allows by default.
        guard thisDate <= now.addingTimeInterval(300) else {
            throw OpenSSLError(.ocspResponse, "the response is dated in the future (thisUpdate \(thisDate))")
        }
        guard nextDate > now else {
            throw OpenSSLError(.ocspResponse, "the response went stale at \(nextDate) (its nextUpdate)")
        }
        return Validity(thisUpdate: thisDate, nextUpdate: nextDate)
    }

    /// The responder must be the issuer, or hold a certificate from the issuer with the OCSPSigning purpose.
    private func verifySignature(_ basic: OpaquePointer, issuer: X509Certificate) throws {
        guard let store = X509_STORE_new() else { throw OpenSSLError(.ocspResponse, "out of memory") }
        defer { X509_STORE_free(store) }
        // The issuer is the trust anchor for this check (it may be an intermediate, hence PARTIAL_CHAIN);
        // whether the issuer itself is trusted is the TLS client's business.
        X509_STORE_add_cert(store, issuer.pointer)
        X509_STORE_set_flags(store, UInt(X509_V_FLAG_PARTIAL_CHAIN))
        guard let others = cshims_sk_X509_new_null() else { throw OpenSSLError(.ocspResponse, "out of memory") }
        defer { sk_X509_free_shim(others) }
        X509_up_ref(issuer.pointer)
        _ = cshims_sk_X509_push(others, issuer.pointer)
        guard OCSP_basic_verify(basic, others, store, 0) == 1 else {
            throw OpenSSLError(
                .ocspResponse, "the response is not signed by the certificate's issuer or a responder it delegated to")
        }
    }
}

/// Frees a stack made by `cshims_sk_X509_new_null` and the references it holds.
private func sk_X509_free_shim(_ stack: OpaquePointer) {
    cshims_sk_X509_pop_free(stack)
}

extension X509Certificate {
    /// The OCSP responder URLs of the Authority Information Access extension (empty when it names none).
    public var ocspResponderURLs: [String] {
        guard let stack = X509_get1_ocsp(pointer) else { return [] }
        defer { X509_email_free(stack) }
        return (0..<cshims_sk_OPENSSL_STRING_num(stack)).compactMap { index in
            cshims_sk_OPENSSL_STRING_value(stack, index).map { String(cString: $0) }
        }
    }
}
