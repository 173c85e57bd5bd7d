import AASACore
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// Who may read a private key: the owner, and a group only when it is the server's own (Kubernetes fsGroup,
/// Debian's ssl-cert); anything for others is exposed.
@Suite struct PrivateKeyPermissionsTests {
    static let own: Set<UInt32> = [10001, 27]

    @Test(
        arguments: [
            (0o600, 10001, nil), (0o400, 0, nil), (0o640, 10001, nil), (0o440, 27, nil), (0o660, 10001, nil),
            (0o644, 10001, "readable by others"), (0o604, 0, "readable by others"), (0o601, 0, "accessible by others"),
            (0o640, 0, "readable by group"), (0o620, 5, "accessible by group"), (0o444, 10001, "readable by others"),
        ] as [(Int, Int, String?)])
    func exposureDependsOnTheModeAndWhetherTheGroupIsTheServers(mode: Int, group: Int, expected: String?) {
        let found = PrivateKeyPermissions.exposure(
            mode: UInt32(mode), group: UInt32(group), processGroups: Self.own)
        if let expected {
            #expect(found?.hasPrefix(expected) == true, "\(String(mode, radix: 8)): \(found ?? "nil")")
        } else {
            #expect(found == nil, "\(String(mode, radix: 8)): \(found ?? "")")
        }
    }

    @Test func aGroupTheServerIsNotInIsNamed() {
        let found = PrivateKeyPermissions.exposure(mode: 0o640, group: 0, processGroups: [10001])
        #expect(found == "readable by group 'root' (gid 0), which aasa-server does not run with")
    }

    /// The folder reader notes the key's mode and group as the read's `fstat` gave them, and only the key's: the check
    /// after it judges them without walking the key's path again.
    @Test func theFolderReaderNotesTheModeAndGroupOfTheKeyItReads() throws {
        let directory = TemporaryDirectory("aasa-keys")
        let certs = directory.path + "/certs"
        _ = try DevCertificates(certificateDirectory: certs).ensure(names: ["shop.example"])
        let folder = certs + "/shop.example"
        try FileManager.default.setAttributes([.posixPermissions: 0o640], ofItemAtPath: folder + "/privkey.pem")
        let key = CertificateDirectory.KeyAccess()
        let files = CertificateDirectory.files(of: folder, notingKeyAccess: key)
        _ = try files(.chain).get()
        #expect(key.noted == nil)
        _ = try files(.privateKey).get()
        var status = stat()
        #expect(stat(folder + "/privkey.pem", &status) == 0)
        let noted = try #require(key.noted)
        #expect(noted.mode == 0o640)
        #expect(noted.group == UInt32(status.st_gid))
    }

    @Test func theFolderReaderWarnsOrUnderStrictRefusesAnExposedKey() throws {
        let directory = TemporaryDirectory("aasa-keys")
        let certs = directory.path + "/certs"
        _ = try DevCertificates(certificateDirectory: certs).ensure(names: ["shop.example"])
        let key = certs + "/shop.example/privkey.pem"
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: key)

        let lenient = CertificateDirectory(path: certs).loadFolders().first { $0.name == "shop.example" }
        #expect(lenient?.certificate != nil)
        #expect(
            lenient?.diagnostics == [
                Diagnostic(
                    .warning, rule: .privateKeyPermissions,
                    "privkey.pem has mode 0644: readable by others, so other users on this machine can copy the key",
                    file: key,
                    hint: "chmod 600 \(key) (Kubernetes: Secret defaultMode 0440 with the pod's fsGroup, see "
                        + "docs/security.md)")
            ])
        let strict = CertificateDirectory(path: certs, refusesExposedKeys: true).loadFolders()
            .first { $0.name == "shop.example" }
        #expect(strict?.certificate == nil)
        #expect(strict?.diagnostics.map(\.severity) == [.error])
        #expect(
            strict?.diagnostics.first?.message.hasSuffix("; refused (--strict), its certificate is not loaded") == true)

        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key)
        let fixed = CertificateDirectory(path: certs, refusesExposedKeys: true).loadFolders()
            .first { $0.name == "shop.example" }
        #expect(fixed?.certificate != nil && fixed?.diagnostics == [])
    }

    @Test func theDevelopmentCAKeyIsCheckedToo() throws {
        let directory = TemporaryDirectory("aasa-keys")
        let certs = directory.path + "/certs"
        _ = try DevCertificates(certificateDirectory: certs).ensure(names: ["shop.example"])
        let folder = CertificateDirectory(path: certs)
        #expect(folder.devCAKeyFinding() == nil)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: folder.devCAKeyPath)
        #expect(folder.devCAKeyFinding()?.message.hasPrefix("ca-key.pem has mode 0644: readable by others") == true)
        #expect(folder.devCAKeyFinding()?.severity == .warning)
        #expect(
            CertificateCheck(directory: certs).check(domains: ["shop.example"]).map(\.rule) == [
                .privateKeyPermissions
            ])
    }
}
