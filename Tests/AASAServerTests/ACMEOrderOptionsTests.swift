import AASACore
import AASACurl
import AASAOpenSSL
import AASATestSupport
import Foundation
import Synchronization
import Testing

@testable import AASAServer

/// What a new order and a new account carry beyond RFC 8555's minimum: the profile (`--acme-profile`), the
/// certificate a renewal replaces (ARI, RFC 9773 §5), and the external account binding (RFC 8555 §7.3.4).
@Suite struct ACMEOrderOptionsTests {
    /// The payloads of the requests a step was matched with, in order.
    final class Payloads: Sendable {
        let list = Mutex<[String]>([])
        func record(_ payload: String) { list.withLock { $0.append(payload) } }
        var all: [String] { list.withLock { $0 } }
    }

    /// A directory listing `profiles` (none: no `profiles` member), with renewalInfo when `renewalInfo`, requiring a
    /// binding when `bindingRequired`.
    static func directory(profiles: [String]? = nil, renewalInfo: Bool = true, bindingRequired: Bool = false)
        -> RecordedCA.Step
    {
        let listed = profiles.map { names in
            #","profiles":{"# + names.map { #""\#($0)":"the \#($0) profile""# }.joined(separator: ",") + "}"
        }
        return RecordedCA.Step(
            method: .get, url: "https://ca.test/directory",
            body: """
                {"meta":{"termsOfService":"https://ca.test/terms.pdf","externalAccountRequired":\(bindingRequired)\(listed ?? "")},
                "newAccount":"https://ca.test/acme/new-acct","newNonce":"https://ca.test/acme/new-nonce",
                "newOrder":"https://ca.test/acme/new-order"\(renewalInfo ? #","renewalInfo":"https://ca.test/acme/renewal-info""# : "")}
                """)
    }

    /// The recorded new order, keeping its payload in `payloads`.
    static func newOrder(_ payloads: Payloads) -> RecordedCA.Step {
        var step = RecordedCA.newOrder()
        step.payload = { payloads.record($0) }
        return step
    }

    /// Every step after the new order, to the download.
    static let afterOrder: [RecordedCA.Step] = [
        RecordedCA.authorization("pending"), RecordedCA.respond, RecordedCA.authorization("valid"),
        RecordedCA.order("ready"), RecordedCA.finalize, RecordedCA.order("valid"), RecordedCA.download,
    ]

    static func client(
        _ ca: RecordedCA, profile: String? = nil, binding: ExternalAccountBinding? = nil,
        account: ACMEAccount? = nil
    ) throws -> ACMEClient {
        let account = try account ?? ACMEAccount(key: PrivateKey.generate(.ecdsaP256), email: nil, agreesToTerms: true)
        return try ACMEClient(
            directoryURL: "https://ca.test/directory", account: account, transport: ca, profile: profile,
            externalAccountBinding: binding, sleep: { _ in })
    }

    /// A leaf with an authority key identifier, and its ARI certID.
    static func leaf() throws -> (certificate: X509Certificate, certID: String, folder: TemporaryDirectory) {
        let folder = TemporaryDirectory("aasa-ari-replaces")
        let authority = try DevCertificateAuthority.loadOrCreate(directory: folder.path + "/ca")
        let leaf = try authority.issue(names: ["shop.example"]).certificate
        let keyIdentifier = try #require(leaf.authorityKeyIdentifier)
        return (leaf, Base64URL.encode(keyIdentifier) + "." + Base64URL.encode(leaf.serialNumberOctets), folder)
    }

    struct OrderCase: Sendable, CustomTestStringConvertible {
        var name: String
        var profiles: [String]?
        var renewalInfo = true
        var profile: String?
        var replacing = false
        /// The new order's payload; `CERTID` stands for the leaf's certID.
        var payload: String
        var testDescription: String { name }
    }

    static let identifiers = #"{"identifiers":[{"type":"dns","value":"shop.example"}]"#

    static let orderCases: [OrderCase] = [
        OrderCase(name: "neither", payload: identifiers + "}"),
        OrderCase(
            name: "a listed profile", profiles: ["classic", "tlsserver"], profile: "tlsserver",
            payload: identifiers + #","profile":"tlsserver"}"#),
        OrderCase(name: "a renewal", replacing: true, payload: identifiers + #","replaces":"CERTID"}"#),
        OrderCase(
            name: "a renewal with a profile", profiles: ["shortlived"], profile: "shortlived", replacing: true,
            payload: identifiers + #","profile":"shortlived","replaces":"CERTID"}"#),
        OrderCase(
            name: "a renewal at a CA without renewalInfo: no replaces", renewalInfo: false, replacing: true,
            payload: identifiers + "}"),
    ]

    @Test(arguments: orderCases) func theNewOrderCarriesTheProfileAndTheCertificateItReplaces(_ order: OrderCase) throws
    {
        let leaf = try Self.leaf()
        let payloads = Payloads()
        let ca = RecordedCA(
            [
                Self.directory(profiles: order.profiles, renewalInfo: order.renewalInfo), RecordedCA.nonce,
                RecordedCA.newAccount, Self.newOrder(payloads),
            ] + Self.afterOrder)
        _ = try Self.client(ca, profile: order.profile).obtainCertificate(
            for: ["shop.example"], key: PrivateKey.generate(.ecdsaP256), challenges: RecordingResponder(),
            replacing: order.replacing ? leaf.certificate : nil)
        #expect(ca.remaining == 0)
        #expect(payloads.all == [order.payload.replacingOccurrences(of: "CERTID", with: leaf.certID)])
    }

    @Test(arguments: ["alreadyReplaced", "conflict"])
    func aCertificateTheCAsaysWasReplacedIsOrderedAgainWithoutReplaces(_ refusal: String) throws {
        let leaf = try Self.leaf()
        let payloads = Payloads()
        var refused = RecordedCA.problem(
            "https://ca.test/acme/new-order", status: refusal == "conflict" ? 409 : 400, type: refusal,
            detail: "the certificate was already replaced")
        refused.payload = { payloads.record($0) }
        let ca = RecordedCA(
            [Self.directory(), RecordedCA.nonce, RecordedCA.newAccount, refused, Self.newOrder(payloads)]
                + Self.afterOrder)
        _ = try Self.client(ca).obtainCertificate(
            for: ["shop.example"], key: PrivateKey.generate(.ecdsaP256), challenges: RecordingResponder(),
            replacing: leaf.certificate)
        #expect(ca.remaining == 0)
        #expect(
            payloads.all
                == [Self.identifiers + #","replaces":"\#(leaf.certID)"}"#, Self.identifiers + "}"])
    }

    @Test(arguments: [
        (listed: ["classic", "tlsserver"] as [String]?, says: "its directory lists classic, tlsserver"),
        (listed: nil, says: "its directory lists no profiles"),
    ])
    func aProfileTheDirectoryDoesNotListFailsBeforeAnyOrder(_ directory: (listed: [String]?, says: String)) throws {
        let ca = RecordedCA([Self.directory(profiles: directory.listed)])
        let failure = try #require(
            throws: ACMEFailure.self,
            performing: {
                try Self.client(ca, profile: "nope").obtainCertificate(
                    for: ["shop.example"], key: PrivateKey.generate(.ecdsaP256), challenges: RecordingResponder())
            })
        #expect(failure.kind == .configuration)
        #expect(failure.message.contains("'nope'") && failure.message.contains(directory.says), "\(failure)")
        #expect(failure.url == "https://ca.test/directory")
        #expect(failure.hint.contains("--acme-profile"))
        #expect(ca.sent.withLock { $0 } == ["https://ca.test/directory"])
    }

    @Test func newAccountCarriesABindingTheCAcanVerifyWithTheKey() throws {
        let hmacKey = Array("a key the CA handed out, 32 byte".utf8)
        let binding = ExternalAccountBinding(keyID: "kid-7", hmacKey: hmacKey)
        let payloads = Payloads()
        var newAccount = RecordedCA.newAccount
        newAccount.payload = { payloads.record($0) }
        let ca = RecordedCA([Self.directory(bindingRequired: true), RecordedCA.nonce, newAccount])
        let account = ACMEAccount(key: try PrivateKey.generate(.ecdsaP256), email: nil, agreesToTerms: true)
        _ = try Self.client(ca, binding: binding, account: account).accountURL()
        let payload = try #require(payloads.all.first.flatMap { JSONValue.parse(Array($0.utf8)) })
        let jws = try #require(payload[member: "externalAccountBinding"])
        let protected = try #require(jws[member: "protected"]?.stringValue)
        let inner = try #require(jws[member: "payload"]?.stringValue)
        let signature = try #require(jws[member: "signature"]?.stringValue)
        // The protected header: HS256, the key ID, the newAccount URL (RFC 8555 §7.3.4).
        let header = try #require(Base64URL.decode(protected).flatMap(JSONValue.parse))
        #expect(header[member: "alg"]?.stringValue == "HS256")
        #expect(header[member: "kid"]?.stringValue == "kid-7")
        #expect(header[member: "url"]?.stringValue == "https://ca.test/acme/new-acct")
        #expect(header[member: "nonce"] == nil)
        // The payload: the account's public key, the one the outer JWS carries.
        let key = try #require(Base64URL.decode(inner).flatMap(JSONValue.parse))
        let jwk = try JSONWebKey(publicKeyOf: account.key)
        for (name, value) in jwk.members { #expect(key[member: name]?.stringValue == value, "\(name)") }
        // The MAC, recomputed by the openssl command over "protected.payload" with the same key.
        let hexKey = hmacKey.map { String(format: "%02x", $0) }.joined()
        let openssl = try Command.run(
            "openssl", ["dgst", "-sha256", "-mac", "HMAC", "-macopt", "hexkey:\(hexKey)", "-binary"],
            input: Array("\(protected).\(inner)".utf8))
        #expect(openssl.status == 0, "\(openssl.stderr)")
        #expect(Base64URL.decode(signature) == openssl.stdoutBytes)
    }

    @Test func aCARequiringABindingWithoutOneNamesTheOptionsAndSendsNothing() throws {
        let ca = RecordedCA([Self.directory(bindingRequired: true)])
        let failure = try #require(throws: ACMEFailure.self, performing: { try Self.client(ca).accountURL() })
        #expect(failure.kind == .configuration && failure.message.contains("external account binding"))
        #expect(failure.hint.contains("--acme-eab-kid") && failure.hint.contains("--acme-eab-hmac-key-file"))
        #expect(ca.sent.withLock { $0 } == ["https://ca.test/directory"])
    }

    @Test func aBindingTheCARefusesNamesTheOptionsToCheck() throws {
        let ca = RecordedCA([
            Self.directory(bindingRequired: true), RecordedCA.nonce,
            RecordedCA.problem(
                "https://ca.test/acme/new-acct", status: 400, type: "unauthorized",
                detail: "external account binding signature is invalid"),
        ])
        let binding = ExternalAccountBinding(keyID: "kid-7", hmacKey: [1, 2, 3])
        let failure = try #require(
            throws: ACMEFailure.self, performing: { try Self.client(ca, binding: binding).accountURL() })
        #expect(failure.message.contains("external account binding signature is invalid"))
        #expect(failure.hint.contains("--acme-eab-kid") && failure.hint.contains("--acme-eab-hmac-key-file"))
    }

    struct KeyFileCase: Sendable, CustomTestStringConvertible {
        var name: String
        var keyID: String? = "kid-1"
        /// The file's contents; `nil`: no file option; "MISSING": a path that does not exist.
        var contents: String?
        /// The key read, or the words the error must contain.
        var key: [UInt8]?
        var error: [String] = []
        var testDescription: String { name }
    }

    static let keyFileCases: [KeyFileCase] = [
        KeyFileCase(name: "a key with a newline", contents: "AQID_-8\n", key: [1, 2, 3, 255, 239]),
        KeyFileCase(name: "padding is ignored", contents: "  AQI=\n", key: [1, 2]),
        KeyFileCase(
            name: "a key ID without a file", contents: nil,
            error: ["--acme-eab-kid and --acme-eab-hmac-key-file go together"]),
        KeyFileCase(
            name: "a file without a key ID", keyID: nil, contents: "AQID",
            error: ["--acme-eab-kid and --acme-eab-hmac-key-file go together"]),
        KeyFileCase(name: "an empty file", contents: " \n", error: ["is empty", "base64url HMAC key"]),
        KeyFileCase(name: "not base64url", contents: "AQ+/", error: ["does not hold base64url text"]),
        KeyFileCase(name: "a missing file", contents: "MISSING", error: ["cannot be read", "check the path"]),
        KeyFileCase(
            name: "a file over 4 KiB", contents: String(repeating: "A", count: 4097),
            error: ["larger than 4096 bytes"]),
    ]

    @Test(arguments: keyFileCases) func theKeyFileIsReadBoundedAndErrorsNameTheOptionAndFile(_ file: KeyFileCase) throws
    {
        let folder = TemporaryDirectory("aasa-eab")
        var path: String?
        if let contents = file.contents {
            path = contents == "MISSING" ? folder.path + "/missing" : try folder.write("eab.key", contents)
        }
        do {
            let binding = try ExternalAccountBinding.load(
                keyID: file.keyID, keyFile: path, keyIDOption: "--acme-eab-kid",
                keyFileOption: "--acme-eab-hmac-key-file")
            #expect(file.error.isEmpty, "expected an error")
            #expect(binding?.hmacKey == file.key && binding?.keyID == "kid-1")
        } catch {
            #expect(!file.error.isEmpty, "\(error)")
            for words in file.error { #expect(error.description.contains(words), "\(error)") }
            if let path, file.keyID != nil { #expect(error.description.contains(path)) }
        }
        #expect(
            try ExternalAccountBinding.load(keyID: nil, keyFile: nil, keyIDOption: "a", keyFileOption: "b") == nil)
    }
}

extension ACMEOrderOptionsTests {
    @Test func aBindingPrintedOrDumpedNeverShowsItsKey() {
        var settings = ACMESettings()
        settings.externalAccountBinding = ExternalAccountBinding(keyID: "kid-9", hmacKey: [0xde, 0xad, 0xbe, 0xef])
        for text in ["\(settings)", String(reflecting: settings), "\(settings.externalAccountBinding!)"] {
            #expect(!text.contains("222") && !text.contains("3q2-7w") && !text.contains("0xde"), "\(text)")
        }
        #expect("\(settings.externalAccountBinding!)".contains("kid-9"))
    }
}
