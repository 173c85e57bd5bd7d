import AASACore

/// Which certificate folder covers a name: the names each served certificate lists, looked up as the HTTPS
/// listener's SNI table picks an entry for a handshake (`CertificateTable.entryID(covering:)`), with no TLS object.
///
/// A folder listing the name exactly comes first, else one listing a `*.` name for its parent; among several, the
/// first folder by name. Persistent dictionaries: a load that changes a few certificates changes a few buckets.
///
/// A folder's own name, which nearly every folder lists and most alone, is not kept here: whether the folder named
/// like a name lists it is asked of the certificates themselves (``folder(covering:listsOwnName:)``), so the
/// coverage holds only the other names (nothing at all for a server whose every certificate names its folder).
struct CertificateCoverage: Sendable {
    /// Exact names, and the parents of `*.` names, to the folders listing them, sorted, except a folder's own name.
    private var exact = PersistentDictionary<String, [String]>()
    private var wildcard = PersistentDictionary<String, [String]>()

    init() {}

    /// Whether the certificate of `folder`, listing `names`, lists the folder's own name: a name, never a `*.` one.
    static func listsOwnName(_ folder: String, names: [String]) -> Bool {
        !folder.hasPrefix("*.") && names.contains { CertificateName.canonical($0) == folder }
    }

    /// The coverage of the certificates `served` by folder, each listing the names `names` reads from it: the
    /// dictionary walked with ``PersistentDictionary/forEachEntry(_:)``, not as a sequence of pairs.
    init<Certificate>(_ served: PersistentDictionary<String, Certificate>, names: (Certificate) -> [String]) {
        var table = (exact: [String: [String]](), wildcard: [String: [String]]())
        served.forEachEntry { folder, certificate in
            let listed = names(certificate)
            let listsOwn = Self.listsOwnName(folder, names: listed)
            for name in listed.lazy.map(CertificateName.canonical) where !listsOwn || name != folder {
                if name.hasPrefix("*.") {
                    table.wildcard[String(name.dropFirst(2)), default: []].append(folder)
                } else {
                    table.exact[name, default: []].append(folder)
                }
            }
        }
        // A name most often has one folder: its array as it is, not a sorted copy. An array of entries, not a lazy
        // map: the dictionary reads its entries twice, and each would be sorted twice.
        func sorted(_ names: [String: [String]]) -> PersistentDictionary<String, [String]> {
            PersistentDictionary(names.map { ($0.key, $0.value.count < 2 ? $0.value : $0.value.sorted()) })
        }
        exact = sorted(table.exact)
        wildcard = sorted(table.wildcard)
    }

    /// Takes out the names `folder` listed (`old`) and puts in those it lists now (`new`; `nil`: the folder is gone).
    mutating func update(_ folder: String, old: [String], new: [String]?) {
        let listedOwn = Self.listsOwnName(folder, names: old)
        for name in old.lazy.map(CertificateName.canonical) where !listedOwn || name != folder {
            if name.hasPrefix("*.") {
                let parent = String(name.dropFirst(2))
                wildcard[parent] = wildcard[parent]?.filter { $0 != folder }.nonEmpty
            } else {
                exact[name] = exact[name]?.filter { $0 != folder }.nonEmpty
            }
        }
        func insert(into list: inout [String]) {
            guard !list.contains(folder) else { return }
            list.insert(folder, at: list.firstIndex { folder < $0 } ?? list.endIndex)
        }
        let listsOwn = Self.listsOwnName(folder, names: new ?? [])
        for name in (new ?? []).lazy.map(CertificateName.canonical) where !listsOwn || name != folder {
            if name.hasPrefix("*.") {
                insert(into: &wildcard[String(name.dropFirst(2)), default: []])
            } else {
                insert(into: &exact[name, default: []])
            }
        }
    }

    /// The folder whose certificate covers `name`: the first listing it exactly, else the first listing a `*.` name
    /// for its parent; `nil` when none does. `listsOwnName` tells whether the folder named like a (canonical) name
    /// serves a certificate that lists it (``listsOwnName(_:names:)``; false for no such folder).
    func folder(covering name: String, listsOwnName: (String) -> Bool) -> String? {
        let name = CertificateName.canonical(name)
        let others = exact[name]?.first
        if listsOwnName(name) { return others.map { min($0, name) } ?? name }
        if let others { return others }
        return CertificateName.wildcardParent(of: name).flatMap { wildcard[String($0)]?.first }
    }
}

extension Array {
    /// `nil` when empty.
    fileprivate var nonEmpty: Self? { isEmpty ? nil : self }
}
