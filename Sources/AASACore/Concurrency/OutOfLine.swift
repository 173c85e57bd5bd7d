/// A value kept in its own allocation, for a large member that most instances of a type leave empty.
///
/// A server keeps one ``LoadedDomain`` and one ``PublishedDomain`` per domain in arrays and dictionaries, which
/// store their elements inline: a `SitePages?` member inline would make each element 160 bytes larger, 4 MB at
/// 10,000 domains that serve no pages. Out of line it costs one pointer where it is absent.
public final class OutOfLine<Value: Sendable>: Sendable {
    /// The value.
    public let value: Value

    /// Keeps `value` out of line.
    public init(_ value: Value) {
        self.value = value
    }
}

extension OutOfLine: Equatable where Value: Equatable {
    /// Equal when the values are: the same object, or two holding equal values.
    public static func == (lhs: OutOfLine, rhs: OutOfLine) -> Bool {
        lhs === rhs || lhs.value == rhs.value
    }
}
