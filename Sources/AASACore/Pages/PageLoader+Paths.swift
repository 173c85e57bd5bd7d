/// The rules of page paths: which names a load serves, and the budget finding.
extension PageLoader {
    // MARK: Paths

    /// Why a file of `pages/` is not served for its path alone.
    public enum PathProblem: Sendable, Equatable, CustomStringConvertible {
        /// A segment starts with a dot (only a first segment `.well-known` is served, RFC 8615).
        case hidden(String)
        /// A segment cannot be requested safely: it holds `%`, `\\`, a control character or invalid UTF-8, or it is
        /// empty, `.` or `..`.
        case unsafeName(String)
        /// More folders than the walk follows (``maximumDepth``).
        case tooDeep(limit: Int)

        public var description: String {
            switch self {
            case .hidden(let segment):
                "'\(segment)' is hidden (starts with a dot); only a top-level .well-known/ is served"
            case .unsafeName(let segment):
                "its name '\(segment)' cannot be requested safely (it has '%', '\\\\', a control character or invalid "
                    + "UTF-8, or is empty, '.' or '..')"
            case .tooDeep(let limit): "it is in more than \(limit) nested folders, which are not followed"
            }
        }
    }

    /// Why the file at `path` inside `pages/` (`about/index.html`, no leading slash) would not be loaded for its
    /// path alone, or `nil` when a load serves it at `/<path>`: the rule of the walk, used by whatever writes pages.
    public func pathProblem(_ path: String) -> PathProblem? {
        let segments = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        for (index, segment) in segments.enumerated() {
            if let problem = Self.nameProblem(segment, atTop: index == 0) { return problem }
        }
        // The walk reads files of folders up to ``maximumDepth`` deep: at most that many folders above a file.
        if segments.count - 1 > maximumDepth { return .tooDeep(limit: maximumDepth) }
        return nil
    }

    /// Why an entry named `name` (in the top of `pages/` when `atTop`) is not served, or `nil` when it is.
    static func nameProblem(_ name: String, atTop: Bool) -> PathProblem? {
        if name.hasPrefix(".") && !(atTop && name == ".well-known") {
            return name == "." || name == ".." ? .unsafeName(name) : .hidden(name)
        }
        // A `%` in a file name is decoded by every request for it: such a file could never be asked for by its name.
        guard !name.isEmpty, !name.contains("%"), !name.contains("/"), RequestPath("/" + name) != nil else {
            return .unsafeName(name)
        }
        return nil
    }

    /// The error for a page that does not fit in what is left of the server's ``budget``.
    func overBudget(_ urlPath: String, file: String, size: Int) -> Diagnostic {
        Diagnostic(
            .error, rule: .pagesMemory,
            "'\(urlPath)' (\(size) bytes) does not fit in the server's pages budget of \(budget?.limit ?? 0) bytes "
                + "(serve --pages-memory), which the domains loaded so far have used; the rest of pages/ is not read",
            file: file, hint: "raise --pages-memory, or serve large files from a CDN or another server")
    }
}
