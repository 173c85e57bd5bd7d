internal import AASACore
internal import CGnuTLS

/// A leaf certificate's public key as the numbers GnuTLS imports it from (`gnutls_pubkey_import_ecc_raw`,
/// `gnutls_pubkey_import_rsa_raw`), and its key usage as GnuTLS reads it, from the certificate's DER in Swift.
///
/// `gnutls_pcert_import_x509_raw` decodes the whole certificate with libtasn1, into a tree it first builds from
/// the PKIX module, to keep two things: the DER, which the handshake sends as it is, and the public key, which
/// picks the signature scheme and is checked against the private key. At 100,000 certificate folders that
/// decoding was the largest single cost of a start (docs/benchmarks.md). This reads the same fields, only for
/// the keys GnuTLS reads into the same numbers either way: ECDSA on P-256, P-384 or P-521 with an uncompressed
/// point (SEC 1 §2.3.3, as GnuTLS's `_gnutls_ecc_ansi_x962_import` takes it), and RSA (`rsaEncryption`, RFC 8017
/// A.1.1). Anything else, or anything unexpected in those, gives `nil`, and GnuTLS imports that certificate
/// itself.
struct LeafPublicKey {
    /// The key's numbers, as big-endian unsigned integers.
    enum Parameters {
        case ecdsa(curve: gnutls_ecc_curve_t, x: ArraySlice<UInt8>, y: ArraySlice<UInt8>)
        case rsa(modulus: ArraySlice<UInt8>, exponent: ArraySlice<UInt8>)
    }

    var parameters: Parameters
    /// The keyUsage extension (2.5.29.15) as `gnutls_x509_crt_get_key_usage` gives it: the bit string's first
    /// byte, then its second shifted by 8 (the `GNUTLS_KEY_*` flags); 0 without the extension.
    var keyUsage: UInt32

    /// Reads the key of the DER certificate `der`; `nil` for a key GnuTLS is left to import.
    init?(certificate der: [UInt8]) {
        guard let fields = try? CertificateFields(der: der[...]) else { return nil }
        self.init(fields: fields)
    }

    /// Reads the key of the certificate split into `fields`; `nil` for a key GnuTLS is left to import.
    init?(fields: CertificateFields) {
        typealias Tag = DERReader.Tag
        do throws(DERReader.Failure) {
            var info = DERReader(fields.subjectPublicKeyInfo)
            var algorithm = DERReader(try info.read(Tag.sequence, "algorithm"))
            let identifier = try algorithm.read(Tag.objectIdentifier, "algorithm")
            let bitString = try info.read(Tag.bitString, "subjectPublicKey")
            // Whole bytes only, and nothing after the key.
            guard info.isAtEnd, bitString.first == 0 else { return nil }
            let key = bitString.dropFirst()
            if identifier.elementsEqual(Self.ecPublicKey) {
                let named = try algorithm.read(Tag.objectIdentifier, "namedCurve")
                guard algorithm.isAtEnd, let known = Self.curves.first(where: { named.elementsEqual($0.oid) }),
                    key.count == 1 + 2 * known.size, key.first == 0x04
                else { return nil }
                parameters = .ecdsa(
                    curve: known.curve, x: key.dropFirst().prefix(known.size), y: key.suffix(known.size))
            } else if identifier.elementsEqual(Self.rsaEncryption) {
                _ = try algorithm.readIfPresent(Tag.null)
                guard algorithm.isAtEnd else { return nil }
                var wrapper = DERReader(key)
                var numbers = DERReader(try wrapper.read(Tag.sequence, "RSAPublicKey"))
                let modulus = try numbers.read(Tag.integer, "modulus")
                let exponent = try numbers.read(Tag.integer, "publicExponent")
                guard wrapper.isAtEnd, numbers.isAtEnd else { return nil }
                parameters = .rsa(modulus: modulus, exponent: exponent)
            } else {
                return nil
            }
            keyUsage = 0
            if let value = fields.value(ofExtension: Self.keyUsageOID) {
                var wrapper = DERReader(value)
                let bits = try wrapper.read(Tag.bitString, "keyUsage")
                // GnuTLS reads at most two bytes of flags; a longer string is its to judge.
                guard wrapper.isAtEnd, (1...3).contains(bits.count) else { return nil }
                let flags = bits.dropFirst()
                keyUsage = UInt32(flags.first ?? 0) | UInt32(flags.dropFirst().first ?? 0) << 8
            }
        } catch {
            return nil
        }
    }

    /// The named curve's object identifier (DER contents) of an ECDSA key; `nil` for RSA.
    var curveIdentifier: [UInt8]? {
        guard case .ecdsa(let curve, _, _) = parameters else { return nil }
        return Self.curves.first { $0.curve == curve }?.oid
    }

    /// A public key GnuTLS holds these numbers in, with the certificate's key usage.
    func imported() -> gnutls_pubkey_t? {
        var key: gnutls_pubkey_t? = nil
        guard gnutls_pubkey_init(&key) >= 0, let key else { return nil }
        func datum<R>(_ bytes: ArraySlice<UInt8>, _ body: (inout gnutls_datum_t) -> R) -> R {
            bytes.withUnsafeBytes { raw in
                var datum = gnutls_datum_t(
                    data: UnsafeMutablePointer(mutating: raw.bindMemory(to: UInt8.self).baseAddress),
                    size: UInt32(raw.count))
                return body(&datum)
            }
        }
        let result =
            switch parameters {
            case .ecdsa(let curve, let x, let y):
                datum(x) { x in datum(y) { y in gnutls_pubkey_import_ecc_raw(key, curve, &x, &y) } }
            case .rsa(let modulus, let exponent):
                datum(modulus) { m in datum(exponent) { e in gnutls_pubkey_import_rsa_raw(key, &m, &e) } }
            }
        guard result >= 0, gnutls_pubkey_set_key_usage(key, keyUsage) >= 0 else {
            gnutls_pubkey_deinit(key)
            return nil
        }
        return key
    }

    /// id-ecPublicKey, 1.2.840.10045.2.1 (RFC 5480), as DER contents.
    static let ecPublicKey: [UInt8] = [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]
    /// rsaEncryption, 1.2.840.113549.1.1.1 (RFC 8017), as DER contents.
    private static let rsaEncryption: [UInt8] = [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01]
    /// id-ce-keyUsage, 2.5.29.15, as DER contents.
    private static let keyUsageOID: [UInt8] = [0x55, 0x1D, 0x0F]
    /// The named curves imported here (RFC 5480 §2.1.1.1), with the size of one coordinate in bytes.
    static let curves: [(oid: [UInt8], curve: gnutls_ecc_curve_t, size: Int)] = [
        ([0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07], GNUTLS_ECC_CURVE_SECP256R1, 32),
        ([0x2B, 0x81, 0x04, 0x00, 0x22], GNUTLS_ECC_CURVE_SECP384R1, 48),
        ([0x2B, 0x81, 0x04, 0x00, 0x23], GNUTLS_ECC_CURVE_SECP521R1, 66),
    ]
}
