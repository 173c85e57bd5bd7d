/// Reads DER (X.690) one element at a time, with every length checked against what is left.
///
/// Only what reading certificates and keys needs (``CertificateFields``): single-byte tags (every tag in a
/// certificate up to its extensions is one), definite lengths in short or long form. Anything else throws, never traps, whatever the
/// input: the bytes come from operators' files.
package struct DERReader {
    /// One element: its tag byte and the bytes of its contents.
    package struct Element {
        package var tag: UInt8
        package var contents: ArraySlice<UInt8>
    }

    /// Tags used by X.509 (X.680 universal class; `0xA0 | n` is context-specific, constructed, `[n]`).
    package enum Tag {
        package static let boolean: UInt8 = 0x01
        package static let integer: UInt8 = 0x02
        package static let bitString: UInt8 = 0x03
        package static let octetString: UInt8 = 0x04
        package static let null: UInt8 = 0x05
        package static let objectIdentifier: UInt8 = 0x06
        package static let utcTime: UInt8 = 0x17
        package static let generalizedTime: UInt8 = 0x18
        package static let bmpString: UInt8 = 0x1E
        package static let sequence: UInt8 = 0x30
        package static let set: UInt8 = 0x31

        /// `[number] EXPLICIT` (context-specific, constructed).
        package static func explicit(_ number: UInt8) -> UInt8 { 0xA0 | number }
        /// `[number] IMPLICIT` of a primitive type (context-specific, primitive).
        package static func implicit(_ number: UInt8) -> UInt8 { 0x80 | number }
    }

    /// Why the bytes are not the DER expected.
    package struct Failure: Error {
        package var reason: String

        package init(reason: String) {
            self.reason = reason
        }
    }

    private var remaining: ArraySlice<UInt8>

    /// A reader over `bytes`.
    package init(_ bytes: ArraySlice<UInt8>) {
        remaining = bytes
    }

    /// Whether every element has been read.
    package var isAtEnd: Bool { remaining.isEmpty }

    /// The tag of the next element, without reading it.
    package var nextTag: UInt8? { remaining.first }

    /// Reads the next element, whatever its tag.
    package mutating func read() throws(Failure) -> Element {
        let (tag, contents) = try readParts()
        return Element(tag: tag, contents: contents)
    }

    /// The next element's tag and contents, apart: a caller that checks the tag and keeps the contents takes them
    /// without a copy of an ``Element`` (a retain and a release of the bytes, some seventy times a certificate).
    private mutating func readParts() throws(Failure) -> (tag: UInt8, contents: ArraySlice<UInt8>) {
        guard remaining.count >= 2 else { throw Failure(reason: "an element is cut short") }
        let start = remaining.startIndex
        let tag = remaining[start]
        // High tag numbers (0x1F) never occur in the parts of a certificate read here.
        guard tag & 0x1F != 0x1F else { throw Failure(reason: "an element has a multi-byte tag") }
        var index = start + 1
        let first = remaining[index]
        index += 1
        var length = 0
        if first < 0x80 {
            length = Int(first)
        } else {
            // Long form: 0x81…0x84 length bytes follow; 0x80 (indefinite) is BER, not DER.
            let count = Int(first & 0x7F)
            guard (1...4).contains(count), remaining.endIndex - index >= count else {
                throw Failure(reason: "an element has an invalid length")
            }
            for offset in 0..<count { length = length << 8 | Int(remaining[index + offset]) }
            index += count
        }
        guard length <= remaining.endIndex - index else {
            throw Failure(reason: "an element is longer than what contains it")
        }
        let contents = remaining[index..<(index + length)]
        remaining = remaining[(index + length)...]
        return (tag, contents)
    }

    /// Reads the next element, which must have `tag`, and returns its contents.
    package mutating func read(_ tag: UInt8, _ what: @autoclosure () -> String) throws(Failure) -> ArraySlice<UInt8> {
        let (found, contents) = try readParts()
        guard found == tag else { throw Failure(reason: "\(what()) is missing or has the wrong type") }
        return contents
    }

    /// Reads the next element if it has `tag` (an OPTIONAL or DEFAULT field), else leaves it.
    package mutating func readIfPresent(_ tag: UInt8) throws(Failure) -> ArraySlice<UInt8>? {
        guard nextTag == tag else { return nil }
        return try readParts().contents
    }
}
