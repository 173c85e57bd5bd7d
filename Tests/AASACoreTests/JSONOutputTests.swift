import AASATestSupport
import Foundation
import Testing

@testable import AASACore

/// A model written through ``JSONOutput``: the compact bytes are what ``JSONWriter`` writes for the same JSON read
/// back, they give the model again, and a tree written through it holds what the bytes hold.
@Suite struct JSONOutputTests {
    /// Every part of Apple's format at once, with strings that need escapes.
    static let everything = AssociationFile(
        applinks: AppLinks(
            apps: [],
            details: [
                AppLinkDetails(
                    appID: "ABCDE12345.com.example.app", appIDs: ["ABCDE12345.com.example.app", "ABCDE12345.com.x"],
                    components: [
                        ComponentPattern(
                            path: "/buy/*", query: .items([QueryItemPattern(name: "id", pattern: "?*")]),
                            fragment: "top", exclude: false, comment: "a \"quoted\"\nline\t\u{1}é",
                            caseSensitive: false, percentEncoded: true),
                        ComponentPattern(path: "/help/*", query: .whole("q=*"), exclude: true),
                        ComponentPattern(),
                    ],
                    paths: ["/buy/*", "NOT /help/*"],
                    defaults: ComponentPattern(caseSensitive: true)),
                AppLinkDetails(appIDs: [], components: []),
            ],
            defaults: ComponentPattern(percentEncoded: false),
            substitutionVariables: [SubstitutionVariable(name: "lang", values: ["en", "fr\\"])]),
        webCredentials: ["ABCDE12345.com.example.app"], appClips: [], activityContinuation: ["ABCDE12345.com.x"],
        authSrv: ["ABCDE12345.com.example.sso"])

    /// The written bytes read back by the parser, written again by ``JSONWriter``.
    static func rewritten(_ bytes: [UInt8]) throws -> [UInt8] {
        JSONWriter(style: .compact).bytes(try JSONParser().parse(SourceText(name: "written", bytes: bytes)).root.value)
    }

    @Test func compactBytesAreExactlyWhatTheWriterWritesForTheSameJSON() throws {
        let bytes = Self.everything.compactBytes
        #expect(try bytes == Self.rewritten(bytes))
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == ##"{"applinks":{"apps":[],"defaults":{"percentEncoded":false},"substitutionVariables":{"lang":["en","fr\\"]},"details":[{"appID":"ABCDE12345.com.example.app","appIDs":["ABCDE12345.com.example.app","ABCDE12345.com.x"],"defaults":{"caseSensitive":true},"components":[{"/":"/buy/*","?":{"id":"?*"},"#":"top","exclude":false,"caseSensitive":false,"percentEncoded":true,"comment":"a \"quoted\"\nline\t\u0001é"},{"/":"/help/*","?":"q=*","exclude":true},{}],"paths":["/buy/*","NOT /help/*"]},{"appIDs":[],"components":[]}]},"webcredentials":{"apps":["ABCDE12345.com.example.app"]},"appclips":{"apps":[]},"activitycontinuation":{"apps":["ABCDE12345.com.x"]},"authsrv":{"apps":["ABCDE12345.com.example.sso"]}}"##
        )
        // As long as the text (to malloc's rounding), not grown to twice it: kept for as long as it is served.
        #expect(bytes.capacity < bytes.count + 32)
    }

    /// A component's tree (what site.json and Android's reading of a rule are made from) holds its keys in order.
    @Test func aComponentsTreeHoldsItsKeysInOrder() {
        let component = ComponentPattern(
            path: "/a",
            query: .items([QueryItemPattern(name: "b", pattern: "c"), QueryItemPattern(name: "d", pattern: "")]),
            fragment: "f", exclude: true, comment: "n", caseSensitive: false, percentEncoded: true)
        func member(_ key: String, _ value: JSONValue) -> JSONMember { JSONMember(key: key, value: JSONNode(value)) }
        #expect(
            component.jsonValue(spelling: .site)
                == .object([
                    member("path", .string("/a")),
                    member("query", .object([member("b", .string("c")), member("d", .string(""))])),
                    member("fragment", .string("f")), member("exclude", .bool(true)),
                    member("caseSensitive", .bool(false)), member("percentEncoded", .bool(true)),
                    member("comment", .string("n")),
                ]))
        #expect(ComponentPattern().jsonValue(spelling: .apple) == .object([]))
    }

    @Test func anEmptyFileIsAnEmptyObject() {
        #expect(AssociationFile().compactBytes == Array("{}".utf8))
    }

    /// Every file of the corpus that reads, written and read back, is the same file, and written again, the same
    /// bytes.
    @Test func corpusFilesReadBackAsWritten() throws {
        let folder = RepositoryPaths.corpus + "/aasa"
        var read = 0
        for name in RepositoryPaths.files(in: folder, endingWith: ".json") {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)))
            guard let file = AssociationFile.parse(SourceText(name: name, bytes: bytes)).file else { continue }
            read += 1
            let written = file.compactBytes
            #expect(try written == Self.rewritten(written), "\(name)")
            let again = AssociationFile.parse(SourceText(name: name, bytes: written)).file
            #expect(again == file, "\(name)")
            #expect(again?.compactBytes == written, "\(name)")
        }
        #expect(read >= 100)
    }

    @Test func componentsWriteInEitherSpelling() {
        let component = ComponentPattern(path: "/a", query: .items([QueryItemPattern(name: "b", pattern: "c")]))
        var output = CompactJSONOutput()
        component.write(to: &output, spelling: .site)
        #expect(String(decoding: output.bytes, as: UTF8.self) == #"{"path":"/a","query":{"b":"c"}}"#)
        #expect(output.bytes == JSONWriter(style: .compact).bytes(component.jsonValue(spelling: .site)))
    }
}
