internal import AASACore

/// The public key an ECDSA private key's DER carries beside its secret, read in Swift: SEC 1's `ECPrivateKey`
/// (RFC 5915), alone or inside PKCS #8's `PrivateKeyInfo` (RFC 5958), with its optional `publicKey`, as OpenSSL,
/// certbot, lego and this server's own ACME client write them.
///
/// GnuTLS reads the same point from the same field when it imports such a key (it derives one only when the field
/// is absent), and compares it with the leaf's to tell whether key and certificate belong together. A start that
/// checks every certificate folder compares the two here instead: importing a key runs libtasn1 over the PKCS #8
/// module, the largest single cost of reading a certificate folder. Anything else, or anything unexpected in these
/// (another version, curve or point form, a secret of the wrong length, bytes left over), gives `nil`, and the key
/// is imported by GnuTLS as before.
struct EmbeddedPublicKey {
    /// The named curve's object identifier, as DER contents.
    var curve: ArraySlice<UInt8>
    /// The uncompressed point: 0x04, then x and y, each the curve's size.
    var point: ArraySlice<UInt8>

    /// Reads the point of the unencrypted key `der`; `nil` for a key GnuTLS is left to read.
    init?(der: [UInt8]) {
        typealias Tag = DERReader.Tag
        do throws(DERReader.Failure) {
            var whole = DERReader(der[...])
            var key = DERReader(try whole.read(Tag.sequence, "key"))
            guard whole.isAtEnd else { return nil }
            let version = try key.read(Tag.integer, "version")
            var named: ArraySlice<UInt8>?
            var sec1 = key
            if key.nextTag == Tag.sequence {
                // PKCS #8: version 0, the algorithm and its curve, and SEC 1's structure in an octet string.
                guard version.elementsEqual([0]) else { return nil }
                var algorithm = DERReader(try key.read(Tag.sequence, "privateKeyAlgorithm"))
                guard try algorithm.read(Tag.objectIdentifier, "algorithm").elementsEqual(LeafPublicKey.ecPublicKey)
                else {
                    return nil
                }
                named = try algorithm.read(Tag.objectIdentifier, "namedCurve")
                var inner = DERReader(try key.read(Tag.octetString, "privateKey"))
                // Attributes or a version 2 public key after it are GnuTLS's to read.
                guard algorithm.isAtEnd, key.isAtEnd else { return nil }
                sec1 = DERReader(try inner.read(Tag.sequence, "ECPrivateKey"))
                guard inner.isAtEnd, try sec1.read(Tag.integer, "version").elementsEqual([1]) else { return nil }
            } else {
                guard version.elementsEqual([1]) else { return nil }
            }
            let secret = try sec1.read(Tag.octetString, "privateKey")
            if let parameters = try sec1.readIfPresent(Tag.explicit(0)) {
                var wrapper = DERReader(parameters)
                let curve = try wrapper.read(Tag.objectIdentifier, "namedCurve")
                // Both places name a curve: they must name the same one.
                guard wrapper.isAtEnd, named.map({ $0.elementsEqual(curve) }) ?? true else { return nil }
                named = curve
            }
            guard let publicKey = try sec1.readIfPresent(Tag.explicit(1)), sec1.isAtEnd, let named,
                let size = LeafPublicKey.curves.first(where: { named.elementsEqual($0.oid) })?.size,
                secret.count == size, secret.contains(where: { $0 != 0 })
            else { return nil }
            var wrapper = DERReader(publicKey)
            let bits = try wrapper.read(Tag.bitString, "publicKey")
            // Whole bytes, an uncompressed point of the curve's size, nothing after it.
            guard wrapper.isAtEnd, bits.count == 2 + 2 * size, bits.first == 0, bits.dropFirst().first == 0x04 else {
                return nil
            }
            curve = named
            point = bits.dropFirst()
        } catch {
            return nil
        }
    }

    /// Whether this is the key of `leaf`: the same curve and point. `nil` when the leaf's key is not ECDSA as
    /// ``LeafPublicKey`` reads it (GnuTLS then compares).
    func belongs(to leaf: LeafPublicKey) -> Bool? {
        guard case .ecdsa(_, let x, let y) = leaf.parameters, let leafCurve = leaf.curveIdentifier else { return nil }
        let coordinates = point.dropFirst()
        return leafCurve.elementsEqual(curve) && coordinates.count == x.count + y.count
            && coordinates.prefix(x.count).elementsEqual(x) && coordinates.suffix(y.count).elementsEqual(y)
    }
}
