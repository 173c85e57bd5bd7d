import AASACore
import Foundation
import Logging

/// A domain's pages and touch icons (`/api/v1/domains/{name}/pages/{path}`), under every rule a load of `pages/`
/// applies: the path rule of ``PageLoader/pathProblem(_:)`` (checked with the route, ``APIPagePath``), the caps of
/// ``PageLoader`` decided before anything is written (a file, the landing template, the domain's file count and
/// total), no private key, a touch icon a square PNG, and the content type from the name, never from the request.
extension TenantAPI {
    /// `GET …/pages`: every file, sorted by path, at most ``PageLoader/maximumFiles``.
    func listPages(_ name: String) throws -> Response {
        guard let pages = try repository.pages(name, limit: pageLoader.maximumFiles) else {
            return Self.noDomain(name)
        }
        return Self.json(
            200,
            .members([
                ("domain", .string(name)),
                (
                    "pages",
                    .array(
                        pages.map { page in
                            JSONNode(
                                .members([
                                    ("path", .string(page.path)), ("bytes", .number(Double(page.bytes))),
                                    ("revision", .string(page.revision)),
                                    ("contentType", .string(ContentType.forFile(page.path))),
                                ]))
                        })
                ),
            ]))
    }

    /// Page `path` of `name` as stored, from one shared copy (``SharedPageReads``).
    private func sharedPage(_ name: String, _ path: String) throws -> PageDocument? {
        try pageReads.page(
            name, path, validator: { try repository.pageValidator(name, path: path) },
            read: { try repository.page(name, path: path) })
    }

    /// `GET …/pages/{path}`: the file as stored, typed by its name.
    func readPage(_ name: String, _ path: String, _ request: APIRequest) throws -> Response {
        guard let page = try sharedPage(name, path) else { return try noPage(name, path) }
        let tag = "\"\(page.revision)\""
        if request.ifNoneMatch.map(Self.entityTags)?.contains(where: { $0 == page.revision || $0 == "*" }) == true {
            return Response(status: 304, headers: [HTTPHeader("ETag", tag), HTTPHeader("Cache-Control", "no-store")])
        }
        return Response(
            status: 200,
            headers: [
                HTTPHeader("Content-Type", ContentType.forFile(path)), HTTPHeader("ETag", tag),
                HTTPHeader("Cache-Control", "no-store"), HTTPHeader("X-Content-Type-Options", "nosniff"),
            ], body: page.bytes)
    }

    /// `PUT …/pages/{path}`: checked, then written when the page's revision is what `If-Match` or
    /// `If-None-Match: *` says.
    func putPage(_ name: String, _ path: String, _ request: APIRequest, dryRun: Bool) throws -> Response {
        if let ifNoneMatch = request.ifNoneMatch, Self.entityTags(ifNoneMatch) != ["*"] {
            return Self.error(400, "If-None-Match on a write takes only * (create, never replace)")
        }
        guard let document = try repository.read(name) else { return Self.noDomain(name) }
        let config = loader.loadDomain(
            domain: name, source: SourceText(name: name + "/" + SiteConfigLoader.fileName, bytes: document.siteJSON)
        ).config
        let limits = pageLoader
        // The one template a load reads and does not serve, when it is in pages/: every other file is a page.
        let prefix = PageLoader.folderName + "/"
        let template = config.map(PageLoader.templatePath) ?? PageLoader.defaultTemplate
        let templateInPages = template.hasPrefix(prefix) ? String(template.dropFirst(prefix.count)) : nil
        let isTemplate = path == templateInPages
        let body = request.body
        let cap = isTemplate ? limits.maximumTemplateBytes : limits.maximumFileBytes
        guard body.count <= cap else {
            return Self.error(
                413,
                "'\(path)' is \(body.count) bytes; \(isTemplate ? "the landing page template" : "a page") may have at "
                    + "most \(cap) bytes (page-too-large); serve large files from a CDN or another server")
        }
        if PEMArmour.containsPrivateKey(body) {
            return Self.error(
                422,
                "'\(path)' holds a PEM private key (-----BEGIN … PRIVATE KEY-----); a page never holds one "
                    + "(private-key-in-page); nothing was written: remove the key, and replace it, as it may have leaked"
            )
        }
        if let problem = Self.touchIconProblem(path, body, configured: config?.pages.touchIcons) {
            return Self.error(422, "\(problem); nothing was written")
        }
        if isTemplate {
            guard let text = String(validating: body, as: UTF8.self) else {
                return Self.error(
                    422, "the landing page template '\(path)' is not UTF-8 (landing-template); nothing was written")
            }
            if let problem = LandingTemplate(text: text).problems.first {
                return Self.error(
                    422,
                    "\(problem) in the landing page template '\(path)' (landing-template): placeholders are written "
                        + "{{name}}; nothing was written")
            }
        }
        let ifMatch = request.ifMatch.map(Self.entityTags)
        var expecting: DomainExpectation?
        if request.ifNoneMatch != nil { expecting = .absent }
        if let ifMatch, ifMatch.count == 1, let tag = ifMatch.first, tag != "*" {
            // One revision: the repository compares it under its lock, without the page read here first.
            expecting = .revision(tag)
        } else if let ifMatch {
            let current = try repository.page(name, path: path)
            guard let current, ifMatch.contains("*") || ifMatch.contains(current.revision) else {
                return Self.pageConflict(name, path, current: current?.revision)
            }
            expecting = .revision(current.revision)
        }
        let written: PageWrite
        do {
            written = try repository.writePage(
                name, path: path, bytes: body, expecting: expecting,
                limits: PageLimits(limits, templates: Set([templateInPages].compactMap { $0 })), dryRun: dryRun)
        } catch let error as DomainRepositoryError {
            switch error.code {
            case .conflict(let now):
                return Self.pageConflict(name, path, current: now, exists: request.ifNoneMatch != nil && now != nil)
            case .noDomain: return Self.noDomain(name)
            case .limit: return Self.error(422, error.description + "; nothing was written")
            case .failed, .unavailable: throw error
            }
        }
        if !dryRun {
            logger.info(
                "API: wrote page \(path) of \(name)",
                metadata: [
                    "domain": "\(name)", "path": "\(path)", "actor": "\(request.caller.name)",
                    "revision": "\(written.revision)", "bytes": "\(body.count)",
                ])
        }
        var headers = [HTTPHeader("ETag", "\"\(written.revision)\"")]
        if written.created { headers.append(HTTPHeader("Location", "/api/v1/domains/\(name)/pages/\(path)")) }
        return Self.json(
            written.created ? 201 : 200,
            .members([
                ("domain", .string(name)), ("path", .string(path)), ("revision", .string(written.revision)),
                ("bytes", .number(Double(body.count))), ("contentType", .string(ContentType.forFile(path))),
                ("created", .bool(written.created)), ("dryRun", .bool(dryRun)),
            ]), headers: headers)
    }

    /// `DELETE …/pages/{path}`: needs `If-Match`, so no removal is blind.
    func removePage(_ name: String, _ path: String, _ request: APIRequest, dryRun: Bool) throws -> Response {
        guard let ifMatch = request.ifMatch.map(Self.entityTags) else {
            return Self.error(
                428,
                "DELETE needs If-Match: \"<revision>\" (the ETag of GET /api/v1/domains/\(name)/pages/\(path)), so no "
                    + "removal is blind")
        }
        // Compared here to answer 412 with the current revision; the repository compares again under its lock.
        guard let current = try sharedPage(name, path) else { return try noPage(name, path) }
        guard ifMatch.contains("*") || ifMatch.contains(current.revision) else {
            return Self.pageConflict(name, path, current: current.revision)
        }
        do {
            try repository.deletePage(name, path: path, expecting: current.revision, dryRun: dryRun)
        } catch let error as DomainRepositoryError {
            switch error.code {
            case .conflict(let now): return Self.pageConflict(name, path, current: now)
            case .noDomain: return Self.noDomain(name)
            case .limit, .failed, .unavailable: throw error
            }
        }
        // A dry run removed nothing: it says so in a 200, never with the 204 of a removal.
        if dryRun {
            return Self.json(
                200,
                .members([
                    ("domain", .string(name)), ("path", .string(path)), ("revision", .string(current.revision)),
                    ("dryRun", .bool(true)),
                ]))
        }
        logger.info(
            "API: removed page \(path) of \(name)",
            metadata: [
                "domain": "\(name)", "path": "\(path)", "actor": "\(request.caller.name)",
                "revision": "\(current.revision)",
            ])
        return Response(status: 204, headers: [HTTPHeader("Cache-Control", "no-store")])
    }

    /// 404 for a page that does not exist, or for its domain.
    private func noPage(_ name: String, _ path: String) throws -> Response {
        guard try repository.read(name) != nil else { return Self.noDomain(name) }
        return Self.error(404, "\(name) has no page '\(path)'; write it with PUT /api/v1/domains/\(name)/pages/\(path)")
    }

    /// 412 with the page's revision now current (`null` when it does not exist).
    static func pageConflict(_ name: String, _ path: String, current: String?, exists: Bool = false) -> Response {
        let message =
            exists
            ? "precondition failed: the page '\(path)' exists (If-None-Match: * creates only); its revision is "
                + (current ?? "")
            : current.map {
                "precondition failed: the page '\(path)' is at revision \($0); read it again (GET), and send "
                    + "If-Match: \"\($0)\""
            } ?? "precondition failed: \(name) has no page '\(path)'"
        return error(
            412, message, headers: current.map { [HTTPHeader("ETag", "\"\($0)\"")] } ?? [],
            more: [("revision", current.map(JSONValue.string) ?? .null)])
    }

    /// Why `body` cannot be the touch icon `path` (a convention name at the top of `pages/`, or one site.json's
    /// `pages.touchIcons` names): a load refuses one that is not a square PNG, and the domain with it.
    static func touchIconProblem(_ path: String, _ body: [UInt8], configured: [String]?) -> String? {
        let urlPath = "/" + path
        let isIcon =
            configured.map { $0.contains { RequestPath($0)?.description == urlPath } }
            ?? (!path.contains("/") && TouchIcon.probeSize(urlPath) != nil)
        guard isIcon else { return nil }
        guard let png = PNGInfo(body) else {
            return "touch icon '\(path)' is not a PNG file (touch-icon-format): save it as PNG"
        }
        guard png.width == png.height else {
            return "touch icon '\(path)' is \(png.width)×\(png.height), not square (touch-icon-square): use a square "
                + "image, ideally 180×180"
        }
        return nil
    }
}
