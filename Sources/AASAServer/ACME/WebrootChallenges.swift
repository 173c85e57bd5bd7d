import AASACore
import Foundation

/// A webroot in certbot's layout: the answer to `token` is the file `<root>/.well-known/acme-challenge/<token>`.
///
/// The server answers the files an external client writes there (`--acme-webroot`: certbot `--webroot`, lego
/// `--http.webroot`), and `certs acme` writes its own there for a running server to answer.
public struct WebrootChallenges: ChallengeResponder {
    /// The webroot, as the user named it.
    public var root: String
    /// Largest answer read: a key authorization is 87 bytes (RFC 8555 §8.1: token, '.', SHA-256 thumbprint).
    static let maximumAnswerBytes = 4096

    /// The webroot at `root`.
    public init(root: String) {
        self.root = root
    }

    /// The folder holding the answers.
    var folder: String { root + "/.well-known/acme-challenge" }

    /// The answer to `token`: the file's bytes, read only inside ``folder`` (no link out of it is followed), or
    /// `nil` when there is none. `token` must be base64url (``ACMEClient/isToken(_:)``), so it names a file there.
    public func answer(token: String) -> [UInt8]? {
        guard ACMEClient.isToken(token) else { return nil }
        let confinement = Confinement(folder: Confinement.realPath(folder) ?? folder)
        return try? ConfinedFile.read(folder + "/" + token, within: confinement, maximumBytes: Self.maximumAnswerBytes)
            .get().bytes
    }

    /// Writes the answer file (mode 0644: the web server reading it may be another user).
    public func publish(token: String, keyAuthorization: String, domain: String) throws(ACMEFailure) {
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try AtomicFile.write(Array(keyAuthorization.utf8), to: folder + "/" + token, mode: 0o644)
        } catch {
            throw ACMEFailure(
                .storage, "\(domain): could not write the challenge answer: \(error)", url: folder + "/" + token,
                hint: "make --acme-webroot writable by this user")
        }
    }

    /// Removes the answer file.
    public func withdraw(token: String, domain: String) {
        unlink(folder + "/" + token)
    }
}
