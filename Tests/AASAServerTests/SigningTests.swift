import AASACore
import AASAOpenSSL
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// A root → intermediate → leaf chain made with the real openssl CLI, as a public CA issues them.
struct TestChain {
    let directory = TemporaryDirectory("aasa-chain")
    var root: String { directory.path + "/root.pem" }
    var intermediate: String { directory.path + "/intermediate.pem" }
    var leaf: String { directory.path + "/leaf.pem" }
    var key: String { directory.path + "/leaf-key.pem" }

    /// Issues a leaf for `name` with a key made by `keyArguments` (`openssl genpkey` arguments).
    init(
        name: String = "shop.example",
        keyArguments: [String] = ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]
    )
        throws
    {
        let d = directory.path
        func openssl(_ arguments: [String]) throws {
            let output = try Command.run("openssl", arguments, currentDirectory: d)
            guard output.status == 0 else { throw TestFailure(message: output.stderr) }
        }
        try directory.write("ca.ext", "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n")
        try directory.write(
            "leaf.ext",
            "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                + "extendedKeyUsage=serverAuth\nsubjectAltName=DNS:\(name)\n")
        try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "root-key.pem"])
        try openssl([
            "req", "-x509", "-new", "-key", "root-key.pem", "-subj", "/CN=Test Root", "-days", "30", "-out", "root.pem",
            "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        ])
        try openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", "int-key.pem"])
        try openssl(["req", "-new", "-key", "int-key.pem", "-subj", "/CN=Test Intermediate", "-out", "int.csr"])
        try openssl([
            "x509", "-req", "-in", "int.csr", "-CA", "root.pem", "-CAkey", "root-key.pem", "-CAcreateserial", "-days",
            "30", "-extfile", "ca.ext", "-out", "intermediate.pem",
        ])
        try openssl(["genpkey"] + keyArguments + ["-out", "leaf-key.pem"])
        try openssl(["req", "-new", "-key", "leaf-key.pem", "-subj", "/CN=\(name)", "-out", "leaf.csr"])
        try openssl([
            "x509", "-req", "-in", "leaf.csr", "-CA", "intermediate.pem", "-CAkey", "int-key.pem", "-CAcreateserial",
            "-days", "30", "-extfile", "leaf.ext", "-out", "leaf.pem",
        ])
    }

    func identity(chain: Bool = true) throws -> AssociationSigner.Identity {
        let (identity, problems) = AssociationSigner.readIdentity(
            certificate: leaf, key: key, chain: chain ? intermediate : nil, domain: "shop.example")
        return try #require(identity, "\(problems)")
    }
}

struct TestFailure: Error { var message: String }

/// What the real openssl makes of a signed blob.
enum OpenSSLCMS {
    /// `openssl cms -verify -inform DER` with `arguments`; the recovered content, or `nil` when it fails.
    static func verify(_ signed: [UInt8], _ arguments: [String]) throws -> (content: [UInt8]?, stderr: String) {
        let directory = TemporaryDirectory("aasa-cms")
        let input = directory.path + "/signed.der"
        try Data(signed).write(to: URL(fileURLWithPath: input))
        let output = try Command.run(
            "openssl", ["cms", "-verify", "-inform", "DER", "-in", input, "-binary"] + arguments)
        return (output.status == 0 ? output.stdoutBytes : nil, output.stderr)
    }

    /// `openssl cms -cmsout -print -inform DER`.
    static func print(_ signed: [UInt8]) throws -> String {
        let directory = TemporaryDirectory("aasa-cms")
        let input = directory.path + "/signed.der"
        try Data(signed).write(to: URL(fileURLWithPath: input))
        return try Command.run("openssl", ["cms", "-cmsout", "-print", "-inform", "DER", "-in", input]).stdout
    }
}

@Suite struct SigningTests {
    static let content =
        Array(
            #"{"applinks":{"details":[{"appIDs":["ABCDE12345.com.example.shop"],"components":[{"/":"/buy/*"}]}]}}"#.utf8
        )
        + [0x0A, 0x0D, 0x0A]  // line ends that an S/MIME text mode would rewrite; binary mode keeps them

    func sign(_ chain: TestChain, _ content: [UInt8] = content) throws -> [UInt8] {
        let identity = try chain.identity()
        return try CMSSigner(
            certificate: identity.chain.leaf, key: identity.key, intermediates: Array(identity.chain.intermediates)
        ).sign(content)
    }

    @Test(arguments: [
        ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
        ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
    ])
    func signatureVerifiesWithRealOpenSSLAndRecoversTheExactBytes(key: [String]) throws {
        let chain = try TestChain(keyArguments: key)
        let signed = try sign(chain)
        let unverified = try OpenSSLCMS.verify(signed, ["-noverify"])
        #expect(unverified.content == Self.content, "\(unverified.stderr)")
        for purpose in ["sslserver", "any"] {
            let verified = try OpenSSLCMS.verify(signed, ["-CAfile", chain.root, "-purpose", purpose])
            #expect(verified.content == Self.content, "\(verified.stderr)")
        }
        // Without the intermediate in the blob, the chain could not be built from the root alone.
        let printed = try OpenSSLCMS.print(signed)
        #expect(printed.contains("signedAttrs:\n          <ABSENT>"), "\(printed)")
        #expect(printed.contains("sha256"))
        #expect(printed.contains("CN=Test Intermediate") || printed.contains("CN = Test Intermediate"))
        #expect(printed.contains("eContent:"))  // embedded, not detached
    }

    @Test func rsaSignaturesAreDeterministic() throws {
        let chain = try TestChain()
        #expect(try sign(chain) == (try sign(chain)))
    }

    @Test func aSignatureFromAnotherRootDoesNotVerify() throws {
        let chain = try TestChain()
        let other = try TestChain()
        let result = try OpenSSLCMS.verify(try sign(chain), ["-CAfile", other.root, "-purpose", "sslserver"])
        #expect(result.content == nil)
    }

    // MARK: Identity checks

    func findings(_ identity: AssociationSigner.Identity, domain: String = "shop.example", now: Date = Date())
        -> [Rule]
    {
        AssociationSigner.check(identity, domain: domain, now: now, knownRoots: []).map(\.rule)
    }

    @Test func aGoodIdentityHasNoFindings() throws {
        #expect(findings(try TestChain().identity()).isEmpty)
    }

    @Test func aKeyOfAnotherCertificateIsRefused() throws {
        let chain = try TestChain()
        let other = try TestChain()
        let (identity, _) = AssociationSigner.readIdentity(
            certificate: chain.leaf, key: other.key, chain: chain.intermediate, domain: nil)
        #expect(findings(try #require(identity)) == [.signingKeyMismatch])
    }

    @Test func anExpiredCertificateIsRefused() throws {
        let identity = try TestChain().identity()
        let rules = findings(identity, now: Date().addingTimeInterval(60 * 86_400))
        #expect(rules == [.signingExpired])
    }

    @Test func aCertificateForAnotherNameIsRefused() throws {
        let identity = try TestChain().identity()
        let found = AssociationSigner.check(identity, domain: "links.example", now: Date(), knownRoots: [])
        #expect(found.map(\.rule) == [.signingName])
        #expect(found.first?.message.contains("covers shop.example, not links.example") == true)
    }

    @Test func aLeafWithoutItsChainIsRefusedUnlessItsIssuerIsAKnownRoot() throws {
        let chain = try TestChain()
        let identity = try chain.identity(chain: false)
        let found = AssociationSigner.check(identity, domain: "shop.example", now: Date(), knownRoots: [])
        #expect(found.map(\.rule) == [.signingChain])
        #expect(found.first?.message.contains("Test Intermediate") == true)
        let intermediate = try X509Certificate(
            pemEncoded: Array(try Data(contentsOf: URL(fileURLWithPath: chain.intermediate))))
        #expect(
            AssociationSigner.check(identity, domain: "shop.example", now: Date(), knownRoots: [intermediate]).isEmpty)
    }

    @Test func aSmallRSAKeyIsRefused() throws {
        let identity = try TestChain(keyArguments: ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"]).identity()
        #expect(findings(identity) == [.signingKeySize])
    }

    @Test func theSizeLimitAppliesToTheSignedFile() throws {
        let chain = try TestChain()
        let directory = TemporaryDirectory("aasa-size")
        try directory.write(
            "certs/shop.example/fullchain.pem",
            try String(contentsOfFile: chain.leaf, encoding: .utf8)
                + String(contentsOfFile: chain.intermediate, encoding: .utf8))
        try directory.write("certs/shop.example/privkey.pem", try String(contentsOfFile: chain.key, encoding: .utf8))
        let signer = AssociationSigner(certificateDirectory: directory.path + "/certs")
        // Under the limit unsigned, over it once the signature and certificates are added.
        let content = Array(repeating: UInt8(ascii: " "), count: AssociationGenerator.sizeLimit - 100)
        let (signed, problems) = signer.sign(
            content, domain: "shop.example", signing: SigningConfig(), siteFile: "site.json", now: Date())
        #expect(signed == nil)
        #expect(problems.map(\.rule) == [.fileSize])
    }
}
