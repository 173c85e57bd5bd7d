import AASACore
import Testing

/// RFC 4648 §10's vectors without padding, and RFC 7515 Appendix C's bytes that need both URL-safe characters.
@Suite struct Base64URLTests {
    @Test(arguments: [
        ([UInt8](), ""),
        (Array("f".utf8), "Zg"),
        (Array("fo".utf8), "Zm8"),
        (Array("foo".utf8), "Zm9v"),
        (Array("foob".utf8), "Zm9vYg"),
        (Array("fooba".utf8), "Zm9vYmE"),
        (Array("foobar".utf8), "Zm9vYmFy"),
        ([3, 236, 255, 224, 193], "A-z_4ME"),
    ])
    func encodesWithoutPaddingAndDecodesBack(bytes: [UInt8], text: String) {
        #expect(Base64URL.encode(bytes) == text)
        #expect(Base64URL.decode(text) == bytes)
    }

    @Test(arguments: ["Zg==", "Zm9vY", "A+z/4ME", "Zm9v Yg"])
    func decodingRefusesPaddingImpossibleLengthsAndTheStandardAlphabet(text: String) {
        #expect(Base64URL.decode(text) == nil)
    }
}
