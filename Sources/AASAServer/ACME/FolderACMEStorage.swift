import AASACore
import AASAOpenSSL
import Foundation
import Synchronization

/// ACME's state in the certificate folder, for one server (`serve --acme` without `--store`, `certs acme`): the
/// account in `certs/acme/`, each certificate in certbot's layout (`certs/<domain>/fullchain.pem`, `privkey.pem`, and
/// the record `acme.json` that marks it the server's), the pacing in `certs/acme/pacing.json` and each name's failures and renewal
/// window in `certs/acme/orders.json`, so a restart keeps to the CA's limits. The lock is the process's own: its workers never
/// take one domain twice.
final class FolderACMEStorage: ACMEStorage {
    /// The certificate folder.
    let certificateDirectory: String
    private let state: Mutex<State>

    private struct State {
        var pacing: PacingState?
        var histories: [String: ACMEHistory]?
    }

    /// The state in `certificateDirectory`.
    init(certificateDirectory: String) {
        self.certificateDirectory = certificateDirectory
        state = Mutex(State())
    }

    var location: String { certificateDirectory + "/" + ACMEAccount.folderName + "/" }
    private var stateFolder: String { certificateDirectory + "/" + ACMEAccount.folderName }
    private var pacingPath: String { stateFolder + "/pacing.json" }
    private var ordersPath: String { stateFolder + "/orders.json" }

    func account(email: String?, agreesToTerms: Bool) throws(ACMEFailure) -> ACMEAccount {
        try ACMEAccount.load(folder: stateFolder, email: email, agreesToTerms: agreesToTerms)
    }

    func place(of domain: String) -> String { certificateDirectory + "/" + domain }

    func refresh() {}

    func record(of domain: String) -> CertificateRecord? {
        CertificateRecord.read(in: certificateDirectory + "/" + domain)
    }

    func hasOperatorCertificate(_ domain: String) -> Bool {
        let folder = certificateDirectory + "/" + domain
        return !CertificateRecord.isPresent(in: folder)
            && FileManager.default.fileExists(atPath: CertificateFile.chain.path(in: folder))
    }

    func leaf(of domain: String) -> X509Certificate? {
        let path = CertificateFile.chain.path(in: certificateDirectory + "/" + domain)
        guard case .success(let contents) = ConfinedFile.read(path, within: .anywhere, maximumBytes: 1 << 20) else {
            return nil
        }
        return try? X509Certificate(pemEncoded: contents.bytes)
    }

    func save(chain: [UInt8], key: PrivateKey, domain: String, record: CertificateRecord) throws(ACMEFailure) {
        let folder = certificateDirectory + "/" + domain
        do {
            try FileManager.default.createDirectory(
                atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            // The record first: a folder with it is the server's, whatever else a crash leaves there.
            try AtomicFile.write(record.bytes, to: CertificateFile.acmeRecord.path(in: folder))
            try AtomicFile.write(
                Array(key.pemEncoded().utf8), to: CertificateFile.privateKey.path(in: folder), mode: 0o600)
            try AtomicFile.write(chain, to: CertificateFile.chain.path(in: folder))
        } catch {
            throw ACMEFailure(
                .storage, "\(domain): could not write the certificate: \(error)", url: folder,
                hint: "make the certificate folder writable by the server's user")
        }
    }

    func lock(_ domain: String) throws(ACMEFailure) -> ACMELease? { ACMELease() }

    func pacing<Value>(_ body: (inout PacingState?) -> Value) throws(ACMEFailure) -> Value {
        let (value, written) = state.withLock { state in
            var pacing = state.pacing ?? readPacing()
            let before = pacing
            let value = body(&pacing)
            state.pacing = pacing
            return (value, pacing == before ? nil : pacing)
        }
        if let written { try write(pacing: written) }
        return value
    }

    var lastPacing: PacingState? { state.withLock { $0.pacing } }

    func history(of domain: String) -> ACMEHistory? {
        state.withLock { state in
            if state.histories == nil { state.histories = readHistories() }
            return state.histories?[domain]
        }
    }

    func save(history: ACMEHistory?, of domain: String) {
        let all = state.withLock { state in
            var histories = state.histories ?? readHistories()
            guard histories[domain] != history else { return nil as [String: ACMEHistory]? }
            histories[domain] = history
            state.histories = histories
            return histories
        }
        guard let all else { return }
        let document = JSONValue.members(all.sorted { $0.key < $1.key }.map { ($0.key, $0.value.json) })
        try? write(JSONWriter(style: .pretty).bytes(document) + [0x0A], to: ordersPath)
    }

    // MARK: Files

    /// A state file's bytes, bounded.
    private func read(_ path: String) -> JSONValue? {
        guard case .success(let contents) = ConfinedFile.read(path, within: .anywhere, maximumBytes: 64 << 20) else {
            return nil
        }
        return JSONValue.parse(contents.bytes)
    }

    private func readPacing() -> PacingState? {
        guard let json = read(pacingPath), case .number(let tokens)? = json[member: "tokens"],
            let refilled = json[member: "refilledAt"]?.stringValue.flatMap(ISO8601DateFormatter().date)
        else { return nil }
        return PacingState(
            tokens: tokens, refilledAt: refilled,
            pausedUntil: json[member: "pausedUntil"]?.stringValue.flatMap(ISO8601DateFormatter().date),
            pauseReason: json[member: "pauseReason"]?.stringValue)
    }

    private func readHistories() -> [String: ACMEHistory] {
        guard case .object(let members)? = read(ordersPath) else { return [:] }
        var histories: [String: ACMEHistory] = [:]
        for member in members {
            if let history = ACMEHistory(json: member.value.value) { histories[member.key] = history }
        }
        return histories
    }

    private func write(pacing: PacingState) throws(ACMEFailure) {
        let formatter = ISO8601DateFormatter()
        let document = JSONValue.members([
            ("tokens", .number(pacing.tokens)), ("refilledAt", .string(formatter.string(from: pacing.refilledAt))),
            ("pausedUntil", pacing.pausedUntil.map { .string(formatter.string(from: $0)) } ?? .null),
            ("pauseReason", pacing.pauseReason.map { .string($0) } ?? .null),
        ])
        try write(JSONWriter(style: .pretty).bytes(document) + [0x0A], to: pacingPath)
    }

    private func write(_ bytes: [UInt8], to path: String) throws(ACMEFailure) {
        do {
            try FileManager.default.createDirectory(
                atPath: stateFolder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            try AtomicFile.write(bytes, to: path, mode: 0o600)
        } catch {
            throw ACMEFailure(
                .storage, "could not keep ACME's state: \(error)", url: path,
                hint: "make the certificate folder writable by the server's user")
        }
    }
}
