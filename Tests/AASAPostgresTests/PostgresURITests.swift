import AASAPostgres
import AASATestSupport
import Testing

/// What an error says about the URI it was given, without a server: `host:port/db`, never the password.
struct PostgresURITests {
    static let unreadable: [(uri: String, password: String)] = [
        ("postgresql://user:pa%zzss-word@127.0.0.1:1/db", "pa%zzss-word"),
        ("postgresql://user:hunter2-secret@127.0.0.1:1/db?no_such_option=1", "hunter2-secret"),
        ("host=127.0.0.1 password='top secret' no_such_option=1", "top secret"),
        ("postgresql://user@127.0.0.1:1/db?password=qwerty-secret&bogus=1", "qwerty-secret"),
    ]

    @Test(arguments: unreadable)
    func anUnreadableURIIsRefusedWithoutItsPassword(_ example: (uri: String, password: String)) {
        let error = #expect(throws: PostgresError.self) { try PostgresConnection(uri: example.uri) }
        #expect(error?.code == .invalidURI)
        #expect(error.map { !$0.description.contains(example.password) } == true)
    }

    static let unreachable: [(uri: String, server: String)] = [
        ("postgresql://u:pw-one-secret@127.0.0.1:PORT/store", "127.0.0.1:PORT/store"),
        ("host=127.0.0.1 port=PORT dbname=store user=u password=pw-two-secret", "127.0.0.1:PORT/store"),
        ("postgresql://u@127.0.0.1:PORT?password=pw-three-secret", "127.0.0.1:PORT/u"),
    ]

    @Test(arguments: unreachable)
    func aRefusedConnectionNamesTheServerAndNotThePassword(_ example: (uri: String, server: String)) {
        // A port nothing listens on, so the connection is refused.
        let port = String(freePort())
        let error = #expect(throws: PostgresError.self) {
            try PostgresConnection(uri: example.uri.replacing("PORT", with: port), connectTimeout: .seconds(5))
        }
        #expect(error?.code == .connect)
        #expect(error?.server == example.server.replacing("PORT", with: port))
        #expect(error.map { !$0.description.contains("pw-") && !$0.description.contains("secret") } == true)
    }
}
