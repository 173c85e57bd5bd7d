/// A small set that holds one value without an allocation: what the watcher keeps per watch descriptor (its
/// owners) and per watched entry (its descriptors). Nearly all of them have one, and a `Set` each would add about
/// 25 MB to the watch table at 100,000 domains (200,000 watched folders).
struct FewValues<Element: Hashable & Sendable>: Sequence, Sendable {
    private enum Storage: Sendable {
        case one(Element)
        case many(Set<Element>)
    }

    private var storage: Storage

    /// A set of `value` alone.
    init(_ value: Element) {
        storage = .one(value)
    }

    /// Adds `value`.
    mutating func insert(_ value: Element) {
        switch storage {
        case .one(let existing) where existing == value: return
        case .one(let existing): storage = .many([existing, value])
        case .many(var values):
            values.insert(value)
            storage = .many(values)
        }
    }

    /// The set without `value`; `nil` when nothing is left.
    func removing(_ value: Element) -> FewValues? {
        switch storage {
        case .one(let existing): return existing == value ? nil : self
        case .many(var values):
            values.remove(value)
            guard let first = values.first else { return nil }
            var result = FewValues(first)
            if values.count > 1 { result.storage = .many(values) }
            return result
        }
    }

    func makeIterator() -> AnyIterator<Element> {
        switch storage {
        case .one(let value): AnyIterator(CollectionOfOne(value).makeIterator())
        case .many(let values): AnyIterator(values.makeIterator())
        }
    }
}
