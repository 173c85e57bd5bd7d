import Synchronization

/// Serving settings kept between loads (``LoadedDomain/keptBetweenLoads(sharing:)``), one copy for all the
/// domains that have equal ones. Shared by the threads of one load.
///
/// Every domain of a load asks, and most ask for the same few settings: the lock is held only to look up or file a
/// hash. Hashing a config and comparing it with the kept one are done outside it, so the threads of a load wait for
/// each other only for a dictionary step.
public final class SharedSettings: Sendable {
    /// The kept settings by hash; more than one only where different settings hash alike.
    private let settings = Mutex<[Int: [OutOfLine<SiteConfig>]]>([:])

    /// An empty table.
    public init() {}

    /// The kept copy of `config`: an earlier one equal to it, or a new one kept from now on.
    func shared(_ config: SiteConfig) -> OutOfLine<SiteConfig> {
        let hash = config.hashValue
        let kept = settings.withLock { $0[hash] ?? [] }
        if let same = kept.first(where: { $0.value == config }) { return same }
        // Not seen yet (a few times a load): filed unless another thread filed equal settings meanwhile.
        return settings.withLock { table in
            if let same = table[hash]?.first(where: { $0.value == config }) { return same }
            let made = OutOfLine(config)
            table[hash, default: []].append(made)
            return made
        }
    }

    /// How many distinct settings are kept.
    var count: Int { settings.withLock { $0.values.reduce(0) { $0 + $1.count } } }
}
