/// The touch icons of a domain's pages.
extension PageLoader {
    // MARK: Touch icons

    /// The configured icons, or by convention the `apple-touch-icon*.png` files in the pages root; each must
    /// be a square PNG (spec §6). Warns when none is 180×180, the size today's iPhones use.
    func touchIcons(
        _ config: SiteConfig, raw: [String: RawFile], site: SiteContext, diagnostics: inout [Diagnostic]
    ) -> [TouchIcon] {
        var icons: [TouchIcon] = []
        var problems: [Diagnostic] = []
        func check(_ path: String, _ file: RawFile, report: (Diagnostic.Severity, Rule, String, String) -> Diagnostic) {
            guard let png = PNGInfo(file.bytes) else {
                problems.append(
                    report(.error, .touchIconFormat, "touch icon '\(path)' is not a PNG file", "save it as PNG"))
                return
            }
            guard png.width == png.height else {
                problems.append(
                    report(
                        .error, .touchIconSquare, "touch icon '\(path)' is \(png.width)×\(png.height), not square",
                        "use a square image, ideally 180×180"))
                return
            }
            if let named = TouchIcon.probeSize(path), !path.hasPrefix("/apple-touch-icon."),
                !path.hasPrefix("/apple-touch-icon-precomposed."), named != png.width
            {
                problems.append(
                    report(
                        .warning, .touchIconSize,
                        "touch icon '\(path)' is \(png.width)×\(png.height), not what its name says",
                        "rename it or resize it"))
            }
            icons.append(TouchIcon(path: path, size: png.width))
        }
        if let configured = config.pages.touchIcons {
            for (index, path) in configured.enumerated() {
                let keyPath = KeyPath.root.key("pages").key("touchIcons").index(index)
                let key = RequestPath(path)?.description
                guard let key, let file = raw[key] else {
                    diagnostics.append(
                        site.diagnostic(
                            .error, rule: .touchIconMissing, "touch icon '\(path)' is not a file in pages/",
                            at: keyPath,
                            hint: "give its URL path, e.g. \"/apple-touch-icon.png\" for pages/apple-touch-icon.png"))
                    continue
                }
                check(key, file) { severity, rule, message, hint in
                    site.diagnostic(severity, rule: rule, message, at: keyPath, hint: hint)
                }
            }
        } else {
            for path in raw.keys.sorted() where TouchIcon.probeSize(path) != nil {
                let file = raw[path]!
                check(path, file) { severity, rule, message, hint in
                    Diagnostic(severity, rule: rule, message, file: file.file, hint: hint)
                }
            }
        }
        diagnostics += problems
        if !icons.isEmpty && !icons.contains(where: { $0.size == 180 }) {
            let sizes = icons.map { "\($0.size)×\($0.size)" }.joined(separator: ", ")
            diagnostics.append(
                site.diagnostic(
                    .warning, rule: .touchIcon180, "no 180×180 touch icon (have \(sizes)); iPhones use 180×180",
                    at: .root.key("pages").key("touchIcons"), hint: "add pages/apple-touch-icon.png at 180×180"))
        }
        // Convention files: plain and -precomposed names may both exist; keep one per size, plain first.
        var seen: Set<Int> = []
        return icons.sorted {
            ($0.path.contains("precomposed") ? 1 : 0, $0.path) < ($1.path.contains("precomposed") ? 1 : 0, $1.path)
        }
        .filter { seen.insert($0.size).inserted }
    }
}
