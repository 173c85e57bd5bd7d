import AASACore
import AASAOpenSSL
import AASATestSupport
import Foundation
import Testing

@testable import AASAMicroHTTPD

/// A ``CredentialVault`` keeps a certificate's leaf and key sealed in files that have no name, gives them back to the
/// handshake that imports them, refuses a file changed under it as that certificate's failure only, and closes a file
/// once its last entry is let go.
@Suite(.serialized) struct CredentialVaultTests {
    /// The vault file an entry is in, and the whole file's bytes.
    private static func file(of deferred: DeferredCredential) throws -> (entry: CredentialVault.Entry, bytes: [UInt8]) {
        guard case .sealed(let entry) = deferred.material else {
            Issue.record("the credential is not sealed")
            throw CancellationError()
        }
        var status = stat()
        #expect(fstat(entry.segment.descriptor, &status) == 0)
        var bytes = [UInt8](repeating: 0, count: Int(status.st_size))
        let read = bytes.withUnsafeMutableBytes { pread(entry.segment.descriptor, $0.baseAddress!, $0.count, 0) }
        #expect(read == bytes.count)
        return (entry, bytes)
    }

    /// A vault in a new folder whose files take at most `segmentBytes`, and the chain (DER) and key (PEM) of a
    /// certificate the test CA issues for a.test.
    private static func vault(segmentBytes: Int) throws
        -> (vault: CredentialVault, folder: TemporaryDirectory, chain: [[UInt8]], keyPEM: [UInt8])
    {
        let folder = TemporaryDirectory("aasa-vault-segments")
        let pem = try TestPKI().entry(["a.test"]).entry
        let chain = try PEMBlocks(pem.certificateChainPEM).blocks.filter(\.isCertificate).map(\.bytes)
        return (
            try CredentialVault(directory: folder.path, segmentBytes: segmentBytes), folder, chain, pem.privateKeyPEM
        )
    }

    @Test func aSealedCredentialIsServedAndItsKeyIsNeverOnDiskInPlaintext() throws {
        let scratch = TemporaryDirectory("aasa-vault")
        let vault = try CredentialVault(directory: scratch.path)
        let pki = try TestPKI()
        let a = try CredentialCacheTests.deferredEntry(pki, ["a.test"], vault: vault)
        let b = try CredentialCacheTests.deferredEntry(pki, ["b.test"], key: .rsa(bits: 2048), vault: vault)
        #expect(a.deferred.isSealed && b.deferred.isSealed)
        #expect(vault.figures.entries == 2 && vault.figures.files == 1 && vault.figures.failures == 0)
        #expect(vault.figures.fileBytes == vault.figures.bytes)

        // The folder shows no file: the vault's has no name.
        #expect(try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty)
        let (_, onDisk) = try Self.file(of: a.deferred)
        #expect(onDisk.count == vault.figures.bytes)
        let (leaf, key) = try a.deferred.bytes()
        #expect(!key.isPEM)
        for secret in [key.bytes, leaf, Array(key.bytes.suffix(32)), Array(leaf.prefix(64))] {
            #expect(onDisk.firstRange(of: secret) == nil, "the vault's file holds a credential's bytes in plaintext")
        }

        let listener = try CredentialCacheTests.listener([a.entry, b.entry], capacity: 10)
        defer { listener.stop(timeout: .zero) }
        for name in ["a.test", "b.test", "a.test"] {
            let result = try CredentialCacheTests.fetch(name, listener, pki)
            #expect(result.status == 0, "\(name): \(result.error)")
            #expect(echoFields(splitResponse(result.output).body)["sni"] == name)
        }
        #expect(a.deferred.failure == nil && b.deferred.failure == nil)
    }

    @Test func aFileChangedUnderTheVaultFailsOnlyItsOwnCertificateAndSaysWhy() throws {
        let scratch = TemporaryDirectory("aasa-vault-changed")
        let vault = try CredentialVault(directory: scratch.path)
        let pki = try TestPKI()
        let good = try CredentialCacheTests.deferredEntry(pki, ["a.test"], vault: vault)
        let changed = try CredentialCacheTests.deferredEntry(pki, ["changed.test"], vault: vault)
        let (entry, _) = try Self.file(of: changed.deferred)
        // One byte of its sealed copy flipped, as a disk or another process might.
        var byte: UInt8 = 0
        #expect(pread(entry.segment.descriptor, &byte, 1, off_t(entry.offset) + 40) == 1)
        byte ^= 0x01
        #expect(pwrite(entry.segment.descriptor, &byte, 1, off_t(entry.offset) + 40) == 1)

        let listener = try CredentialCacheTests.listener([good.entry, changed.entry], capacity: 10)
        defer { listener.stop(timeout: .zero) }
        let refused = try CredentialCacheTests.fetch("changed.test", listener, pki)
        #expect(refused.status != 0, "the handshake must fail, not fall back to another name's certificate")
        let failure = try #require(changed.deferred.failure)
        #expect(
            failure.contains("could not read the certificate of certificate entry 'changed.test' back"), "\(failure)")
        #expect(failure.contains("is not what was sealed there") && failure.contains(scratch.path), "\(failure)")
        let served = try CredentialCacheTests.fetch("a.test", listener, pki)
        #expect(served.status == 0, "\(served.error)")
        #expect(good.deferred.failure == nil)
    }

    @Test func aFileIsClosedWhenItsLastEntryIsLetGo() throws {
        let (vault, folder, chain, keyPEM) = try Self.vault(segmentBytes: 4096)
        defer { withExtendedLifetime(folder) {} }
        var kept: [DeferredCredential] = []
        for _ in 0..<20 {
            kept.append(try DeferredCredential(chain: chain, keyPEM: keyPEM, label: "a.test", vault: vault))
        }
        let figures = vault.figures
        #expect(figures.entries == 20 && figures.failures == 0, "\(figures)")
        #expect(figures.files >= 4, "entries of about 0.6 KB in files of 4 KiB: \(figures)")
        let firstFile = try Self.file(of: kept[0]).entry.segment.number

        // The entries of every file but the last let go: those files are closed, their bytes no longer counted.
        let last = try Self.file(of: kept[19]).entry.segment.number
        kept.removeAll { (try? Self.file(of: $0).entry.segment.number) != last }
        let after = vault.figures
        #expect(after.entries == kept.count && after.files == 1, "\(after)")
        #expect(after.fileBytes < figures.fileBytes && after.bytes == after.entries * (figures.bytes / 20))
        #expect(firstFile != last)
        for credential in kept { #expect(try credential.bytes().leaf == chain[0]) }
        kept.removeAll()
        #expect(vault.figures.entries == 0 && vault.figures.bytes == 0)
    }

    @Test func aFolderThatCannotTakeAFileIsAnErrorNamingIt() {
        let missing = TemporaryDirectory("aasa-vault-missing").path + "/not-here"
        let error = #expect(throws: HTTPListenerError.self) { try CredentialVault(directory: missing) }
        #expect(error?.reason.contains("cannot make a file in \(missing)") == true, "\(String(describing: error))")
        #expect(error?.reason.contains("No such file or directory") == true, "\(String(describing: error))")
    }

    @Test func aCredentialTooLargeForAFileIsKeptInMemory() throws {
        let (vault, folder, chain, keyPEM) = try Self.vault(segmentBytes: 64)
        defer { withExtendedLifetime(folder) {} }
        let credential = try DeferredCredential(chain: chain, keyPEM: keyPEM, label: "a.test", vault: vault)
        #expect(!credential.isSealed)
        #expect(vault.figures.failures == 1 && vault.figures.entries == 0)
        #expect(try credential.bytes().leaf == chain[0])
    }
}
