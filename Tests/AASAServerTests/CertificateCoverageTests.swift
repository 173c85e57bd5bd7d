import AASACore
import AASAMicroHTTPD
import AASATestSupport
import Testing

@testable import AASAServer

/// The catalog's coverage picks, for every name, the folder the HTTPS listener's SNI table serves it from: the two
/// are built and changed side by side over random certificates, and asked about every name.
@Suite struct CertificateCoverageTests {
    /// Names from a small alphabet, so certificates overlap: exact names, wildcards, other cases, trailing dots.
    static let labels = ["a", "b", "c"]
    static let parents = ["example", "a.example", "b.example"]
    /// Folders named after a name they may list (as most are), and others.
    static let folderNames = [
        "f0", "f1", "a.example", "b.example", "c.example", "a.a.example", "b.b.example", "z.example", "*.example",
    ]

    /// The names of a certificate in `folder`: often the folder's own name (in another case, or with a dot, at times),
    /// and others.
    static func randomNames(of folder: String, _ generator: inout SeededRandomNumberGenerator) -> [String] {
        var names = (0..<Int.random(in: 0...2, using: &generator)).map { _ in randomName(&generator) }
        if Bool.random(using: &generator) {
            names.insert(Bool.random(using: &generator) ? folder : folder.uppercased() + ".", at: 0)
        }
        return names.isEmpty ? [randomName(&generator)] : names
    }

    static func randomName(_ generator: inout SeededRandomNumberGenerator) -> String {
        var name = "\(labels.randomElement(using: &generator)!).\(parents.randomElement(using: &generator)!)"
        if Bool.random(using: &generator), Bool.random(using: &generator) {
            name = "*." + name.drop { $0 != "." }.dropFirst()
        }
        if Int.random(in: 0..<8, using: &generator) == 0 { name = name.uppercased() }
        if Int.random(in: 0..<8, using: &generator) == 0 { name += "." }
        return name
    }

    /// Every name a handshake may ask for: those certificates list, one label deeper, and a few no certificate lists.
    static var queries: [String] {
        let names = parents.flatMap { parent in labels.map { "\($0).\(parent)" } } + parents
        return names + names.map { "x." + $0 } + names.map { $0.uppercased() + "." } + folderNames + [
            "example.org", "com",
        ]
    }

    @Test(arguments: 1...20 as ClosedRange<UInt64>)
    func agreesWithTheSNITable(seed: UInt64) throws {
        var generator = SeededRandomNumberGenerator(seed: seed)
        let credential = try #require(TemporaryCertificates().credential(for: "a.example"))
        var folders: [String: [String]] = [:]
        for folder in Self.folderNames.prefix(6) { folders[folder] = Self.randomNames(of: folder, &generator) }
        func entry(_ folder: String) -> CertificateTable.Entry {
            CertificateTable.Entry(id: folder, names: folders[folder]!, credential: credential)
        }
        var table = try CertificateTable(entries: folders.keys.sorted().map(entry))
        // Made from a map of the certificates by folder, as a start makes it.
        var coverage = CertificateCoverage(PersistentDictionary(folders.map { ($0.key, $0.value) })) { $0 }
        func listsOwnName(_ folder: String) -> Bool {
            folders[folder].map { CertificateCoverage.listsOwnName(folder, names: $0) } ?? false
        }
        func expectAgreement(_ step: Int) {
            for name in Self.queries {
                #expect(
                    coverage.folder(covering: name, listsOwnName: listsOwnName) == table.entryID(covering: name),
                    "step \(step): \(name)")
            }
        }
        expectAgreement(0)
        for step in 1...40 {
            let folder = Self.folderNames.randomElement(using: &generator)!
            let old = folders[folder] ?? []
            if Int.random(in: 0..<4, using: &generator) == 0, folders.count > 1, folders[folder] != nil {
                folders[folder] = nil
                table = try table.updating(
                    removing: [folder], adding: [], defaultID: table.defaultID == folder ? folders.keys.min() : nil)
            } else {
                folders[folder] = Self.randomNames(of: folder, &generator)
                table = try table.updating(removing: [], adding: [entry(folder)])
            }
            coverage.update(folder, old: old, new: folders[folder])
            expectAgreement(step)
        }
    }
}
