#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The outcome of loading one domain folder: the config, the generated file, and every finding.
public struct LoadedDomain: Sendable {
    /// The host name (the folder's name).
    public var domain: String
    /// The `site.json` path as the user named it.
    public var file: String
    /// The decoded config, when decoding succeeded.
    public var config: SiteConfig? {
        get { configStorage?.value }
        set { configStorage = newValue.map(OutOfLine.init) }
    }
    /// Out of line (a config is 432 bytes), and between loads shared by the domains whose kept settings are equal
    /// (``keptBetweenLoads(sharing:)``): a server keeps one result per domain. Read a part of the config here
    /// (`configStorage?.value.signing`) where ``config`` would copy the whole of it to hand one part out.
    public internal(set) var configStorage: OutOfLine<SiteConfig>?
    /// The generated file, when the config is valid.
    public var generated: AssociationGenerator.Output?
    /// Everything found: parse errors, validation, generation warnings.
    public var diagnostics: [Diagnostic]
    /// The generated `assetlinks.json`, when the config has an android section.
    public var assetLinks: AssetLinksGenerator.Output?
    /// The CMS-signed association file, set by the server's signer when signing is enabled.
    public var signedAssociationFile: [UInt8]?
    /// The pages, icons and landing page, when loaded from a folder.
    public var pages: SitePages? {
        get { pagesStorage?.value }
        set { pagesStorage = newValue.map(OutOfLine.init) }
    }
    /// Out of line: most domains serve no pages, and a server keeps one result per domain.
    var pagesStorage: OutOfLine<SitePages>?
    /// What the load read, when the domain folder held only site.json: a later load of the same bytes and
    /// modification time gives the same result (``SiteConfigLoader/loadDomain(domain:file:reusing:)``).
    var source: SourceStamp?
    /// The revision a source that versions its domains read this one at (a store's change id): a later load of the
    /// same revision may reuse this result instead of reading it again.
    public var revision: Int64?

    /// This result as a server keeps it until the next load: the served bytes, the findings, where each details
    /// entry of the file comes from in site.json (a few numbers, so a change names rules as the user wrote them),
    /// and of the config only the settings that say how the bytes are served (``SiteConfig/servingSettings``); not
    /// the decoded rules, apps and link tests, nor the generated document. Those have done their work (generated
    /// the bytes, run the tests, whose findings are in ``diagnostics``), and a result reused for an unchanged
    /// site.json keeps its findings. A server holds one result per domain, and the decoded model is about 2 KiB of
    /// each. With `settings`, the kept settings are those of an earlier result with equal ones when there is one:
    /// most domains of a server serve with the same few settings.
    ///
    /// It consumes the result (a load keeps nothing else of it): taken as it is, not copied field by field.
    public consuming func keptBetweenLoads(sharing settings: SharedSettings? = nil) -> LoadedDomain {
        var kept = self
        if let full = kept.configStorage {
            let serving = full.value.servingSettings
            kept.configStorage = settings?.shared(serving) ?? OutOfLine(serving)
        }
        kept.generated = kept.generated?.withoutDocument()
        return kept
    }

    /// A domain that has only `diagnostics` so far: nothing read, decoded or generated (a source could not read it).
    public init(domain: String, file: String, diagnostics: [Diagnostic]) {
        self.domain = domain
        self.file = file
        self.diagnostics = diagnostics
    }

    /// Whether the domain may be published: generated, with no errors.
    public var isPublishable: Bool { generated != nil && !diagnostics.hasErrors }

    /// What the server publishes for this domain, when publishable.
    public var published: PublishedDomain? {
        // The config read in its box and the generated parts where they lie: a copy of either whole retains and
        // releases every reference it holds, for the few values read here.
        guard isPublishable, let configStorage, let bytes = generated?.bytes else { return nil }
        // A domain that asks for a signature is never published without one (spec §4).
        let signing = configStorage.value.signing.flatMap { $0.enabled ? $0 : nil }
        guard signing == nil || signedAssociationFile != nil else { return nil }
        var published = PublishedDomain(
            domain: domain, associationFile: bytes, cacheControl: configStorage.value.cacheControl, pages: pages)
        published.assetLinks = assetLinks?.bytes
        published.signedAssociationFile = signing == nil ? nil : signedAssociationFile
        published.signedPaths = signing?.paths ?? .root
        published.hsts = configStorage.value.hsts.flatMap { $0.enabled ? $0.headerValue : nil }
        published.credentialEndpoints = CredentialEndpoints(configStorage.value)
        published.detailsSource = generated?.detailsSource ?? []
        return published
    }
}

/// Reads `site-config/<domain>/site.json` folders, validates and generates each domain.
///
/// One domain's mistakes never stop another domain from loading.
public struct SiteConfigLoader: Sendable {
    /// The file name inside each domain folder.
    public static let fileName = "site.json"
    /// A site.json larger than this is refused before it is read. Apple reads at most 128 KB of the file it
    /// generates (spec §3.5), so no real config comes near; every check is linear or budgeted, and this bounds
    /// what a hostile file can cost a reload (about a second for 1 MiB of rules in a debug build).
    public static let maximumConfigBytes = 1 << 20

    /// The semantic checks run on every domain.
    public var validator: SiteConfigValidator
    /// How pages are read: limits, and the budget all domains of one load share.
    public var pages = PageLoader()
    /// The config folder, held open for one load: each domain's site.json and listing are opened from it
    /// (``OpenFolder``). `nil`: from `/`.
    public var domainsRoot: OpenFolder?

    /// Creates a loader with the standard checks.
    public init(validator: SiteConfigValidator = .standard) {
        self.validator = validator
    }

    /// Loads every domain folder below `directory`, sorted by name; no file below an `excluding` folder (the
    /// certificate folder) is read for any domain.
    ///
    /// Throws only when `directory` itself cannot be listed; problems inside a domain folder are that
    /// domain's diagnostics.
    public func loadAll(directory: String, excluding excluded: [String] = []) throws(Diagnostic) -> [LoadedDomain] {
        try DomainFolder.list(directory, excluding: excluded).map { loadDomain($0) }
    }

    /// Loads one domain from its `site.json` on disk, confined to the folder holding it (``DomainFolder``).
    public func loadDomain(domain: String, file: String) -> LoadedDomain {
        loadDomain(DomainFolder(domain: domain, file: file), reusing: nil)
    }

    /// Loads one domain folder, or returns `previous` when nothing it was made from changed: the folder still
    /// holds only site.json, with the same bytes and modification time, and the domain does not sign (the server's
    /// signer adds its findings to the loaded domain).
    ///
    /// Every file is read through ``ConfinedFile`` within the folder's ``Confinement``. A reload of thousands of
    /// domains where one changed then validates and generates only that one.
    ///
    /// `listed` is the folder's listing when the caller just made one (a start's watcher lists each folder it
    /// watches); without it the folder is listed here.
    public func loadDomain(
        _ folder: DomainFolder, reusing previous: LoadedDomain? = nil, listed: [DirectoryListing.Entry]? = nil
    ) -> LoadedDomain {
        let (domain, file) = (folder.domain, folder.file)
        if let problem = Self.domainNameProblem(domain) {
            return LoadedDomain(
                domain: domain, file: file,
                diagnostics: [
                    Diagnostic(.error, rule: .domainName, problem.message, file: file, hint: problem.hint)
                ])
        }
        guard let confinement = folder.confinement else {
            return LoadedDomain(domain: domain, file: file, diagnostics: folder.problem.map { [$0] } ?? [])
        }
        let read: ConfinedFile.Contents
        switch ConfinedFile.read(
            file, within: confinement, maximumBytes: Self.maximumConfigBytes,
            listedFolder: folder.isListedFolder ? folder.path : nil, from: domainsRoot)
        {
        case .success(let contents):
            read = contents
        case .failure(.tooLarge(let size, _)):
            return LoadedDomain(domain: domain, file: file, diagnostics: [Self.tooLarge(file, size: size)])
        case .failure(.missing):
            return LoadedDomain(
                domain: domain, file: file,
                diagnostics: [
                    Diagnostic(
                        .error, rule: .missingFile, "no \(Self.fileName) in the folder for \(domain)", file: file,
                        hint: "create \(file), e.g. with `aasa-server import`")
                ])
        case .failure(let refusal):
            return LoadedDomain(
                domain: domain, file: file, diagnostics: [refusal.diagnostic(file, what: Self.fileName)])
        }
        let entries = listed.map { $0.map(\.name) } ?? DirectoryListing.names(in: folder.path, from: domainsRoot) ?? []
        let stamp = SourceStamp(bytes: read.bytes, modified: read.modified, folderEntries: entries)
        if let stamp, let previous, previous.source == stamp, previous.domain == domain, previous.file == file,
            previous.configStorage?.value.signing?.enabled != true
        {
            return previous
        }
        var loaded = loadDomain(
            domain: domain, source: SourceText(name: file, bytes: read.bytes),
            tree: FolderFileTree(root: folder.path, from: domainsRoot),
            folderFacts: PageLoader.FolderFacts(
                configModified: read.modified, entries: entries, confinement: confinement))
        loaded.source = stamp
        return loaded
    }

    /// Parses, validates and generates one domain from `source`; with `folder` (the domain folder), also
    /// loads its `pages/` (``PageLoader``).
    public func loadDomain(domain: String, source: SourceText, folder: String? = nil) -> LoadedDomain {
        loadDomain(domain: domain, source: source, tree: folder.map { FolderFileTree(root: $0) })
    }

    /// Parses, validates and generates one domain from `source`; with `tree` (the domain's files, on disk or in
    /// memory), also loads its `pages/` from it (``PageLoader``), with what `folderFacts` already says of it.
    public func loadDomain(
        domain: String, source: SourceText, tree: (any FileTree)?, folderFacts: PageLoader.FolderFacts? = nil
    ) -> LoadedDomain {
        var loaded = LoadedDomain(domain: domain, file: source.name, diagnostics: [])
        if source.bytes.count > Self.maximumConfigBytes {
            loaded.diagnostics = [Self.tooLarge(source.name, size: source.bytes.count)]
            return loaded
        }
        let parsed: JSONParser.Result
        do {
            parsed = try JSONParser().parse(source)
        } catch {
            loaded.diagnostics = [error]
            return loaded
        }
        let reader = JSONReader(source: source)
        let config = SiteConfig.read(parsed.root, reader: reader)
        loaded.diagnostics = parsed.diagnostics + reader.diagnostics
        guard let config else { return loaded }
        // One box for the result and for every check, which read the config in it without copying it.
        let configStorage = OutOfLine(consume config)
        loaded.configStorage = configStorage
        let context = SiteContext(domain: domain, configStorage: configStorage, source: source, root: parsed.root)
        loaded.diagnostics += validator.validate(context)
        // Generate and lint even when the config has errors, so one run reports every finding; the
        // domain is published only without errors (``LoadedDomain/isPublishable``).
        let output = AssociationGenerator().generate(context)
        loaded.generated = output
        loaded.diagnostics += output.diagnostics
        loaded.assetLinks = AssetLinksGenerator().generate(context)
        loaded.diagnostics += loaded.assetLinks?.diagnostics ?? []
        let generated = AssociationContext.generated(output, site: context)
        loaded.diagnostics += AssociationLinter.standard.lint(generated)
        // One compilation of the generated file gives its pattern problems and runs the tests. VariableRule
        // already reports bad variable definitions on the config itself.
        let matcher = URLMatcher(file: output.file)
        loaded.diagnostics += matcher.diagnostics(in: generated, skipping: Self.reportedByVariableRule)
        loaded.diagnostics += LinkTestChecker().check(context, generated: output, matcher: matcher)
        // In file order, as a compiler reports: stable sort keeps same-place findings in check order.
        loaded.diagnostics = loaded.diagnostics.enumerated().sorted { a, b in
            (a.element.line, a.element.column, a.offset) < (b.element.line, b.element.column, b.offset)
        }.map(\.element)
        if let tree {
            let pages = self.pages.load(context, tree: tree, facts: folderFacts)
            loaded.pages = pages.pages
            loaded.diagnostics += pages.diagnostics
        }
        return loaded
    }

    /// The pattern problems ``VariableRule`` reports on the config itself, left out of the generated file's.
    private static let reportedByVariableRule: Set<PatternDiagnostic.Code> = [
        .invalidVariableName, .variableValueContainsVariable, .invalidVariableUsed,
    ]

    /// The error for a site.json over ``maximumConfigBytes``.
    static func tooLarge(_ file: String, size: Int) -> Diagnostic {
        Diagnostic(
            .error, rule: .fileTooLarge,
            "\(fileName) is \(size) bytes; the limit is \(maximumConfigBytes) (\(maximumConfigBytes >> 20) MiB)",
            file: file,
            line: 1, column: 1,
            hint:
                "shrink it: merge rules with wildcards or substitution variables (Apple reads at most 128 KB of the generated file)"
        )
    }

    /// Why `name` is not a usable host name for a domain folder, or `nil`.
    public static func domainNameProblem(_ name: String) -> (message: String, hint: String)? {
        guard !name.isEmpty, name.utf8.count <= 253 else {
            return (
                "'\(name)' is not a host name (empty or longer than 253 characters)",
                "name the folder after the domain, e.g. shop.example"
            )
        }
        // A host name is ASCII, so its bytes say it: this runs for every domain of every load, where lower-casing
        // the name and splitting it into Characters cost more than the rest of reading the folder's name.
        if name.utf8.contains(where: { ($0 >= 0x41 && $0 <= 0x5A) || $0 >= 0x80 }), name != name.lowercased() {
            return (
                "folder '\(name)' has upper-case letters; host names are matched in lower case",
                "rename it to '\(name.lowercased())'"
            )
        }
        // One pass over the bytes, each label checked at the dot or the end that closes it (a split made an array
        // of labels for every domain).
        var text = name
        let labelsValid = text.withUTF8 { bytes -> Bool in
            var labelStart = 0
            for index in 0...bytes.count {
                if index == bytes.count || bytes[index] == UInt8(ascii: ".") {
                    let length = index - labelStart
                    guard length > 0, length <= 63, bytes[labelStart] != 0x2D, bytes[index - 1] != 0x2D else {
                        return false
                    }
                    labelStart = index + 1
                } else {
                    let byte = bytes[index]
                    guard (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2D else {
                        return false
                    }
                }
            }
            return true
        }
        guard labelsValid else {
            return (
                "folder '\(name)' is not a host name (labels are a–z, 0–9 and '-'; write internationalised names as xn-- Punycode)",
                "rename the folder to the domain as it appears in the entitlement"
            )
        }
        return nil
    }
}

/// The site.json a domain was loaded from, when its folder holds nothing else (no pages/, no template, no
/// signing identity): its length, a hash of its bytes and its modification time (which generated pages carry).
///
/// The hash is the standard library's SipHash with this process's random seed: 64 bits, so a changed file of
/// the same length and modification second passes for the old one with odds of 2⁻⁶⁴, and nobody can aim for
/// that without the seed. SHA-256 in Swift cost 0.4 million instructions per domain at each reload, this 0.02.
struct SourceStamp: Sendable, Hashable {
    var content: ContentStamp
    var modified: Int

    /// The stamp of `bytes` read with modification time `modified`, or `nil` when the folder holds anything
    /// besides site.json (`folderEntries`).
    init?(bytes: [UInt8], modified: Int, folderEntries: [String]) {
        guard folderEntries == [SiteConfigLoader.fileName] else { return nil }
        content = ContentStamp(bytes)
        self.modified = modified
    }
}

extension Rule {
    /// Reported by `SiteConfigLoader`; also by `SiteImport`, `aasa-server shards`.
    public static let domainName = Rule("domain-name", .error, "The folder name is not a lower-case host name.")

    /// Reported by `SiteConfigLoader`; also by `ConfinedFile`, `DiffInput`, `FileSigning`, `SiteImport`, `aasa-server
    /// check`.
    public static let missingFile = Rule(
        "missing-file", .error, "The domain folder has no `site.json`, or a file the config names does not exist.")

    /// The rules of reading the config folder and a domain folder's files, in the order of the docs table: their part
    /// of `Rule.all`.
    package static let folderRules: [Rule] = [
        .configFolder,
        .domainName,
        .missingFile,
        .fileTooLarge,
        .fileUnreadable,
        .pathOutside,
        .fileType,
        .privateKeyInPage,
        .pagesMemory,
    ]
}
