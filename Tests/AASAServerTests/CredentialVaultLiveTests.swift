import AASACore
import AASAMicroHTTPD
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// A server keeps the leaves and keys of the certificates it serves sealed in `--credential-vault`, in files that
/// have no name and never hold a key in plaintext; handshakes are served from them, a renewed certificate takes the
/// place of the one it replaces, and `off` keeps them in memory.
@Suite(.serialized) struct CredentialVaultLiveTests {
    /// The files this process has open in `folder` (the vault's have no name: `/proc` shows `folder/#inode (deleted)`
    /// or the unlinked name), with their bytes.
    static func openFiles(in folder: String) throws -> [[UInt8]] {
        let descriptors = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
        return descriptors.compactMap { descriptor in
            let link = "/proc/self/fd/" + descriptor
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: link),
                target.hasPrefix(folder + "/")
            else { return nil }
            return FileManager.default.contents(atPath: link).map(Array.init)
        }
    }

    /// The DER of the private key in a certificate folder's `privkey.pem`.
    static func keyDER(_ live: LiveServer, _ domain: String) throws -> [UInt8] {
        let pem = try #require(FileManager.default.contents(atPath: live.certsDirectory + "/\(domain)/privkey.pem"))
        return try #require(try PEMBlocks(Array(pem)).blocks.first).bytes
    }

    @Test func certificatesAreServedFromTheVaultAndNoKeyIsOnDiskInPlaintext() throws {
        let vault = TemporaryDirectory("aasa-live-vault")
        let live = try LiveServer(configure: { $0.credentialVault = .folder(vault.path) })
        // One sealed credential for each certificate folder (the dev CA's is none).
        let folders = try FileManager.default.contentsOfDirectory(atPath: live.certsDirectory).filter {
            $0 != CertificateDirectory.devCAFolder
                && FileManager.default.fileExists(atPath: live.certsDirectory + "/\($0)/fullchain.pem")
        }
        #expect(folders.count >= ServerLiveTests.domains.count)
        #expect(try CertificateCacheLiveTests.metric(live, "aasa_sealed_credentials") == folders.count, "\(folders)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: vault.path).isEmpty, "the vault's files have names")
        let files = try Self.openFiles(in: vault.path)
        #expect(files.count == 1)
        let liveBytes = try CertificateCacheLiveTests.metric(live, "aasa_sealed_credential_bytes", "kind=\"live\"")
        #expect(files.map(\.count).reduce(0, +) == liveBytes)
        for domain in ServerLiveTests.domains {
            let key = try Self.keyDER(live, domain)
            for file in files {
                #expect(file.firstRange(of: key) == nil && file.firstRange(of: key.suffix(32)) == nil)
            }
            #expect(try CertificateCacheLiveTests.verifiedHandshake(live, domain), "\(domain)")
        }

        // A renewed certificate is sealed in its turn and served; the one it replaced is let go (the table the listener
        // started with too, once replaced).
        let before = try Self.keyDER(live, "shop.example")
        _ = try DevCertificates(certificateDirectory: live.certsDirectory).ensure(
            names: ["shop.example"], replace: true)
        #expect(try Self.keyDER(live, "shop.example") != before)
        let fileBytes = try CertificateCacheLiveTests.metric(live, "aasa_sealed_credential_bytes", "kind=\"file\"")
        let served = try #require(live.server.certificateTable?.credential(id: "shop.example"))
        let deadline = Date().addingTimeInterval(TestTime.seconds(20))
        while live.server.certificateTable?.credential(id: "shop.example") === served, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(
            try CertificateCacheLiveTests.metric(live, "aasa_sealed_credential_bytes", "kind=\"file\"") != fileBytes)
        #expect(try CertificateCacheLiveTests.metric(live, "aasa_sealed_credentials") == folders.count)
        #expect(try CertificateCacheLiveTests.verifiedHandshake(live, "shop.example"))
        let renewedKey = try Self.keyDER(live, "shop.example")
        for file in try Self.openFiles(in: vault.path) { #expect(file.firstRange(of: renewedKey) == nil) }
        #expect(try CertificateCacheLiveTests.metric(live, "aasa_sealed_credential_failures_total") == 0)
    }

    @Test func offKeepsCredentialsInMemory() throws {
        let live = try LiveServer(configure: { $0.credentialVault = .memory })
        #expect(try CertificateCacheLiveTests.metric(live, "aasa_sealed_credentials") == nil)
        for domain in ServerLiveTests.domains {
            #expect(try CertificateCacheLiveTests.verifiedHandshake(live, domain), "\(domain)")
        }
    }

    @Test func aVaultFolderThatCannotTakeAFileStopsTheStartNamingIt() throws {
        let missing = TemporaryDirectory("aasa-live-vault-missing").path + "/not-here"
        let error = #expect(throws: Server.StartupError.self) {
            _ = try LiveServer(configure: { $0.credentialVault = .folder(missing) })
        }
        #expect(error?.isConfigurationError == true)
        #expect(error?.description.contains("cannot make a file in \(missing)") == true, "\(String(describing: error))")
    }
}
