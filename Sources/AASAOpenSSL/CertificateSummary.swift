public import AASACore

#if canImport(FoundationEssentials)
    public import FoundationEssentials
#else
    public import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What serving a certificate chain needs to know of it, read from the PEM text in Swift: the names the leaf
/// covers, its validity, its fingerprint, and how many certificates the chain holds.
///
/// A server with thousands of domains reads every `fullchain.pem` at each start. Parsing them with OpenSSL 3.0
/// cost about 1.2 million instructions a leaf, most of it building decoder chains for the public key under
/// global locks the loading threads fight over (openssl/openssl#15199), for names and dates that sit in a few
/// hundred bytes of DER. This reads just those fields (``CertificateFields``); the GnuTLS import reads the
/// leaf's public key from the same fields, and refuses a private key that does not belong to it. OpenSSL stays
/// for what needs the whole certificate: OCSP staples, CMS signing, the development CA.
///
/// Reads RFC 5280's structure: `Certificate ::= SEQUENCE { tbsCertificate, … }` with the TBSCertificate fields
/// in order, the validity as UTCTime or GeneralizedTime, and the subjectAltName extension (2.5.29.17).
public struct CertificateSummary: Sendable {
    /// The leaf's DNS names and IP addresses from subjectAltName, in certificate order.
    public var subjectAlternativeNames: SubjectAlternativeNames
    /// The leaf's first subject common name (CN), or `nil`.
    public var subjectCommonName: String?
    /// Start of the leaf's validity.
    public var notBefore: Date
    /// End of the leaf's validity.
    public var notAfter: Date
    /// SHA-256 over the leaf's DER (as ``X509Certificate/sha256Fingerprint``).
    ///
    /// Made when the chain is read, on the thread reading it, instead of keeping the DER for it: a server keeps
    /// what it reads of every certificate folder until the load ends, and the DER was 0.5 KiB of each, freed
    /// in pieces too small to give back to the system (docs/benchmarks.md).
    public var fingerprint: SHA256Fingerprint
    /// The fingerprint as uppercase hex pairs joined by `:`.
    public var sha256Fingerprint: String { fingerprint.description }
    /// How many certificates the chain holds, the leaf included.
    public var certificateCount: Int

    /// The DNS names the leaf is served for: its subjectAltName DNS entries, or its CN when it has none
    /// (as ``X509Certificate/dnsNames`` and ``X509Certificate/subjectCommonName`` give them).
    public var names: [String] {
        let names = subjectAlternativeNames.dnsNames
        if names.isEmpty, let subjectCommonName { return [subjectCommonName] }
        return names
    }

    /// Reads the chain in `pem` (leaf first; `CERTIFICATE` or `X509 CERTIFICATE` blocks, other blocks skipped,
    /// as OpenSSL and GnuTLS read a chain).
    ///
    /// - Throws: ``OpenSSLError`` `.emptyChain` when there is no certificate block, `.malformedPEM` when the
    ///   text is not PEM, `.malformedDER` when the leaf is not an X.509 certificate. The reason names the part.
    public init(pemEncoded pem: [UInt8]) throws(OpenSSLError) {
        try self.init(certificates: Self.certificateBlocks(pem))
    }

    /// The certificate blocks of the PEM chain `pem`, decoded, for ``init(certificates:)`` and whoever else
    /// imports the same chain (one decoding for both).
    ///
    /// - Throws: ``OpenSSLError`` `.malformedPEM` when the text is not PEM.
    public static func certificateBlocks(_ pem: [UInt8]) throws(OpenSSLError) -> [PEMBlocks.Block] {
        do {
            return try PEMBlocks(pem).blocks.filter(\.isCertificate)
        } catch {
            throw OpenSSLError(.malformedPEM, "the PEM chain is malformed: \(error.reason)")
        }
    }

    /// Reads a chain's certificate blocks (``certificateBlocks(_:)``), leaf first.
    ///
    /// - Throws: ``OpenSSLError`` `.emptyChain` when there is no block, `.malformedDER` when the leaf is not an
    ///   X.509 certificate or another block not one DER element.
    public init(certificates blocks: [PEMBlocks.Block]) throws(OpenSSLError) {
        self = try Self.read(certificates: blocks).summary
    }

    /// ``init(certificates:)``, with the leaf's fields it read them from (slices of the leaf's DER), for the
    /// import of the same chain to read the public key from without splitting the certificate again.
    package static func read(certificates blocks: [PEMBlocks.Block]) throws(OpenSSLError) -> (
        summary: CertificateSummary, leafFields: CertificateFields
    ) {
        guard let leaf = blocks.first else {
            throw OpenSSLError(
                .emptyChain, "no certificate in PEM input (expected '-----BEGIN CERTIFICATE-----', leaf first)")
        }
        for (index, block) in blocks.enumerated().dropFirst() {
            // The intermediates are GnuTLS's to parse; a block that is not even one DER SEQUENCE is reported here.
            var reader = DERReader(block.bytes[...])
            guard (try? reader.read(DERReader.Tag.sequence, "")) != nil, reader.isAtEnd else {
                throw OpenSSLError(.malformedDER, "certificate \(index + 1) in the PEM chain is not DER")
            }
        }
        do throws(DERReader.Failure) {
            let fields = try CertificateFields(der: leaf.bytes[...])
            return (try Self(leaf: leaf.bytes, fields: fields, count: blocks.count), fields)
        } catch {
            throw OpenSSLError(
                .malformedDER, "the leaf certificate (the first in the chain) is malformed: \(error.reason)")
        }
    }

    private init(leaf der: [UInt8], fields: CertificateFields, count: Int) throws(DERReader.Failure) {
        var validity = DERReader(fields.validity)
        let notBefore = try Self.time(validity.read(), "notBefore")
        let notAfter = try Self.time(validity.read(), "notAfter")
        let names = fields.value(ofExtension: Self.subjectAltNameOID)
        self.subjectAlternativeNames = try names.map(Self.subjectAlternativeNames) ?? SubjectAlternativeNames()
        self.subjectCommonName = try Self.commonName(fields.subject)
        self.notBefore = notBefore
        self.notAfter = notAfter
        fingerprint = SHA256Fingerprint(der: der)
        self.certificateCount = count
    }

    /// id-ce-subjectAltName, 2.5.29.17, as DER contents.
    private static let subjectAltNameOID: [UInt8] = [0x55, 0x1D, 0x11]
    /// id-at-commonName, 2.5.4.3, as DER contents.
    private static let commonNameOID: [UInt8] = [0x55, 0x04, 0x03]

    /// `GeneralNames ::= SEQUENCE OF GeneralName`: `dNSName [2] IA5String` and `iPAddress [7] OCTET STRING`;
    /// every other kind of name is skipped, as ``X509Certificate/subjectAlternativeNames`` skips it.
    private static func subjectAlternativeNames(_ extensionValue: ArraySlice<UInt8>) throws(DERReader.Failure)
        -> SubjectAlternativeNames
    {
        var wrapper = DERReader(extensionValue)
        var list = DERReader(try wrapper.read(DERReader.Tag.sequence, "subjectAltName"))
        var names = SubjectAlternativeNames()
        while !list.isAtEnd {
            let name = try list.read()
            switch name.tag {
            case DERReader.Tag.implicit(2):
                names.dnsNames.append(String(decoding: name.contents, as: UTF8.self))
            case DERReader.Tag.implicit(7):
                if let text = IPAddressText.format(Array(name.contents)) { names.ipAddresses.append(text) }
            default:
                continue
            }
        }
        return names
    }

    /// The first CN of `Name ::= SEQUENCE OF RelativeDistinguishedName` (`SET OF AttributeTypeAndValue`).
    private static func commonName(_ name: ArraySlice<UInt8>) throws(DERReader.Failure) -> String? {
        var relativeNames = DERReader(name)
        while !relativeNames.isAtEnd {
            var attributes = DERReader(try relativeNames.read(DERReader.Tag.set, "a name's RDN"))
            while !attributes.isAtEnd {
                var attribute = DERReader(try attributes.read(DERReader.Tag.sequence, "a name attribute"))
                let type = try attribute.read(DERReader.Tag.objectIdentifier, "a name attribute's type")
                let value = try attribute.read()
                if type.elementsEqual(commonNameOID) { return text(value) }
            }
        }
        return nil
    }

    /// A DirectoryString's text: UTF-8 and its ASCII subsets as they are, BMPString as UTF-16.
    private static func text(_ value: DERReader.Element) -> String {
        guard value.tag == DERReader.Tag.bmpString, value.contents.count % 2 == 0 else {
            return String(decoding: value.contents, as: UTF8.self)
        }
        let units = stride(from: value.contents.startIndex, to: value.contents.endIndex, by: 2).map {
            UInt16(value.contents[$0]) << 8 | UInt16(value.contents[$0 + 1])
        }
        return String(decoding: units, as: UTF16.self)
    }

    /// `Time ::= CHOICE { utcTime, generalTime }` in RFC 5280's DER forms: `YYMMDDHHMMSSZ` (years 1950–2049)
    /// and `YYYYMMDDHHMMSSZ`.
    private static func time(_ element: DERReader.Element, _ field: String) throws(DERReader.Failure) -> Date {
        let digits: Int
        switch element.tag {
        case DERReader.Tag.utcTime: digits = 12
        case DERReader.Tag.generalizedTime: digits = 14
        default: throw DERReader.Failure(reason: "\(field) is not a time")
        }
        let text = element.contents
        guard text.count == digits + 1, text.last == UInt8(ascii: "Z"),
            text.dropLast().allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else {
            throw DERReader.Failure(reason: "\(field) is not in UTC with seconds (…SSZ)")
        }
        var fields = text.dropLast().makeIterator()
        func number(_ width: Int) -> Int {
            var value = 0
            for _ in 0..<width { value = value * 10 + Int(fields.next()! - UInt8(ascii: "0")) }
            return value
        }
        var year = number(digits - 10)
        if digits == 12 { year += year < 50 ? 2000 : 1900 }
        let (month, day, hour, minute, second) = (number(2), number(2), number(2), number(2), number(2))
        guard (1...12).contains(month), (1...31).contains(day), hour < 24, minute < 60, second < 61 else {
            throw DERReader.Failure(reason: "\(field) is not a valid date")
        }
        let seconds = HTTPDate.seconds(
            year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}
