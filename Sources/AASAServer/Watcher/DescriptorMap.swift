/// A map from inotify watch descriptors to values, kept in pages of consecutive descriptors.
///
/// inotify hands out a new descriptor for each new inode watched, counting up from 1 (the kernel allocates them
/// cyclically), so the descriptors in use are nearly consecutive numbers. A page of them is one array slot each,
/// where a `Dictionary` keeps up to twice the slots of its entries (200,000 watched folders at 100,000 domains take
/// 524,288 slots). A page is let go when its last value is removed, so the descriptors that renewals retire do not
/// hold memory.
struct DescriptorMap<Value: Sendable>: Sendable {
    /// Descriptors per page.
    static var pageSize: Int { 1024 }

    private struct Page: Sendable {
        var values: [Value?]
        var count = 0

        init() { values = Array(repeating: nil, count: DescriptorMap.pageSize) }
    }

    private var pages: [Int32: Page] = [:]
    /// The number of descriptors with a value.
    private(set) var count = 0
    /// The number of pages held.
    var pageCount: Int { pages.count }

    /// An empty map.
    init() {}

    /// The value of `descriptor`; assigning `nil` removes it.
    subscript(descriptor: Int32) -> Value? {
        get {
            let (page, slot) = Self.place(descriptor)
            return pages[page]?.values[slot]
        }
        set {
            let (number, slot) = Self.place(descriptor)
            // Taken out and put back: the page is changed in place, not copied. No page is made to remove from.
            guard var page = pages.removeValue(forKey: number) ?? (newValue == nil ? nil : Page()) else { return }
            let change = (newValue == nil ? 0 : 1) - (page.values[slot] == nil ? 0 : 1)
            page.values[slot] = newValue
            page.count += change
            count += change
            if page.count > 0 { pages[number] = page }
        }
    }

    /// Removes the value of `descriptor`, returning it.
    @discardableResult
    mutating func removeValue(forKey descriptor: Int32) -> Value? {
        let value = self[descriptor]
        self[descriptor] = nil
        return value
    }

    /// The page holding `descriptor` and its slot there (descriptors below 0 share the pages of their own range).
    private static func place(_ descriptor: Int32) -> (page: Int32, slot: Int) {
        let size = Int32(pageSize)
        let page = descriptor >= 0 ? descriptor / size : (descriptor + 1) / size - 1
        return (page, Int(descriptor - page * size))
    }
}
