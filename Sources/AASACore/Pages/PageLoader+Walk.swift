#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// The walk of `pages/`: every file a request may see, read within its caps and confinement.
extension PageLoader {
    // MARK: Files

    /// Every file of `folder`'s `pages/` as it is on disk, by its path in the domain folder (`pages/about.html`),
    /// read by the same walk, confinement and caps as a load (the landing template among them, since it is read from
    /// there too), and the walk's findings: what `store push` uploads, so the store holds what a load of the folder
    /// reads.
    public func files(of folder: String, confinement: Confinement) -> (
        files: [String: [UInt8]], diagnostics: [Diagnostic]
    ) {
        var diagnostics: [Diagnostic] = []
        let raw = walk(
            FolderFileTree(root: folder), root: folder + "/" + Self.folderName, skipping: nil,
            confinement: confinement, diagnostics: &diagnostics)
        var files: [String: [UInt8]] = [:]
        files.reserveCapacity(raw.count)
        for (urlPath, file) in raw { files[Self.folderName + urlPath] = file.bytes }
        return (files, diagnostics)
    }

    func walk(
        _ tree: some FileTree, root: String, skipping template: String?, confinement: Confinement,
        diagnostics: inout [Diagnostic]
    ) -> [String: RawFile] {
        guard let rootReal = tree.realPath(root) else { return [:] }
        // A symlinked pages/ folder is a link like any other: it must stay inside the domain folder.
        if let refusal = confinement.refusal(of: rootReal) {
            diagnostics.append(refusal.diagnostic(root, what: "the pages folder"))
            return [:]
        }
        let pagesConfinement = confinement.narrowed(to: rootReal)
        var files: [String: RawFile] = [:]
        var total = 0
        var reportedCount = false
        var visited: Set<String> = [rootReal]
        // (URL path of the folder with a trailing slash, its real path on disk, depth)
        var stack: [(String, String, Int)] = [("/", rootReal, 0)]
        var entries = 0
        walking: while let (urlFolder, folder, depth) = stack.popLast() {
            let names = tree.names(in: folder).sorted()
            for name in names {
                entries += 1
                guard entries <= maximumEntries else {
                    diagnostics.append(
                        Diagnostic(
                            .error, rule: .pagesTooLarge,
                            "pages/ has more than \(maximumEntries) entries (files, folders and links); the rest is not looked at",
                            file: root, hint: "serve large sites from another server"))
                    break walking
                }
                let path = folder + "/" + name
                let urlPath = urlFolder + name
                switch Self.nameProblem(name, atTop: urlFolder == "/") {
                case .hidden?: continue
                case let problem?:
                    diagnostics.append(
                        Diagnostic(
                            .warning, rule: .pageName, "'\(urlPath)' is not served: \(problem)", file: path,
                            hint: "rename it"))
                    continue
                case nil: break
                }
                var entry = tree.entry(at: path, followingLinks: false)
                guard entry != .missing else { continue }
                var real = path
                if entry == .link {
                    guard let resolved = tree.realPath(path),
                        case let followed = tree.entry(at: resolved, followingLinks: true), followed != .missing
                    else {
                        diagnostics.append(
                            Diagnostic(
                                .warning, rule: .pageSymlink, "'\(urlPath)' is a broken symlink; it is not served",
                                file: path, hint: "remove it or point it at a file inside pages/"))
                        continue
                    }
                    real = resolved
                    entry = followed
                    guard Confinement.path(real, isWithin: rootReal) else {
                        diagnostics.append(
                            Diagnostic(
                                .warning, rule: .pageSymlink,
                                "'\(urlPath)' links to '\(real)', outside pages/; it is not served, and nothing is read through it",
                                file: path, hint: "move the file into pages/, or point the link at a file inside pages/"
                            ))
                        continue
                    }
                }
                if real == template { continue }
                if entry == .folder {
                    guard depth < maximumDepth, visited.insert(real).inserted else { continue }
                    stack.append((urlPath + "/", real, depth + 1))
                    continue
                }
                guard files.count < maximumFiles else {
                    if !reportedCount {
                        reportedCount = true
                        diagnostics.append(
                            Diagnostic(
                                .error, rule: .pagesTooLarge, "pages/ has more than \(maximumFiles) files",
                                file: root, hint: "serve large sites from another server"))
                    }
                    continue
                }
                // The caps are checked on the open file before it is read: this file, what is left of the domain's
                // total, and what is left of every domain's total (``PagesBudget``).
                let domainLeft = maximumTotalBytes - total
                let serverLeft = budget?.remaining ?? Int.max
                let cap = min(maximumFileBytes, domainLeft, serverLeft)
                switch tree.read(path, within: pagesConfinement, maximumBytes: cap, refusingPrivateKeys: true) {
                case .success(let contents):
                    if let budget, !budget.take(contents.bytes.count) {
                        diagnostics.append(overBudget(urlPath, file: path, size: contents.bytes.count))
                        break walking
                    }
                    total += contents.bytes.count
                    files[urlPath] = RawFile(
                        path: urlPath, file: path, bytes: contents.bytes, modified: contents.modified)
                case .failure(.tooLarge(let size, _)) where size > maximumFileBytes:
                    diagnostics.append(
                        Diagnostic(
                            .error, rule: .pageTooLarge,
                            "'\(urlPath)' is \(size) bytes; pages are loaded into memory and each file may have at most \(maximumFileBytes) bytes",
                            file: path, hint: "serve large files from a CDN or another server"))
                case .failure(.tooLarge(let size, _)) where size > domainLeft:
                    diagnostics.append(
                        Diagnostic(
                            .error, rule: .pagesTooLarge,
                            "pages/ holds more than \(maximumTotalBytes) bytes ('\(urlPath)', \(size) bytes, is over what is left); a domain's pages are loaded into memory and may total at most \(maximumTotalBytes) bytes, so the rest is not read",
                            file: path, hint: "serve large files from a CDN or another server"))
                    break walking
                case .failure(.tooLarge(let size, _)):
                    diagnostics.append(overBudget(urlPath, file: path, size: size))
                    break walking
                case .failure(let refusal):
                    diagnostics.append(refusal.diagnostic(path, what: "page '\(urlPath)'"))
                }
            }
        }
        return files
    }
}
