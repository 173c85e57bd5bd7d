#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The names in a folder, read with `readdir`: what `FileManager.contentsOfDirectory` gives, without its cost
/// (through Foundation, listing every domain folder costs 1 % of a start at 100,000 domains).
public enum DirectoryListing {
    /// The names of the entries of `path` other than `.` and `..`, in the order the file system gives them; `nil`
    /// (with `errno` set) when `path` cannot be listed.
    public static func names(in path: String) -> [String]? {
        guard let stream = opendir(path) else { return nil }
        defer { closedir(stream) }
        var names: [String] = []
        while let item = readdir(stream) {
            let name = withUnsafeBytes(of: item.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
