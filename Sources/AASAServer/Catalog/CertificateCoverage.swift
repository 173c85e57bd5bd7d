import AASACore

/// Which certificate folder covers a name: the names each served certificate lists, looked up as the HTTPS
/// listener's SNI table picks an entry for a handshake (`CertificateTable.entryID(covering:)`), with no TLS object.
///
/// A folder listing the name exactly comes first, else one listing a `*.` name for its parent; among several, the
/// first folder by name. Persistent dictionaries: a load that changes a few certificates changes a few buckets.
struct CertificateCoverage: Sendable {
    /// Exact names, and the parents of `*.` names, to the folders listing them, sorted; a folder's own name, which
    /// nearly every folder lists and most alone, is in ``ownNames`` instead (no array for each certificate).
    private var exact = PersistentDictionary<String, [String]>()
    private var wildcard = PersistentDictionary<String, [String]>()
    /// The folders whose certificate lists the folder's own name, not a `*.` one (persistent too: a set would be copied whole by the
    /// first change after each load).
    private var ownNames = PersistentDictionary<String, Bool>()

    init() {}

    /// The coverage of `certificates`: each folder's name and the names its certificate lists.
    init(_ certificates: some Sequence<(folder: String, names: [String])>) {
        var table = (exact: [String: [String]](), wildcard: [String: [String]]())
        var own: [String] = []
        for (folder, names) in certificates {
            let names = names.map(CertificateName.canonical)
            let listsOwn = !folder.hasPrefix("*.") && names.contains(folder)
            if listsOwn { own.append(folder) }
            for name in names where !listsOwn || name != folder {
                if name.hasPrefix("*.") {
                    table.wildcard[String(name.dropFirst(2)), default: []].append(folder)
                } else {
                    table.exact[name, default: []].append(folder)
                }
            }
        }
        ownNames = PersistentDictionary(own.lazy.map { ($0, true) })
        // A name most often has one folder: its array as it is, not a sorted copy.
        func sorted(_ names: [String: [String]]) -> PersistentDictionary<String, [String]> {
            PersistentDictionary(names.lazy.map { ($0.key, $0.value.count < 2 ? $0.value : $0.value.sorted()) })
        }
        exact = sorted(table.exact)
        wildcard = sorted(table.wildcard)
    }

    /// Takes out the names `folder` listed (`old`) and puts in those it lists now (`new`; `nil`: the folder is gone).
    mutating func update(_ folder: String, old: [String], new: [String]?) {
        let listedOwn = ownNames.removeValue(forKey: folder) != nil
        for name in old.map(CertificateName.canonical) where !listedOwn || name != folder {
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
        for name in (new ?? []).map(CertificateName.canonical) {
            if name == folder, !folder.hasPrefix("*.") {
                ownNames[folder] = true
            } else if name.hasPrefix("*.") {
                insert(into: &wildcard[String(name.dropFirst(2)), default: []])
            } else {
                insert(into: &exact[name, default: []])
            }
        }
    }

    /// The folder whose certificate covers `name`: the first listing it exactly, else the first listing a `*.` name
    /// for its parent; `nil` when none does.
    func folder(covering name: String) -> String? {
        let name = CertificateName.canonical(name)
        let others = exact[name]?.first
        if ownNames[name] != nil { return others.map { min($0, name) } ?? name }
        if let others { return others }
        return CertificateName.wildcardParent(of: name).flatMap { wildcard[String($0)]?.first }
    }
}

extension Array {
    /// `nil` when empty.
    fileprivate var nonEmpty: Self? { isEmpty ? nil : self }
}
