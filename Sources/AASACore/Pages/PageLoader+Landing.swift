/// The landing page: the template (built in, or the domain's own) filled and injected.
extension PageLoader {
    // MARK: Landing page

    func landing(
        _ site: SiteContext, tree: some FileTree, banner: BannerConfig, markup: HeadMarkup, icons: [TouchIcon],
        templateFile: String?,
        confinement: Confinement, modified: Int, diagnostics: inout [Diagnostic]
    ) -> LandingPage? {
        let settings = site.config.pages.landingPage
        let templatePath = KeyPath.root.key("pages").key("landingPage").key("template")
        var image = settings.image ?? TouchIcon.best(for: 1024, among: icons)?.path ?? ""
        if image.hasPrefix("/") { image = "https://" + site.domain + image }
        var template = LandingTemplate.builtIn(hasImage: !image.isEmpty)
        var lastModified = modified
        if let templateFile {
            let contents: ConfinedFile.Contents
            switch tree.read(
                templateFile, within: confinement, maximumBytes: maximumTemplateBytes, refusingPrivateKeys: true)
            {
            case .success(let read): contents = read
            case .failure(let refusal):
                diagnostics.append(
                    refusal.diagnostic(
                        templateFile, what: "the landing page template", keyPath: templatePath.description))
                return nil
            }
            guard let text = String(validating: contents.bytes, as: UTF8.self) else {
                diagnostics.append(
                    site.diagnostic(
                        .error, rule: .landingTemplate,
                        "cannot read the landing page template '\(templateFile)' as UTF-8",
                        at: templatePath))
                return nil
            }
            template = LandingTemplate(text: text)
            lastModified = max(lastModified, contents.modified)
            for problem in template.problems {
                diagnostics.append(
                    Diagnostic(
                        .error, rule: .landingTemplate, "\(problem) in the landing page template", file: templateFile,
                        hint: "placeholders are written {{name}}"))
            }
            let uses = template.urlUses
            guard uses <= LandingTemplate.maximumURLUses else {
                diagnostics.append(
                    Diagnostic(
                        .error, rule: .landingTemplate,
                        "{{url}} is used \(uses) times in the landing page template; at most "
                            + "\(LandingTemplate.maximumURLUses) uses are allowed",
                        file: templateFile,
                        hint: "each {{url}} is the request's URL, spliced in per request: keep it where a page names "
                            + "its own URL (og:url, the canonical link)"))
                return nil
            }
        }
        let filled = template.fill(
            LandingTemplate.Values(
                title: settings.title ?? site.domain,
                description: settings.description ?? "Open this page in the app, or get the app on the App Store.",
                appStoreURL: banner.appStoreURL, appStoreID: banner.appStoreID, image: image, domain: site.domain))
        // A template that does not place the in-app browser's element gets it at the top of its body.
        let placesOpenInBrowser = template.uses(of: "openInBrowser") > 0
        return LandingPage(
            withBanner: LandingTemplate.splitMarkers(
                markup.inject(into: filled, withBanner: true, openInBrowser: !placesOpenInBrowser)),
            withoutBanner: LandingTemplate.splitMarkers(
                markup.inject(into: filled, withBanner: false, openInBrowser: !placesOpenInBrowser)),
            buttons: AppButtons(domain: site.domain, config: site.config, banner: banner),
            lastModified: lastModified)
    }
}
