import AASACore
import Foundation
import Testing

@testable import AASAServer

/// `--admin-token-file`: several named, scoped tokens one a line, the single bare token of before, and each
/// malformed line refused with its file, line and fix.
@Suite struct AdminTokenFileTests {
    static let path = "/etc/aasa/admin-tokens"

    func parse(_ text: String) throws(AdminAccess.TokenFileError) -> [AdminToken] {
        try AdminAccess.parseTokens(Array(text.utf8), path: Self.path)
    }

    func names(_ tokens: [AdminToken]) -> [String] { tokens.map { "\($0.name) \($0.scope.rawValue)" } }

    /// The bare token of the single-token format keeps working, whatever its length, as a write token named admin.
    @Test(arguments: ["s3cret-t0ken\n", "t0k", "t0k\r\n", "#starts-with-a-hash\n", "# a comment\n\n  bare-token-x  \n"])
    func aBareTokenIsAWriteTokenNamedAdmin(text: String) throws {
        let tokens = try parse(text)
        #expect(names(tokens) == ["admin write"])
        let bare = text.split(whereSeparator: \.isNewline).last { !$0.hasPrefix("# ") && !$0.isEmpty }!
            .trimmingCharacters(in: .whitespaces)
        let access = AdminAccess(tokens: tokens)
        #expect(Array("Bearer \(bare)".utf8).withUnsafeBytes { access.caller(authorization: $0) }?.name == "admin")
    }

    @Test func severalTokensWithTheirNamesAndScopes() throws {
        let tokens = try parse(
            """
            # who        scope  token
            prometheus   read   0123456789abcdef0123

            ci-deploy\twrite\tfedcba9876543210fedc\r
              ops.oncall_1 write  aaaaaaaaaaaaaaaa-#-not-a-comment
            """)
        #expect(names(tokens) == ["prometheus read", "ci-deploy write", "ops.oncall_1 write"])
        let access = AdminAccess(tokens: tokens)
        for (token, name) in [
            ("0123456789abcdef0123", "prometheus"), ("fedcba9876543210fedc", "ci-deploy"),
            ("aaaaaaaaaaaaaaaa-#-not-a-comment", "ops.oncall_1"),
        ] {
            #expect(Array("Bearer \(token)".utf8).withUnsafeBytes { access.caller(authorization: $0) }?.name == name)
        }
    }

    /// Each malformed line names `file:line`, what is wrong and the fix.
    @Test(arguments: [
        ("a read 0123456789abcdef\nb write\n", 2, "2 fields; each line is NAME SCOPE TOKEN"),
        ("two words\n", 1, "printable ASCII without spaces"),
        ("a read 0123456789abcdef extra\n", 1, "4 fields"),
        ("\n# c\nci admin 0123456789abcdef\n", 3, "field 2, the scope, is neither read nor write"),
        ("ci write short-token\n", 1, "field 3, the token, has 11 characters, fewer than 16"),
        (
            "a read 0123456789abcdef\na write fedcba9876543210\n", 2,
            "field 1, the token's name, is already used on line 1"
        ),
        ("a read 0123456789abcdef\nb write 0123456789abcdef\n", 2, "the same as line 1's"),
        ("bad/name read 0123456789abcdef\n", 1, "field 1, the token's name, must be letters, digits"),
        ("a read 0123456789abcdef\nbare-token-among-others\n", 2, "a bare token (one field) is only allowed"),
        ("bare-token-first\na read 0123456789abcdef\n", 1, "a bare token (one field) is only allowed"),
        ("a read 0123456789abcdef\u{7}x\n", 1, "not printable ASCII"),
    ])
    func aMalformedLineNamesTheFileTheLineAndTheFix(text: String, line: Int, message: String) {
        let description = #expect(throws: AdminAccess.TokenFileError.self) { try parse(text) }?.description ?? ""
        #expect(description.hasPrefix("\(Self.path):\(line): error: "), "\(description)")
        #expect(description.contains(message), "\(description)")
        #expect(description.contains("fix: "), "\(description)")
    }

    /// A line whose fields are in another order than NAME SCOPE TOKEN is refused by the field's position: no
    /// refusal quotes a field, any of which may then be the secret.
    @Test func aRefusalNeverQuotesAField() {
        let secret = "s3cr3t-0123456789abcdef"
        let lines = [
            "\(secret) write ci", "ci \(secret) write", "write ci \(secret)", "write \(secret) ci",
            "\(secret) ci write", "ci write \(secret)\nci read \(secret)", "ci write \(secret)\nops read \(secret)",
            "ci read s3cr3t", "s3cr3t/x read 0123456789abcdef",
        ]
        for line in lines {
            let description = #expect(throws: AdminAccess.TokenFileError.self) { try parse(line + "\n") }?.description
            #expect(description?.contains("s3cr3t") == false, "\(description ?? "")")
        }
    }

    @Test(arguments: [
        ("", "the admin token file is empty; fix: write a token into it"),
        ("\n", "the admin token file is empty"),
        ("# only a comment\n\n", "holds no token, only comments and blank lines"),
        ("tok\u{1}en\n", "printable ASCII without spaces"),
    ])
    func aFileWithoutATokenNamesTheFile(text: String, message: String) {
        let description = #expect(throws: AdminAccess.TokenFileError.self) { try parse(text) }?.description ?? ""
        #expect(description.hasPrefix("\(Self.path): error: "), "\(description)")
        #expect(description.contains(message), "\(description)")
    }

    /// The number of tokens is bounded: each token route compares with every one.
    @Test func moreThanAThousandTokensAreRefused() throws {
        let line = { (index: Int) in "t\(index) read token-\(index + 1_000_000_000)\n" }
        #expect(try parse((0..<1000).map(line).joined()).count == 1000)
        #expect(throws: AdminAccess.TokenFileError.self) { try parse((0..<1001).map(line).joined()) }
    }
}
