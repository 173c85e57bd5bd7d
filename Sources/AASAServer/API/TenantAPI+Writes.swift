import AASACore
import Foundation
import Logging

/// The writes: `PUT` a site.json, `DELETE` a domain, `POST …/history/{revision}/restore`, each with `?dryRun=true`,
/// `If-Match`, and an `Idempotency-Key`.
extension TenantAPI {
    /// Times a write without a precondition reads the domain again when another write came between its read and
    /// its own (each time, its changes are compared with the version it replaces).
    static let unconditionalAttempts = 3

    /// Answers a write through ``idempotency`` when it carries an `Idempotency-Key`: the same key with the same
    /// request (method, path, query, body) within the cache's lifetime gets the first answer that wrote again and
    /// writes nothing; with another request, 422. A refused write holds no key. A key's lookup, write and storing run under one lock, so two requests
    /// with one key never both write.
    func idempotently(_ request: APIRequest, _ body: () throws -> Response) throws -> Response {
        guard let key = request.idempotencyKey else { return try body() }
        guard !key.isEmpty, key.utf8.count <= IdempotencyCache.maximumKeyLength,
            key.utf8.allSatisfy({ $0 >= 0x21 && $0 <= 0x7E })
        else {
            return Self.error(
                400,
                "Idempotency-Key must be 1 to \(IdempotencyCache.maximumKeyLength) visible ASCII characters (a UUID)")
        }
        let digest = IdempotencyCache.digest(
            method: request.method.name, path: request.path, query: request.rawQuery, body: request.body)
        return try idempotency.exclusively {
            switch idempotency.lookup(key, caller: request.caller.name, digest: digest) {
            case .replay(var answer):
                answer.headers.append(HTTPHeader("Idempotent-Replayed", "true"))
                return answer
            case .mismatch:
                return Self.error(
                    422,
                    "Idempotency-Key '\(key)' was used within the last \(Int(idempotency.lifetime / 3600)) hours for "
                        + "another request (method, path, query or body differ); use a new key for a new request")
            case .miss:
                let answer = try body()
                // Only a write that was made is replayed: a refusal (4xx) or a server error wrote nothing, so a retry
                // is answered afresh and the key stays free; a dry run writes nothing either.
                if (200..<300).contains(answer.status) && QueryString.value("dryRun", in: request.rawQuery) != "true" {
                    idempotency.store(key, caller: request.caller.name, digest: digest, answer: answer)
                }
                return answer
            }
        }
    }

    /// `PUT`, `DELETE` or a restore.
    func write(_ route: Route, _ request: APIRequest) throws -> Response {
        let dryRun: Bool
        switch QueryString.value("dryRun", in: request.rawQuery) {
        case nil, "false"?: dryRun = false
        case "true"?: dryRun = true
        case let other?: return Self.error(400, "dryRun=\(other): use true or false")
        }
        switch route {
        case .page(let name, let path) where request.method == .delete:
            return try removePage(name, path, request, dryRun: dryRun)
        case .page(let name, let path): return try putPage(name, path, request, dryRun: dryRun)
        case .domain(let name) where request.method == .delete: return try remove(name, request, dryRun: dryRun)
        case .domain(let name):
            if let type = request.contentType,
                type.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased()
                    != "application/json"
            {
                return Self.error(415, "Content-Type \(type): a site.json is sent as application/json")
            }
            return try put(name, request.body, request, dryRun: dryRun, restoring: nil)
        case .restore(let name, let revision):
            guard let bytes = try repository.siteJSON(name, revision: revision) else {
                return Self.error(404, "\(name) has no revision \(revision) in its history")
            }
            return try put(name, bytes, request, dryRun: dryRun, restoring: revision)
        default: return Self.error(404, "not found: \(request.path)")
        }
    }

    /// `body` loaded as the site.json of `name` beside the domain's stored files, then signed as the server's load
    /// signs it: the findings `check` gives the same file in the domain's folder, and the same verdict a load
    /// gives it (a domain whose signature cannot be made is not published).
    func check(_ name: String, _ body: [UInt8]) throws -> LoadedDomain {
        let loaded = try repository.checking(name) { files in
            loader.loadDomain(
                domain: name, source: SourceText(name: name + "/" + SiteConfigLoader.fileName, bytes: body),
                tree: files)
        }
        return sign([loaded]).first ?? loaded
    }

    /// Checks `body` as `check` checks a site.json, compares it with the current version and writes it.
    private func put(_ name: String, _ body: [UInt8], _ request: APIRequest, dryRun: Bool, restoring: String?)
        throws -> Response
    {
        let ifMatch = request.ifMatch.map(Self.entityTags)
        if let ifNoneMatch = request.ifNoneMatch, Self.entityTags(ifNoneMatch) != ["*"] {
            return Self.error(400, "If-None-Match on a write takes only * (create, never replace)")
        }
        let loaded = try check(name, body)
        if loaded.diagnostics.hasErrors {
            return Self.json(
                422,
                .members(
                    [("error", .string("the site.json has errors; nothing was written"))]
                        + Self.diagnostics(loaded.diagnostics)))
        }
        for _ in 0..<Self.unconditionalAttempts {
            let current = try repository.read(name)
            if let refusal = Self.precondition(ifMatch, create: request.ifNoneMatch != nil, current: current) {
                return refusal
            }
            let diff = compare(name, current, loaded)
            var summary = diff.summary
            if current == nil { summary = "created; " + summary }
            if let restoring { summary = "restored revision \(restoring); " + summary }
            summary = HistoryPolicy.bounded(summary: summary)
            let answer: (String?) -> Response = { revision in
                self.written(
                    name, revision: revision, created: current == nil, summary: summary, diff: diff,
                    warnings: loaded.diagnostics, dryRun: dryRun)
            }
            if dryRun { return answer(repository.prospectiveRevision(of: body)) }
            let revision: String
            do {
                revision = try repository.write(
                    name, siteJSON: body, expecting: current.map { .revision($0.revision) } ?? .absent,
                    actor: request.caller.name, summary: summary)
            } catch let error as DomainRepositoryError {
                guard case .conflict(let now) = error.code else { throw error }
                // Another write came between this one's read and its own: a precondition is decided against it,
                // a write without one compares again with the version that is now current.
                if ifMatch != nil || request.ifNoneMatch != nil { return Self.conflict(name, current: now) }
                continue
            }
            logger.info(
                "API: \(restoring == nil ? "wrote" : "restored") \(name)",
                metadata: [
                    "domain": "\(name)", "actor": "\(request.caller.name)", "revision": "\(revision)",
                    "summary": "\(summary)",
                ])
            return answer(revision)
        }
        return Self.error(
            409,
            "\(name) changed \(Self.unconditionalAttempts) times while this write was compared; send it again, with "
                + "If-Match to write only over the version you read")
    }

    /// `DELETE`: needs `If-Match`, so no removal is blind.
    private func remove(_ name: String, _ request: APIRequest, dryRun: Bool) throws -> Response {
        guard let ifMatch = request.ifMatch.map(Self.entityTags) else {
            return Self.error(
                428,
                "DELETE needs If-Match: \"<revision>\" (the ETag of GET /api/v1/domains/\(name)), so no removal is blind"
            )
        }
        guard let current = try repository.read(name) else { return Self.noDomain(name) }
        if let refusal = Self.precondition(ifMatch, create: false, current: current) { return refusal }
        // A dry run removed nothing: it says so in a 200, never with the 204 of a removal.
        if dryRun {
            return Self.json(
                200,
                .members([("domain", .string(name)), ("revision", .string(current.revision)), ("dryRun", .bool(true))]))
        }
        do {
            try repository.delete(name, expecting: .revision(current.revision), actor: request.caller.name)
        } catch let error as DomainRepositoryError {
            guard case .conflict(let now) = error.code else { throw error }
            return Self.conflict(name, current: now)
        }
        logger.info(
            "API: removed \(name)",
            metadata: ["domain": "\(name)", "actor": "\(request.caller.name)", "revision": "\(current.revision)"])
        return Response(status: 204, headers: [HTTPHeader("Cache-Control", "no-store")])
    }

    /// The 412 answer when `If-Match` (`tags`) or `If-None-Match: *` (`create`) does not hold for `current`.
    private static func precondition(_ tags: [String]?, create: Bool, current: DomainDocument?) -> Response? {
        if create, let current { return conflict(nil, current: current.revision, exists: true) }
        guard let tags else { return nil }
        if let current, tags.contains("*") || tags.contains(current.revision) { return nil }
        return conflict(nil, current: current?.revision)
    }

    /// 412 with the revision now current (`null` when the domain does not exist).
    static func conflict(_ name: String?, current: String?, exists: Bool = false) -> Response {
        let message =
            exists
            ? "precondition failed: the domain exists (If-None-Match: * creates only); its revision is \(current ?? "")"
            : current.map {
                "precondition failed: the domain is at revision \($0); read it again (GET), and send If-Match: \"\($0)\""
            } ?? "precondition failed: the domain does not exist"
        return error(
            412, message, headers: current.map { [HTTPHeader("ETag", "\"\($0)\"")] } ?? [],
            more: [("revision", current.map(JSONValue.string) ?? .null)])
    }

    /// The semantic diff from the current version (nothing, for a new domain) to `loaded`.
    private func compare(_ name: String, _ current: DomainDocument?, _ loaded: LoadedDomain) -> DomainDiff {
        let old: DiffSide?
        if let current {
            old = DiffSide(
                loaded: loader.loadDomain(
                    domain: name,
                    source: SourceText(name: name + "/" + SiteConfigLoader.fileName, bytes: current.siteJSON)))
        } else {
            old = DiffSide(file: AssociationFile())
        }
        guard let old, let new = DiffSide(loaded: loaded) else {
            return DomainDiff(notComparedDomain: name, because: "the current version does not load")
        }
        return DomainDiff(domain: name, old: old, new: new)
    }

    /// The answer of a write: 201 for a new domain, else 200.
    private func written(
        _ name: String, revision: String?, created: Bool, summary: String, diff: DomainDiff,
        warnings: [Diagnostic], dryRun: Bool
    ) -> Response {
        var headers: [HTTPHeader] = []
        if let revision { headers.append(HTTPHeader("ETag", "\"\(revision)\"")) }
        if created { headers.append(HTTPHeader("Location", "/api/v1/domains/\(name)")) }
        return Self.json(
            created ? 201 : 200,
            .members(
                [
                    ("domain", .string(name)), ("revision", revision.map(JSONValue.string) ?? .null),
                    ("created", .bool(created)), ("dryRun", .bool(dryRun)), ("summary", .string(summary)),
                    ("complete", .bool(diff.isComplete)),
                ] + diff.members(limit: Self.maximumListedChanges) + Self.diagnostics(warnings)),
            headers: headers)
    }

    /// The most findings an answer lists; `diagnosticsTotal` counts them all.
    public static let maximumListedDiagnostics = 100
    /// The most UTF-8 bytes of a finding's message or hint in an answer.
    static let maximumMessageBytes = 1_000

    /// `diagnostics`, `findings` or, when there are more, the first ``maximumListedDiagnostics`` (errors first),
    /// `diagnosticsTotal` and
    /// `diagnosticsTruncated`: an answer's findings are bounded whatever the site.json.
    static func diagnostics(_ findings: [Diagnostic]) -> [(String, JSONValue)] {
        var shown = findings
        if findings.count > maximumListedDiagnostics {
            let errors = findings.errors.prefix(maximumListedDiagnostics)
            shown = Array(
                errors + findings.filter { $0.severity != .error }.prefix(maximumListedDiagnostics - errors.count))
        }
        return [
            ("diagnostics", .array(shown.map { JSONNode(diagnostic($0)) })),
            ("diagnosticsTotal", .number(Double(findings.count))),
            ("diagnosticsTruncated", .bool(shown.count < findings.count)),
        ]
    }

    /// A finding as the API gives it: `rule`, `severity`, `line`, `column`, `keyPath`, `message`, `hint` (`null`
    /// when unknown).
    static func diagnostic(_ diagnostic: Diagnostic) -> JSONValue {
        .members([
            ("rule", .string(diagnostic.rule.id)), ("severity", .string(diagnostic.severity.rawValue)),
            ("line", diagnostic.line > 0 ? .number(Double(diagnostic.line)) : .null),
            ("column", diagnostic.line > 0 ? .number(Double(diagnostic.column)) : .null),
            ("keyPath", diagnostic.keyPath.flatMap { $0.isEmpty ? nil : JSONValue.string($0) } ?? .null),
            ("message", .string(UTF8Bound.cut(diagnostic.message, bytes: maximumMessageBytes))),
            ("hint", diagnostic.hint.map { .string(UTF8Bound.cut($0, bytes: maximumMessageBytes)) } ?? .null),
        ])
    }
}
