/// `aasa-server import`: bytes of an existing Apple file → a validated ``SiteConfig`` that generates the
/// same answers. Nothing is written by this type; the caller writes only when there are no errors.
public struct ImportPipeline: Sendable {
    /// The result of an import.
    public struct Output: Sendable {
        /// The config to write, when there are no errors.
        public var config: SiteConfig?
        /// The file the config generates, when there are no errors.
        public var generated: AssociationGenerator.Output?
        /// The original file as read, when it could be read.
        public var original: AssociationFile?
        /// Everything found, in the original file (parse, structure) and in the result (validation).
        public var diagnostics: [Diagnostic]

        /// An outcome of `diagnostics` and, when there are no errors, the `config` to write.
        public init(config: SiteConfig? = nil, diagnostics: [Diagnostic]) {
            self.config = config
            self.diagnostics = diagnostics
        }
    }

    /// Creates a pipeline.
    public init() {}

    /// Imports `source` for `domain`. When `existing` is given, only its Apple services are replaced and
    /// every other setting is kept. With `appStoreID`, the domain's pages get a Smart App Banner for that app.
    public func run(_ source: SourceText, domain: String, existing: SiteConfig? = nil, appStoreID: String? = nil)
        -> Output
    {
        var output = Output(diagnostics: [])
        let (parsedFile, parsedRoot, diagnostics) = AssociationFile.parse(source)
        output.diagnostics = diagnostics
        guard let file = parsedFile, let root = parsedRoot else { return output }
        output.original = file
        let imported = AssociationImporter().importFile(file, source: source, root: root)
        output.diagnostics += imported.diagnostics
        guard !imported.diagnostics.hasErrors else { return output }

        var config = existing ?? SiteConfig()
        config.legacyFormat = imported.config.legacyFormat
        config.universalLinks = imported.config.universalLinks
        config.webCredentials = imported.config.webCredentials
        config.appClips = imported.config.appClips
        config.handoff = imported.config.handoff
        config.authsrv = imported.config.authsrv
        if let appStoreID {
            // Keep any other banner setting of an existing config; only the app changes.
            var banner = config.smartAppBanner ?? BannerConfig(appStoreID: appStoreID)
            banner.appStoreID = appStoreID
            config.smartAppBanner = banner
        }

        // Validate the result, but report against the original file: re-serialise to locate keys.
        let rendered = JSONWriter(style: .pretty).bytes(config.jsonValue(schema: nil))
        let renderedSource = SourceText(
            name: "\(domain)/\(SiteConfigLoader.fileName) (imported from \(source.name))", bytes: rendered)
        let loaded = SiteConfigLoader().loadDomain(domain: domain, source: renderedSource)
        let validation = loaded.diagnostics.map { diagnostic in
            Self.relocate(diagnostic, importedFrom: source, original: root, config: config)
        }
        output.diagnostics += validation
        guard !output.diagnostics.hasErrors else { return output }
        output.config = config
        output.generated = loaded.generated
        return output
    }

    /// A CMS-signed (PKCS#7 DER) file is recognised and explained instead of failing as "not UTF-8".
    static func signedFileProblem(_ source: SourceText) -> Diagnostic? {
        // ContentInfo is a DER SEQUENCE (0x30) holding the signedData OID 1.2.840.113549.1.7.2.
        let signedDataOID: [UInt8] = [0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x07, 0x02]
        let head = Array(source.bytes.prefix(32))
        guard head.first == 0x30, head.count >= signedDataOID.count else { return nil }
        let found = (0...(head.count - signedDataOID.count)).contains {
            Array(head[$0..<$0 + signedDataOID.count]) == signedDataOID
        }
        guard found else { return nil }
        return Diagnostic(
            .error, rule: .signedFile,
            "this is a CMS-signed (PKCS#7) association file, not JSON", file: source.name, line: 1, column: 1,
            hint: "extract the JSON first: openssl cms -verify -noverify -inform DER -in \(source.name) -out plain.json"
        )
    }

    /// Maps a finding about the imported config back to the Apple key it came from, when possible,
    /// so the user sees the line of the file they gave us.
    static func relocate(
        _ diagnostic: Diagnostic, importedFrom source: SourceText, original: JSONNode, config: SiteConfig
    ) -> Diagnostic {
        var relocated = diagnostic
        relocated.file = source.name
        relocated.line = 0
        relocated.column = 0
        guard let quoted = diagnostic.message.split(separator: "'", omittingEmptySubsequences: false).dropFirst().first
        else {
            return relocated
        }
        // Find the value in the original file by text: app IDs are quoted in every app-id message.
        if let offset = Self.offsetOfString(String(quoted), in: original) {
            let (line, column) = source.position(of: offset)
            relocated.line = line
            relocated.column = column
            relocated.keyPath = Self.keyPath(toOffset: offset, in: original)?.description
        }
        return relocated
    }

    static func offsetOfString(_ text: String, in node: JSONNode) -> Int? {
        switch node.value {
        case .string(let value) where value == text: return node.offset
        case .array(let elements): return elements.lazy.compactMap { offsetOfString(text, in: $0) }.first
        case .object(let members):
            for member in members {
                if member.key == text { return member.keyOffset }
                if let found = offsetOfString(text, in: member.value) { return found }
            }
            return nil
        default: return nil
        }
    }

    static func keyPath(toOffset offset: Int, in node: JSONNode, path: KeyPath = .root) -> KeyPath? {
        if node.offset == offset { return path }
        switch node.value {
        case .array(let elements):
            for (index, element) in elements.enumerated() {
                if let found = keyPath(toOffset: offset, in: element, path: path.index(index)) { return found }
            }
        case .object(let members):
            for member in members {
                if member.keyOffset == offset { return path.key(member.key) }
                if let found = keyPath(toOffset: offset, in: member.value, path: path.key(member.key)) { return found }
            }
        default: break
        }
        return nil
    }
}

extension Rule {
    /// Reported by `ImportPipeline`.
    public static let signedFile = Rule(
        "signed-file", .error,
        "`import` or `check --aasa` was given a CMS-signed (PKCS#7) file instead of JSON; extract the JSON first.")
}
