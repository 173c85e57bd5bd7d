import Synchronization

/// Serving settings kept between loads (``LoadedDomain/keptBetweenLoads(sharing:)``), one copy for all the
/// domains that have equal ones. Shared by the threads of one load.
public final class SharedSettings: Sendable {
    private let settings = Mutex<[SiteConfig: OutOfLine<SiteConfig>]>([:])

    /// An empty table.
    public init() {}

    /// The kept copy of `config`: an earlier one equal to it, or a new one kept from now on.
    func shared(_ config: SiteConfig) -> OutOfLine<SiteConfig> {
        settings.withLock { table in
            if let same = table[config] { return same }
            let kept = OutOfLine(config)
            table[config] = kept
            return kept
        }
    }
}
