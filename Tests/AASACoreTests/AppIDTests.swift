import Testing

@testable import AASACore

/// Apple application identifiers (spec §1.2), around the byte-wise check that accepts the plain ones first.
@Suite struct AppIDTests {
    @Test(arguments: [
        "ABCDE12345.com.example.shop", "ABCDE12345.x", "0123456789.com.Example-App.v2", "ZZZZZZZZZZ.a.b.c",
    ])
    func plainIDsAreValid(value: String) {
        #expect(AppID.problem(value) == nil)
    }

    @Test(arguments: [
        ("XXXXXXXXXX.com.example", "placeholder"), ("YOURTEAMID.com.example", "placeholder"),
        ("abcde12345.com.example", "lower-case team ID"), ("ABCDE1234.com.example", "team IDs are 10 characters"),
        ("ABCDE12345", "no team ID prefix"), ("ABCDE12345.", "bundle ID with characters other"),
        ("ABCDE12345.com..example", "empty part"), ("ABCDE12345..com", "empty part"),
        ("ABCDE12345.com.example.", "empty part"), ("ABCDE12345.com.ex_ample", "bundle ID with characters other"),
        ("ABCDE12345.com.exämple", "bundle ID with characters other"), ("ABCDÉ12345.com.example", "other than A–Z"),
    ])
    func otherIDsAreExplained(value: String, expected: String) {
        let message = AppID.problem(value)?.message ?? ""
        #expect(message.contains(expected), "\(message)")
    }
}
