import AASACore

/// Which certificate folder covers a name: the names each served certificate lists, looked up as the HTTPS
/// listener's SNI table picks an entry for a handshake (`CertificateTable.entryID(covering:)`), with no TLS object.
///
/// A folder listing the name exactly comes first, else one listing a `*.` name for its parent; among several, the
/// first folder by name. Persistent dictionaries: a load that changes a few certificates changes a few buckets.
struct CertificateCoverage: Sendable {
    /// Exact names, and the parents of `*.` names, to the folders listing them, sorted.
    private var exact = PersistentDictionary<String, [String]>()
    private var wildcard = PersistentDictionary<String, [String]>()

    init() {}

    /// The coverage of `certificates`: each folder's name and the names its certificate lists.
    init(_ certificates: some Collection<(folder: String, names: [String])>) {
        var table = (exact: [String: [String]](), wildcard: [String: [String]]())
        table.exact.reserveCapacity(certificates.count)
        for (folder, names) in certificates {
            for name in names.map(CertificateName.canonical) {
                if name.hasPrefix("*.") {
                    table.wildcard[String(name.dropFirst(2)), default: []].append(folder)
                } else {
                    table.exact[name, default: []].append(folder)
                }
            }
        }
        // A name most often has one folder: its array as it is, not a sorted copy.
        func sorted(_ names: [String: [String]]) -> PersistentDictionary<String, [String]> {
            PersistentDictionary(names.lazy.map { ($0.key, $0.value.count < 2 ? $0.value : $0.value.sorted()) })
        }
        exact = sorted(table.exact)
        wildcard = sorted(table.wildcard)
    }

    /// Takes out the names `folder` listed (`old`) and puts in those it lists now (`new`; `nil`: the folder is gone).
    mutating func update(_ folder: String, old: [String], new: [String]?) {
        for name in old.map(CertificateName.canonical) {
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
            if name.hasPrefix("*.") {
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
        if let folder = exact[name]?.first { return folder }
        return CertificateName.wildcardParent(of: name).flatMap { wildcard[String($0)]?.first }
    }
}

extension Array {
    /// `nil` when empty.
    fileprivate var nonEmpty: Self? { isEmpty ? nil : self }
}
