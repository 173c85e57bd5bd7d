import Logging

extension ConfigWatcher {
    /// The watcher of `configuration`'s folders (the config folder, and the certificate folder with HTTPS), each entry
    /// watched as the start's load reads it; `nil` without ``ServerConfiguration/watchForChanges``, or when inotify
    /// cannot be had (logged: SIGHUP still reloads).
    convenience init?(
        _ configuration: ServerConfiguration, logger: Logger, onChange: @escaping @Sendable (FolderChanges) -> Void
    ) {
        guard configuration.watchForChanges else { return nil }
        var roots = [configuration.configDirectory]
        if configuration.httpsPort != nil { roots.append(configuration.certificateDirectory) }
        do {
            try self.init(
                roots: roots, quietPeriod: configuration.reloadQuietPeriod,
                maximumDelay: configuration.reloadMaximumDelay, logger: logger, entriesWatchedByLoad: true,
                onChange: onChange)
        } catch {
            logger.warning("cannot watch for changes; reload with SIGHUP", metadata: ["reason": "\(error)"])
            return nil
        }
    }
}
