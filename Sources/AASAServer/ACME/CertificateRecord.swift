import AASACore
public import Foundation

/// `certs/<domain>/acme.json`: marks the folder's certificate as obtained by the server, which then renews it.
/// A folder without it holds the operator's certificate, which the server never replaces.
public struct CertificateRecord: Sendable, Equatable {
    /// The directory URL of the CA that issued it.
    public var directoryURL: String
    /// When it was issued.
    public var issued: Date
    /// The names it was ordered for.
    public var names: [String]

    /// Creates a record.
    public init(directoryURL: String, issued: Date, names: [String]) {
        self.directoryURL = directoryURL
        self.issued = issued
        self.names = names
    }

    /// The record in `folder`, or `nil` when the folder has none (or an unreadable one: then it is still the
    /// server's, see ``isPresent(in:)``).
    public static func read(in folder: String) -> CertificateRecord? {
        guard
            case .success(let contents) = ConfinedFile.read(
                CertificateFile.acmeRecord.path(in: folder), within: .anywhere,
                maximumBytes: CertificateDirectory.cap(of: .acmeRecord))
        else { return nil }
        return CertificateRecord(bytes: contents.bytes)
    }

    /// The record in `bytes` (the file, or the store's `acme_json`); `nil` when they are not one.
    init?(bytes: [UInt8]) {
        guard let json = JSONValue.parse(bytes), let directory = json[member: "directory"]?.stringValue,
            let issued = json[member: "issued"]?.stringValue.flatMap({ ISO8601DateFormatter().date(from: $0) })
        else { return nil }
        self.init(
            directoryURL: directory, issued: issued,
            names: json[member: "names"]?.arrayValue?.compactMap(\.stringValue) ?? [])
    }

    /// Whether `folder` has the marker file at all: the server manages its certificate.
    public static func isPresent(in folder: String) -> Bool {
        FileManager.default.fileExists(atPath: CertificateFile.acmeRecord.path(in: folder))
    }

    /// The file's bytes.
    var bytes: [UInt8] {
        JSONWriter(style: .pretty).bytes(
            .members([
                ("directory", .string(directoryURL)),
                ("issued", .string(ISO8601DateFormatter().string(from: issued))),
                ("names", .strings(names)),
            ])) + [0x0A]
    }
}
