extension Rule {
    /// Reported by `PageLoader`.
    public static let pagesMemory = Rule(
        "pages-memory", .error,
        "The domain's pages do not fit in what is left of the server-wide pages budget (`serve --pages-memory`); the rest of its `pages/` is not read and, on reload, it keeps its last good version.",
        docs: "security.md#file-confinement-and-bounded-reads")

    /// Reported by `PageLoader`; also by `PagesRule`.
    public static let landingTemplate = Rule(
        "landing-template", .error,
        "A landing page without `smartAppBanner`, a control character in its title, a template path outside the domain folder, an unreadable template, an unknown `{{placeholder}}`, `{{url}}` used more than 16 times, `{{qrCode}}`, `{{openInBrowser}}` or `{{appButtons}}` used more than once, or a U+0001 character in the template."
    )

    /// Reported by `PageLoader`.
    public static let pageTooLarge = Rule(
        "page-too-large", .error,
        "A file over 16 MiB, or a `pages/` folder over 64 MiB, 10,000 files or 20,000 entries; reading stops at the file or entry that passes the cap."
    )

    /// Reported by `PageLoader`.
    public static let pagesTooLarge = Rule(
        "pages-too-large", .error,
        "A file over 16 MiB, or a `pages/` folder over 64 MiB, 10,000 files or 20,000 entries; reading stops at the file or entry that passes the cap."
    )

    /// Reported by `PageLoader`.
    public static let pageSymlink = Rule(
        "page-symlink", .warning,
        "A symlink out of `pages/` (the message says where it leads) or a broken one, or a name that cannot be requested safely: not served, and nothing is read through the link."
    )

    /// Reported by `PageLoader`.
    public static let pageName = Rule(
        "page-name", .warning,
        "A symlink out of `pages/` (the message says where it leads) or a broken one, or a name that cannot be requested safely: not served, and nothing is read through the link."
    )

    /// Reported by `PageLoader`; also by `PagesRule`.
    public static let touchIconMissing = Rule(
        "touch-icon-missing", .error, "A touch icon that is not a file in `pages/`, not a PNG, or not square.")

    /// Reported by `PageLoader`.
    public static let touchIconFormat = Rule(
        "touch-icon-format", .error, "A touch icon that is not a file in `pages/`, not a PNG, or not square.")

    /// Reported by `PageLoader`.
    public static let touchIconSquare = Rule(
        "touch-icon-square", .error, "A touch icon that is not a file in `pages/`, not a PNG, or not square.")

    /// Reported by `PageLoader`.
    public static let touchIconSize = Rule(
        "touch-icon-size", .warning, "An icon whose name says another size; no 180×180 icon.")

    /// Reported by `PageLoader`.
    public static let touchIcon180 = Rule(
        "touch-icon-180", .warning, "An icon whose name says another size; no 180×180 icon.")
}
