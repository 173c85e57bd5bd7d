import AASATestSupport
import Foundation
import Testing

@testable import AASACore

/// A model written through ``JSONOutput``: the compact bytes are what ``JSONWriter`` writes for the tree the same
/// model writes, and read back, they give the model again.
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

    @Test func compactBytesAreExactlyWhatTheWriterWritesForTheTree() {
        let bytes = Self.everything.compactBytes
        #expect(bytes == JSONWriter(style: .compact).bytes(Self.everything.jsonValue))
        #expect(
            String(decoding: bytes, as: UTF8.self)
                == ##"{"applinks":{"apps":[],"defaults":{"percentEncoded":false},"substitutionVariables":{"lang":["en","fr\\"]},"details":[{"appID":"ABCDE12345.com.example.app","appIDs":["ABCDE12345.com.example.app","ABCDE12345.com.x"],"defaults":{"caseSensitive":true},"components":[{"/":"/buy/*","?":{"id":"?*"},"#":"top","exclude":false,"caseSensitive":false,"percentEncoded":true,"comment":"a \"quoted\"\nline\t\u0001é"},{"/":"/help/*","?":"q=*","exclude":true},{}],"paths":["/buy/*","NOT /help/*"]},{"appIDs":[],"components":[]}]},"webcredentials":{"apps":["ABCDE12345.com.example.app"]},"appclips":{"apps":[]},"activitycontinuation":{"apps":["ABCDE12345.com.x"]},"authsrv":{"apps":["ABCDE12345.com.example.sso"]}}"##
        )
        // As long as the text (to malloc's rounding), not grown to twice it: kept for as long as it is served.
        #expect(bytes.capacity < bytes.count + 32)
    }

    @Test func theTreeHasTheModelsKeysInOrder() throws {
        guard case .object(let top) = Self.everything.jsonValue else {
            Issue.record("not an object")
            return
        }
        #expect(top.map(\.key) == ["applinks", "webcredentials", "appclips", "activitycontinuation", "authsrv"])
        guard case .object(let links) = top[0].value.value, case .array(let details) = links.last?.value.value,
            case .object(let first) = details.first?.value
        else {
            Issue.record("no details")
            return
        }
        #expect(links.map(\.key) == ["apps", "defaults", "substitutionVariables", "details"])
        #expect(first.map(\.key) == ["appID", "appIDs", "defaults", "components", "paths"])
        #expect(
            try #require(details.last).value
                == .object([
                    JSONMember(key: "appIDs", value: JSONNode(.array([]))),
                    JSONMember(key: "components", value: JSONNode(.array([]))),
                ]))
    }

    @Test func anEmptyFileIsAnEmptyObject() {
        #expect(AssociationFile().compactBytes == Array("{}".utf8))
        #expect(AssociationFile().jsonValue == .object([]))
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
            #expect(written == JSONWriter(style: .compact).bytes(file.jsonValue), "\(name)")
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
