extension PublishedDomain {
    /// The apps each served service names, in file order, as `/status` and the dashboard list them: `applinks`
    /// (the app IDs of every details entry, `appIDs` and `appID`), `webcredentials`, `appclips`,
    /// `activitycontinuation`, `authsrv`, then `android` (the packages of assetlinks.json). A service naming no
    /// app is left out.
    ///
    /// Read back from the served bytes when asked, like ``file``: a server does not keep every domain's document.
    public var servedApps: [(service: String, apps: [String])] {
        let file = self.file
        var linked: [String] = []
        for details in file.applinks?.details ?? [] {
            for app in details.modernAppIDs where !linked.contains(app) {
                linked.append(app)
            }
        }
        let services = [("applinks", linked)] + file.appServices.map { ($0.key, $0.apps ?? []) }
        let android = AndroidTargets(assetLinks.flatMap(JSONValue.parse)).packages
        return (services + [("android", android)]).filter { !$0.1.isEmpty }.map { (service: $0.0, apps: $0.1) }
    }
}
