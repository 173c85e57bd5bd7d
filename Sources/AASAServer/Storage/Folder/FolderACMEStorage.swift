import AASACore
import AASAOpenSSL
import Foundation
import Logging
import Synchronization

/// ACME's state in the certificate folder, for one server (`serve --acme` without `--store`, `certs acme`): the
/// account in `certs/acme/`, each certificate in certbot's layout (`certs/<domain>/fullchain.pem`, `privkey.pem`, and
/// the record `acme.json` that marks it the server's), the pacing in `certs/acme/pacing.json` and each name's failures and renewal
/// window in `certs/acme/orders.json`, so a restart keeps to the CA's limits. The lock is the process's own: its workers never
/// take one domain twice. A state file, or one name's member of `orders.json`, holding a value out of range is left
/// out and logged once, naming the file and the member (``ACMEStateProblems``): the server goes on as if it were
/// absent, and writes it again at its next change.
final class FolderACMEStorage: ACMEStorage {
    /// The certificate folder.
    let certificateDirectory: String
    private let state: Mutex<State>
    private let problems: ACMEStateProblems

    private struct State {
        var pacing: PacingState?
        var histories: [String: ACMEHistory]?
    }

    /// The state in `certificateDirectory`; a record out of range is logged to `logger`.
    init(certificateDirectory: String, logger: Logger) {
        self.certificateDirectory = certificateDirectory
        state = Mutex(State())
        problems = ACMEStateProblems(logger: logger)
    }

    var location: String { certificateDirectory + "/" + ACMEAccount.folderName + "/" }
    private var stateFolder: String { certificateDirectory + "/" + ACMEAccount.folderName }
    private var pacingPath: String { stateFolder + "/pacing.json" }
    private var ordersPath: String { stateFolder + "/orders.json" }

    func account(email: String?, agreesToTerms: Bool) throws(ACMEFailure) -> ACMEAccount {
        try prepareStateFolder()
        return try ACMEAccount.load(folder: stateFolder, email: email, agreesToTerms: agreesToTerms)
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

    func historiesWithChallengeRecords() -> [String: ACMEHistory] {
        state.withLock { state in
            if state.histories == nil { state.histories = readHistories() }
            return state.histories?.filter { !$0.value.challengeRecords.isEmpty } ?? [:]
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

    /// A state file's JSON, bounded; `nil` when there is no file, or (logged) when it is no JSON.
    private func read(_ path: String) -> JSONValue? {
        switch ConfinedFile.read(path, within: .anywhere, maximumBytes: 64 << 20) {
        case .success(let contents):
            guard let json = JSONValue.parse(contents.bytes) else {
                problems.report(path, "is not JSON; it is left out", fix: "nothing to do: the server writes it again")
                return nil
            }
            return json
        case .failure(.missing): return nil
        case .failure(let refusal):
            problems.report(path, "cannot be read (\(refusal)); it is left out", fix: "make it readable by the server")
            return nil
        }
    }

    private func readPacing() -> PacingState? {
        guard let json = read(pacingPath) else { return nil }
        do {
            return try PacingState(json: json)
        } catch {
            problems.report(
                pacingPath, "\(error); it is left out: the bucket of new orders starts full, without a pause",
                fix: "nothing to do: the server writes the file again at its next order")
            return nil
        }
    }

    private func readHistories() -> [String: ACMEHistory] {
        guard let json = read(ordersPath) else { return [:] }
        guard case .object(let members) = json else {
            problems.report(
                ordersPath, "is a \(json.typeName), not an object; it is left out",
                fix: "nothing to do: the server writes it again at its next failure")
            return [:]
        }
        var histories: [String: ACMEHistory] = [:]
        for member in members {
            do {
                histories[member.key] = try ACMEHistory(json: member.value.value)
            } catch {
                problems.report(
                    ordersPath,
                    "\"\(member.key.prefix(80))\": \(error); it is left out: the name's failures count from 0",
                    fix: "nothing to do: the server writes the file again at its next change")
            }
        }
        return histories
    }

    private func write(pacing: PacingState) throws(ACMEFailure) {
        try write(JSONWriter(style: .pretty).bytes(pacing.json) + [0x0A], to: pacingPath)
    }

    /// Makes the state folder (0700) when missing, and refuses it when it is a symbolic link, not the server's
    /// user's, or writable by group or others (``WritableFolder``): it holds the account key and the pacing.
    private func prepareStateFolder() throws(ACMEFailure) {
        do {
            try WritableFolder.prepare(stateFolder)
        } catch {
            throw ACMEFailure(.storage, "ACME's state folder is refused: \(error)", url: stateFolder, hint: error.fix)
        }
    }

    private func write(_ bytes: [UInt8], to path: String) throws(ACMEFailure) {
        try prepareStateFolder()
        do {
            try AtomicFile.write(bytes, to: path, mode: 0o600)
        } catch {
            throw ACMEFailure(
                .storage, "could not keep ACME's state: \(error)", url: path,
                hint: "make the certificate folder writable by the server's user")
        }
    }
}
