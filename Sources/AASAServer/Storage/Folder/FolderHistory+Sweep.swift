import AASACore
import Foundation

extension FolderHistory {
    /// Deletes the history of each domain removed over ``HistoryPolicy/retention`` before `now` (its newest entry a
    /// removal, and `isServed` false: no folder of that name came back), then the oldest entries of all domains
    /// until they fit ``HistoryPolicy/totalBytes``. A log that cannot be read is left as it is (its domain's writes
    /// name it).
    func sweep(now: Date, isServed: (String) -> Bool) {
        guard let names = DirectoryListing.names(in: root) else { return }
        var domains: [(name: String, oldest: Date)] = []
        var total = 0
        for name in names where !name.hasPrefix(".") {
            guard let entries = try? log(name).entries, let newest = entries.first, let oldest = entries.last else {
                continue
            }
            if newest.removed && now.timeIntervalSince(newest.time) > policy.retention && !isServed(name) {
                remove(name)
                continue
            }
            total += entries.reduce(0) { $0 + cost(name, $1) }
            domains.append((name, oldest.time))
        }
        while total > policy.totalBytes,
            let index = domains.indices.min(by: { domains[$0].oldest < domains[$1].oldest })
        {
            let name = domains[index].name
            let next = domains.indices.filter { $0 != index }.map { domains[$0].oldest }.min()
            guard let entries = try? log(name).entries else {
                domains.remove(at: index)
                continue
            }
            // This domain's oldest entries while they are the oldest of all; at least one, since its oldest is.
            var kept = entries
            while let last = kept.last, total > policy.totalBytes, next.map({ last.time <= $0 }) ?? true {
                total -= cost(name, last)
                kept.removeLast()
            }
            if (try? rewrite(name, from: entries, to: kept)) == nil || kept.isEmpty {
                domains.remove(at: index)
            } else if let oldest = kept.last {
                domains[index].oldest = oldest.time
            }
        }
    }
}
