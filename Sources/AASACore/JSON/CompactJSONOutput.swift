/// A ``JSONOutput`` writing compact JSON bytes: what ``JSONWriter`` in its compact style writes for the same tree,
/// byte for byte, without the tree.
public struct CompactJSONOutput: JSONOutput {
    private var output: [UInt8] = []
    /// Whether the next key or value follows another in its container, and so takes a comma.
    private var follows = false

    /// An empty output with room for `capacity` bytes.
    public init(capacity: Int = 256) {
        output.reserveCapacity(capacity)
    }

    /// The bytes written, in an array exactly as long as they are: generated files are kept for as long as they are
    /// served, and a grown array holds up to twice its length.
    public var bytes: [UInt8] { output.withUnsafeBufferPointer { Array($0) } }

    public mutating func beginObject() { open(UInt8(ascii: "{")) }

    public mutating func endObject() { close(UInt8(ascii: "}")) }

    public mutating func beginArray() { open(UInt8(ascii: "[")) }

    public mutating func endArray() { close(UInt8(ascii: "]")) }

    public mutating func key(_ key: String) {
        separate()
        JSONWriter.writeString(key, into: &output)
        output.append(UInt8(ascii: ":"))
        follows = false
    }

    public mutating func string(_ value: String) {
        separate()
        JSONWriter.writeString(value, into: &output)
        follows = true
    }

    public mutating func bool(_ value: Bool) {
        separate()
        output.append(contentsOf: (value ? "true" : "false").utf8)
        follows = true
    }

    private mutating func open(_ bracket: UInt8) {
        separate()
        output.append(bracket)
        follows = false
    }

    private mutating func close(_ bracket: UInt8) {
        output.append(bracket)
        follows = true
    }

    private mutating func separate() {
        if follows { output.append(UInt8(ascii: ",")) }
    }
}
