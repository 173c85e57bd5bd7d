import AASACore
public import AASAOpenSSL
import Foundation

/// `aasa-server store pull`: writes the store back out as folders: `<config>/<domain>/site.json` and its files, and
/// with a certificate folder each certificate's files, the private key opened and written with mode 0600.
///
/// Names and paths read from the store are checked before anything is written (a host name; relative paths with no
/// `..`), so a row cannot write outside the folders.
public struct StorePull {
    /// The config folder to write.
    public var config: String
    /// The certificate folder to write, or `nil` for none.
    public var certs: String?
    /// The key that opens the private keys; required with ``certs``.
    public var key: StoreKey?

    /// A pull into `config` (and `certs`).
    public init(config: String, certs: String?, key: StoreKey?) {
        self.config = config
        self.certs = certs
        self.key = key
    }

    /// Pulls from `store`, saying one line per domain and certificate written; returns the errors of what was not
    /// written (a certificate whose key does not open, a name that is not safe).
    ///
    /// - Throws: a ``PostgresError`` when the store fails, ``StoreError`` when a file cannot be written.
    public func run(_ store: Store, say: (String) -> Void) throws -> [String] {
        var errors: [String] = []
        for name in try store.domainNames() {
            guard SiteConfigLoader.domainNameProblem(name) == nil, let domain = try store.domain(name) else {
                errors.append("\(name): error: not a host name; the stored domain is not written")
                continue
            }
            if let bad = domain.files.keys.first(where: { !Confinement.isRelativePathInside($0) }) {
                errors.append("\(name): error: the stored file '\(bad)' is not a path inside the domain folder")
                continue
            }
            let folder = config.joiningPath(name)
            try Self.save(domain.siteJSON, to: folder.joiningPath(SiteConfigLoader.fileName))
            for (path, bytes) in domain.files { try Self.save(bytes, to: folder.joiningPath(path)) }
            say("\(name): \(domain.files.count + 1) file\(domain.files.isEmpty ? "" : "s") written to \(folder)")
        }
        guard let certs else { return errors }
        guard let key else { throw StoreError("pulling certificates needs --store-key-file") }
        for name in try store.certificateNames() {
            guard Confinement.isRelativePathInside(name), !name.contains("/"),
                let certificate = try store.certificate(name)
            else {
                errors.append("certificate \(name): error: not a folder name; it is not written")
                continue
            }
            var files = certificate.files
            if let sealed = files[.privateKey] {
                do {
                    files[.privateKey] = try key.open(sealed, context: Store.sealingContext(name))
                } catch {
                    errors.append(
                        "\(key.file): error: the store key does not open the private key of certificate \(name) "
                            + "(\(error)); nothing of \(name) is written; fix: name the key file it was pushed with")
                    continue
                }
            }
            let folder = certs.joiningPath(name)
            for file in CertificateFile.allCases {
                guard let bytes = files[file] else { continue }
                try Self.save(bytes, to: file.path(in: folder), mode: file == .privateKey ? 0o600 : 0o644)
            }
            say("certificate \(name): \(files.count) file\(files.count == 1 ? "" : "s") written to \(folder)")
        }
        return errors
    }

    /// Writes `bytes` to `path` atomically (a temporary file beside it, renamed), creating its folders; the file
    /// has `mode` from its creation, so a private key is never readable by others even for a moment.
    static func save(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644) throws {
        let folder = (path as NSString).deletingLastPathComponent
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw StoreError("\(folder): error: cannot create the folder: \(error.localizedDescription)")
        }
        let temporary = folder + "/.\((path as NSString).lastPathComponent).pull-\(getpid())"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode)
        guard descriptor >= 0 else {
            throw StoreError("\(path): error: cannot write it: \(String(cString: strerror(errno)))")
        }
        var failed = fchmod(descriptor, mode) != 0
        var offset = 0
        while !failed && offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if written <= 0 { failed = true } else { offset += written }
        }
        let reason = String(cString: strerror(errno))
        close(descriptor)
        guard !failed, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw StoreError("\(path): error: cannot write it: \(reason)")
        }
    }
}
