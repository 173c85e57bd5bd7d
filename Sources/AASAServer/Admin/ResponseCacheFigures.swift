import AASAMicroHTTPD

/// What the public listeners' response cache did since the start, and holds now (`/metrics`).
public struct ResponseCacheFigures: Sendable, Equatable {
    /// Responses built for a request because none was kept.
    public var builds: Int
    /// Responses let go to stay within the bound.
    public var evictions: Int
    /// Responses kept built now.
    public var count: Int

    /// The cache's own figures.
    init(_ figures: ResponseCache.Figures) {
        builds = figures.builds
        evictions = figures.evictions
        count = figures.count
    }
}
