/// A type that writes itself as JSON through a ``JSONOutput``: its bytes and its tree come from that one
/// description.
public protocol JSONWritable {
    /// Writes the value, its tokens in JSON's order.
    func write(to output: inout some JSONOutput)
}

extension JSONWritable {
    /// The value as a JSON tree, keys in the order it writes them.
    public var jsonValue: JSONValue {
        var tree = JSONTreeOutput()
        write(to: &tree)
        return tree.value
    }
}
