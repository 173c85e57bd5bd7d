import AASACore
import AASACurl
import AASATestSupport
import Foundation
import Testing

/// The libcurl client against the real daemon over HTTPS, verified against the development CA.
@Suite(.serialized) struct HTTPClientTests {
    @Test func getsAVerifiedAnswerWithItsHeaders() throws {
        let live = try LiveServer()
        var client = HTTPClient(trustAnchors: live.caFile)
        client.resolve = [("shop.example", live.https, "127.0.0.1")]
        let response = try client.send(
            HTTPClientRequest(url: "https://shop.example:\(live.https)/.well-known/apple-app-site-association"))
        #expect(response.status == 200)
        #expect(response.body == (try live.expectedFile("shop.example")))
        let plain = try client.send(
            HTTPClientRequest(
                url: "http://127.0.0.1:\(live.http)/.well-known/apple-app-site-association",
                headers: [("Host", "shop.example")]))
        #expect(plain.status == 200)
        #expect(plain.body == (try live.expectedFile("shop.example")))
        #expect(plain.header("content-type") == "application/json")
        #expect(plain.header("ETAG")?.hasPrefix("\"") == true)
    }

    @Test func verifiesTheServerAndNamesTheURLWhenItCannot() throws {
        let live = try LiveServer()
        let url = "https://localhost:\(live.https)/healthz"
        // The system's trust store does not know the development CA.
        do {
            _ = try HTTPClient().send(HTTPClientRequest(url: url))
            Issue.record("trusted a certificate no trust anchor issued")
        } catch {
            #expect(error.code == .tls)
            #expect(error.description.contains(url))
        }
        // With the development CA it verifies.
        #expect(try HTTPClient(trustAnchors: live.caFile).send(HTTPClientRequest(url: url)).status == 404)
    }

    @Test func postsABodyAndReadsTheAnswer() throws {
        let live = try LiveServer()
        let response = try HTTPClient().send(
            HTTPClientRequest(
                .post, url: "http://127.0.0.1:\(live.http)/.well-known/apple-app-site-association",
                headers: [("Host", "shop.example"), ("Content-Type", "application/jose+json")], body: Array("{}".utf8)))
        // The body went out: the daemon refuses any request that announces one, before reading it (413).
        #expect(response.status == 413, "\(response.status)")
    }

    @Test func refusesAnswersOverItsCapAndUnreachableServers() throws {
        let live = try LiveServer()
        var small = HTTPClient()
        small.maximumResponseBytes = 16
        do {
            _ = try small.send(
                HTTPClientRequest(
                    url: "http://127.0.0.1:\(live.http)/.well-known/apple-app-site-association",
                    headers: [("Host", "shop.example")]))
            Issue.record("accepted an answer over the cap")
        } catch {
            #expect(error.code == .tooLarge)
        }
        let closed = freePort()
        #expect(throws: HTTPClientError(.connect, url: "", reason: "")) {
            try HTTPClient().send(HTTPClientRequest(url: "http://127.0.0.1:\(closed)/"))
        }
        #expect(throws: HTTPClientError(.request, url: "", reason: "")) {
            try HTTPClient().send(HTTPClientRequest(url: "ftp://127.0.0.1/"))
        }
    }
}
