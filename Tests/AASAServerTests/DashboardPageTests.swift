import Testing

@testable import AASAServer

/// What the dashboard's page leaves out of its script, stylesheet and markup when it inlines them: comments,
/// indentation and blank lines, never code, a quoted string or a line break between statements.
struct DashboardPageTests {
    @Test(arguments: [
        ("  const a = 1;\n\n  // why\n  const b = '// kept';\n", "const a = 1;\nconst b = '// kept';"),
        ("/** One line. */\nf();\n/**\n * Two\n * lines.\n */\ng();", "f();\ng();"),
        ("/* note */ h();\nx = a\n  * b;", "/* note */ h();\nx = a\n* b;"),
        ("/*\n block\n*/ k();", "k();"),
        (
            "const re = /`([^`\\n]+)`/;  // trailing comment stays\n",
            "const re = /`([^`\\n]+)`/;  // trailing comment stays"
        ),
    ])
    func theScriptLosesItsCommentLinesAndIndentationOnly(script: String, compact: String) {
        #expect(DashboardPage.compactScript(script) == compact)
    }

    @Test(arguments: [
        ("/* theme */\n:root {\n  --a: 1px;\n}\n", ":root{--a:1px;}"),
        (
            ".x :is(a, b) > c { content: \"a  /* b */  c\" / \"\"; }",
            ".x :is(a,b) > c{content:\"a  /* b */  c\" / \"\";}"
        ),
        (
            "@media (max-width: 760px) {\n  .a { width: calc(100% + 16px); }\n}",
            "@media (max-width:760px){.a{width:calc(100% + 16px);}}"
        ),
        ("a[href$='x y'] , b { font: 12px/1.5 var(--mono) }", "a[href$='x y'],b{font:12px/1.5 var(--mono)}"),
    ])
    func theStylesheetLosesCommentsAndTheWhiteSpaceCSSDoesNotRead(style: String, compact: String) {
        #expect(DashboardPage.compactStyle(style) == compact)
    }

    @Test func theMarkupLosesIndentationAndBlankLines() {
        #expect(
            DashboardPage.compactMarkup("<main>\n\n  <p>\n    Some text\n  </p>\n</main>\n")
                == "<main>\n<p>\nSome text\n</p>\n</main>")
    }
}
