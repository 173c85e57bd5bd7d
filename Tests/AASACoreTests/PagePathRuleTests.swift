import AASATestSupport
import Foundation
import Testing

@testable import AASACore

/// ``PageLoader/pathProblem(_:)`` is the rule the walk of `pages/` serves files by: a file on disk is read exactly
/// when the rule has no problem with its path (the tenant API refuses to write what the rule refuses).
@Suite struct PagePathRuleTests {
    @Test(
        arguments: [
            ("index.html", nil), ("a/b/c.txt", nil), (".well-known/x.json", nil), ("café.html", nil),
            (".git/config", "hidden"), ("a/.env", "hidden"), ("a/.well-known/x", "hidden"), (".hidden", "hidden"),
            ("a%41.html", "requested safely"), ("a\\b.html", "requested safely"), ("a\u{1}b.html", "requested safely"),
            (Array(repeating: "d", count: 32).joined(separator: "/") + "/x", nil),
            (Array(repeating: "d", count: 33).joined(separator: "/") + "/x", "nested"),
        ] as [(String, String?)])
    func theWalkReadsAFileExactlyWhenThePathRuleAcceptsIt(_ path: String, _ problem: String?) throws {
        let loader = PageLoader()
        let found = loader.pathProblem(path)
        #expect(
            found?.description.contains(problem ?? "\u{0}") ?? (problem == nil), "\(path): \(String(describing: found))"
        )
        let folder = TemporaryDirectory("aasa-page-rule")
        try folder.write("pages/" + path, "x")
        let files = loader.files(of: folder.path, confinement: Confinement(folder: folder.path)).files
        #expect((files["pages/" + path] != nil) == (problem == nil), "\(path): \(files.keys.sorted())")
    }

    @Test func emptyAndDotSegmentsAreRefused() {
        for path in ["", "a//b", "a/", "./a", "a/../b", ".."] {
            #expect(PageLoader().pathProblem(path) != nil, "\(path)")
        }
    }
}
