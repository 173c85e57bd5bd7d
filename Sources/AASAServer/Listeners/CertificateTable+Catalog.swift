import AASACore
import AASAMicroHTTPD

extension CertificateTable {
    /// The SNI table serving `certificates`: each served certificate under its folder's name, and with `temporary`
    /// (ACME) the temporary certificate of each domain waiting for its own; `nil` when nothing is served. Each
    /// certificate is imported when a handshake first asks for it, and kept in `cache`.
    ///
    /// - Throws: ``HTTPListenerError`` when the entry the catalog serves without SNI is not in the table.
    static func serving(
        _ certificates: CertificateCatalog, temporary: TemporaryCertificates?, cache: CredentialCache
    ) throws -> CertificateTable? {
        guard let defaultEntry = certificates.defaultEntry else { return nil }
        // Entry by entry: an array of every served certificate would be one more at the start's peak.
        var builder = Builder(capacity: certificates.served.count + certificates.temporary.count, cache: cache)
        try certificates.served.forEachEntry { _, certificate in try builder.add(certificate.tableEntry) }
        for entry in temporaryEntries(certificates.temporary.sorted(), from: temporary) { try builder.add(entry) }
        temporary?.keep(only: certificates.temporary)
        return try builder.table(defaultID: defaultEntry.tableID)
    }

    /// `current` brought up to `certificates` by `change`, or made whole when there is no table yet
    /// (``serving(_:temporary:cache:)``); `current` itself when nothing changed.
    static func serving(
        _ certificates: CertificateCatalog, change: CertificateChange, after current: CertificateTable?,
        temporary: TemporaryCertificates?, cache: CredentialCache
    ) throws -> CertificateTable? {
        guard let current else { return try serving(certificates, temporary: temporary, cache: cache) }
        guard !change.isEmpty else { return current }
        return try current.updating(to: certificates, change: change, temporary: temporary)
    }

    /// This table with what `change` names brought up to `certificates`: only the entries it names are made, the
    /// rest is shared with this table.
    ///
    /// - Throws: ``HTTPListenerError`` when the table would be empty or the default entry would not be in it.
    func updating(to certificates: CertificateCatalog, change: CertificateChange, temporary: TemporaryCertificates?)
        throws -> CertificateTable
    {
        let gone = change.folders.filter { certificates.served[$0] == nil }.map { CertificateEntryID.folder($0) }
        let entries =
            change.folders.compactMap { certificates.served[$0]?.tableEntry }
            + Self.temporaryEntries(change.addedTemporary, from: temporary)
        let removing = (gone + change.removedTemporary.map { .temporary(domain: $0) }).map(\.tableID)
        temporary?.keep(only: certificates.temporary)
        return try updating(
            removing: removing, adding: entries,
            defaultID: change.defaultEntry ? certificates.defaultEntry?.tableID : nil)
    }

    /// The entries of the temporary certificates of `domains`, made by `temporary`: none without it, and none for a
    /// domain it cannot make one for.
    private static func temporaryEntries(_ domains: [String], from temporary: TemporaryCertificates?) -> [Entry] {
        guard let temporary else { return [] }
        return domains.compactMap { domain in
            temporary.credential(for: domain).map {
                Entry(
                    id: CertificateEntryID.temporary(domain: domain).tableID, names: [domain], credential: $0,
                    isFallback: true)
            }
        }
    }
}

extension ServedCertificate {
    /// The SNI table's entry for this certificate, under its folder's name.
    var tableEntry: CertificateTable.Entry {
        CertificateTable.Entry(id: CertificateEntryID.folder(folderName).tableID, names: names, deferred: credential)
    }
}
