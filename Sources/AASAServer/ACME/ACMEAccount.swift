import AASACore
public import AASAOpenSSL
import Foundation
import Synchronization

/// The ACME account: an ECDSA P-256 key and the account URL each CA gave it, kept in `certs/acme/` so every
/// restart (and `certs acme`) reuses them.
///
/// `account.key` is the key (PEM, mode 0600, in a 0700 folder); `account.json` maps each directory URL to the
/// account's URL there, so changing `--acme-directory` registers the same key at the new CA.
public final class ACMEAccount: Sendable {
    /// The account key: never logged or served.
    public let key: PrivateKey
    /// The contact address sent at registration, if any.
    public let email: String?
    /// Whether the operator agreed to the CA's terms of service (`--acme-agree-tos`).
    public let agreesToTerms: Bool
    /// The folder the key and registrations are kept in; `nil` keeps them in memory only.
    public let folder: String?
    private let registrations: Mutex<[String: String]>
    /// Keeps the registrations elsewhere than a folder (the store); `nil`: in ``folder``, if any.
    private let keep: (@Sendable ([String: String]) throws(ACMEFailure) -> Void)?

    /// The account key's file name in ``folder``.
    public static let keyFileName = "account.key"
    /// The registrations' file name in ``folder``.
    public static let registrationsFileName = "account.json"
    /// The folder below the certificate folder: never read as a domain's certificate.
    public static let folderName = "acme"

    /// An account with `key` that is not kept on disk.
    public init(key: PrivateKey, email: String?, agreesToTerms: Bool) {
        self.key = key
        self.email = email
        self.agreesToTerms = agreesToTerms
        folder = nil
        registrations = Mutex([:])
        keep = nil
    }

    /// An account with `key`, registered at the CAs of `registrations` (directory URL to account URL), whose new
    /// registrations `keep` stores (the store of a fleet: every replica signs as the same account).
    init(
        key: PrivateKey, email: String?, agreesToTerms: Bool, registrations: [String: String],
        keep: @escaping @Sendable ([String: String]) throws(ACMEFailure) -> Void
    ) {
        self.key = key
        self.email = email
        self.agreesToTerms = agreesToTerms
        folder = nil
        self.registrations = Mutex(registrations)
        self.keep = keep
    }

    private init(key: PrivateKey, email: String?, agreesToTerms: Bool, folder: String, registrations: [String: String])
    {
        self.key = key
        self.email = email
        self.agreesToTerms = agreesToTerms
        self.folder = folder
        self.registrations = Mutex(registrations)
        keep = nil
    }

    /// The account kept in `folder`, created there (a new key, mode 0600) when it holds none.
    public static func load(folder: String, email: String?, agreesToTerms: Bool) throws(ACMEFailure) -> ACMEAccount {
        let keyPath = folder + "/" + keyFileName
        let key: PrivateKey
        switch ConfinedFile.read(keyPath, within: .anywhere, maximumBytes: 64 << 10) {
        case .success(let contents):
            do {
                key = try PrivateKey(pemEncoded: contents.bytes)
            } catch {
                throw ACMEFailure(
                    .storage, "the ACME account key cannot be read: \(error)", url: keyPath,
                    hint: "restore it from a backup, or remove it to register a new account")
            }
        case .failure(.missing):
            do {
                try FileManager.default.createDirectory(
                    atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
                key = try PrivateKey.generate(.ecdsaP256)
                try AtomicFile.write(Array(key.pemEncoded().utf8), to: keyPath, mode: 0o600)
            } catch {
                throw ACMEFailure(
                    .storage, "could not create the ACME account key: \(error)", url: keyPath,
                    hint: "make the certificate folder writable by the server's user")
            }
        case .failure(let refusal):
            throw ACMEFailure(
                .storage, refusal.diagnostic(keyPath, what: "the ACME account key").message, url: keyPath,
                hint: "restore it from a backup, or remove it to register a new account")
        }
        var registrations: [String: String] = [:]
        let registrationsPath = folder + "/" + registrationsFileName
        if case .success(let contents) = ConfinedFile.read(registrationsPath, within: .anywhere, maximumBytes: 1 << 20),
            let json = JSONValue.parse(contents.bytes), case .object(let members)? = json[member: "accounts"]
        {
            for member in members {
                if let url = member.value.value.stringValue { registrations[member.key] = url }
            }
        }
        return ACMEAccount(
            key: key, email: email, agreesToTerms: agreesToTerms, folder: folder, registrations: registrations)
    }

    /// The account's URL at the CA whose directory is `directory`, if it is registered there.
    public func url(at directory: String) -> String? { registrations.withLock { $0[directory] } }

    /// Records that the account is `url` at `directory`, on disk too.
    func remember(url: String, at directory: String) throws(ACMEFailure) {
        let all = registrations.withLock { registrations in
            registrations[directory] = url
            return registrations
        }
        try save(all)
    }

    /// Forgets the registration at `directory` (the CA no longer knows it), so the next request registers again.
    func forget(at directory: String) throws(ACMEFailure) {
        let all = registrations.withLock { registrations in
            registrations[directory] = nil
            return registrations
        }
        try save(all)
    }

    private func save(_ registrations: [String: String]) throws(ACMEFailure) {
        if let keep { return try keep(registrations) }
        guard let folder else { return }
        let document = JSONValue.members([
            ("contact", email.map { .string($0) } ?? .null),
            ("accounts", .members(registrations.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })),
        ])
        let path = folder + "/" + Self.registrationsFileName
        do {
            try AtomicFile.write(JSONWriter(style: .pretty).bytes(document) + [0x0A], to: path, mode: 0o600)
        } catch {
            throw ACMEFailure(
                .storage, "could not record the ACME account: \(error)", url: path,
                hint: "make the certificate folder writable by the server's user")
        }
    }
}
