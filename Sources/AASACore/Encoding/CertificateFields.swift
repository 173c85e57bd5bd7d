/// The fields of an X.509 certificate's `tbsCertificate` that serving it needs, as slices of its DER
/// (RFC 5280 §4.1): read in order, each checked to have its type, nothing decoded beyond that.
///
/// ``CertificateSummary`` reads the names and dates from these; the GnuTLS import reads the public key and its
/// key usage from the same fields, so both see one parse of one structure.
package struct CertificateFields {
    /// `Validity ::= SEQUENCE { notBefore Time, notAfter Time }`: its contents.
    package var validity: ArraySlice<UInt8>
    /// The subject `Name`'s contents (`SEQUENCE OF RelativeDistinguishedName`).
    package var subject: ArraySlice<UInt8>
    /// The `SubjectPublicKeyInfo`'s contents: `algorithm AlgorithmIdentifier, subjectPublicKey BIT STRING`.
    package var subjectPublicKeyInfo: ArraySlice<UInt8>
    /// Each extension's `extnID` contents and `extnValue` contents, in certificate order.
    package var extensions: [(identifier: ArraySlice<UInt8>, value: ArraySlice<UInt8>)] = []

    /// Splits the DER certificate `der`.
    ///
    /// - Throws: ``DERReader/Failure`` naming the first field that is missing, of the wrong type, or cut short,
    ///   and when bytes follow the certificate.
    package init(der: ArraySlice<UInt8>) throws(DERReader.Failure) {
        typealias Tag = DERReader.Tag
        var outer = DERReader(der)
        var certificate = DERReader(try outer.read(Tag.sequence, "Certificate"))
        guard outer.isAtEnd else { throw DERReader.Failure(reason: "bytes follow the certificate") }
        var tbs = DERReader(try certificate.read(Tag.sequence, "tbsCertificate"))
        _ = try tbs.readIfPresent(Tag.explicit(0))  // version
        _ = try tbs.read(Tag.integer, "serialNumber")
        _ = try tbs.read(Tag.sequence, "signature")
        _ = try tbs.read(Tag.sequence, "issuer")
        validity = try tbs.read(Tag.sequence, "validity")
        subject = try tbs.read(Tag.sequence, "subject")
        subjectPublicKeyInfo = try tbs.read(Tag.sequence, "subjectPublicKeyInfo")
        _ = try tbs.readIfPresent(Tag.implicit(1))  // issuerUniqueID
        _ = try tbs.readIfPresent(Tag.implicit(2))  // subjectUniqueID
        guard let wrapped = try tbs.readIfPresent(Tag.explicit(3)) else { return }
        var wrapper = DERReader(wrapped)
        var list = DERReader(try wrapper.read(Tag.sequence, "extensions"))
        // Room for a public CA's leaf at once (Let's Encrypt's have nine or ten), not grown one append at a time.
        extensions.reserveCapacity(12)
        while !list.isAtEnd {
            var field = DERReader(try list.read(Tag.sequence, "an extension"))
            let identifier = try field.read(Tag.objectIdentifier, "an extension's extnID")
            _ = try field.readIfPresent(Tag.boolean)  // critical
            extensions.append((identifier, try field.read(Tag.octetString, "an extension's extnValue")))
        }
    }

    /// The `extnValue` contents of the first extension whose `extnID` contents are `identifier`.
    package func value(ofExtension identifier: [UInt8]) -> ArraySlice<UInt8>? {
        extensions.first { $0.identifier.elementsEqual(identifier) }?.value
    }
}
