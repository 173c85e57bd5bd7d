import AASACore
import Testing

@testable import AASAServer

@Suite struct AdminAccessTests {
    func verdict(
        _ access: AdminAccess, path: String, host: String?, authorization: String? = nil, fetchSite: String? = nil,
        origin: String? = nil
    ) -> AdminAccess.Verdict {
        func bytes(_ text: String?, _ body: (UnsafeRawBufferPointer?) -> AdminAccess.Verdict) -> AdminAccess.Verdict {
            guard let text else { return body(nil) }
            return Array(text.utf8).withUnsafeBytes { body($0) }
        }
        return bytes(host) { host in
            bytes(authorization) { authorization in
                bytes(fetchSite) { fetchSite in
                    bytes(origin) {
                        access.verdict(
                            path: path, host: host, authorization: authorization, fetchSite: fetchSite, origin: $0)
                    }
                }
            }
        }
    }

    /// A page of another site (or another port of the same host) cannot make the operator's browser call a route;
    /// the probes stay open, and clients that send neither header (curl, Prometheus) pass.
    @Test(arguments: [
        ("/match", "cross-site", nil, AdminAccess.Verdict.crossSite) as (String, String?, String?, AdminAccess.Verdict),
        ("/", "cross-site", nil, .crossSite),
        ("/status", "same-site", nil, .crossSite), ("/match", "Same-Origin", nil, .allowed),
        ("/", "none", nil, .allowed), ("/match", nil, "https://evil.example", .crossSite),
        ("/match", nil, "http://localhost:3000", .crossSite), ("/match", nil, "null", .crossSite),
        ("/match", nil, "https://localhost:9090", .crossSite), ("/match", nil, "http://LOCALHOST:9090", .allowed),
        ("/match", "same-origin", "http://evil.example", .crossSite), ("/match", nil, nil, .allowed),
        ("/healthz", "cross-site", "https://evil.example", .allowed),
        ("/readyz", "cross-site", "https://evil.example", .allowed),
    ])
    func crossSiteRequestsAreRefusedButTheProbes(
        path: String, fetchSite: String?, origin: String?, expected: AdminAccess.Verdict
    ) {
        #expect(
            verdict(AdminAccess(), path: path, host: "localhost:9090", fetchSite: fetchSite, origin: origin) == expected
        )
    }

    @Test(arguments: [("localhost", "http://localhost:80"), ("localhost:80", "http://localhost")])
    func theDefaultPortIsTheSameOrigin(host: String, origin: String) {
        #expect(verdict(AdminAccess(), path: "/status", host: host, origin: origin) == .allowed)
    }

    @Test(arguments: [
        ("localhost", AdminAccess.Verdict.allowed), ("127.0.0.1:9090", .allowed), ("[::1]:9090", .allowed),
        ("10.0.0.12:9090", .allowed), ("metrics.internal", .allowed), ("METRICS.internal.:80", .allowed),
        ("evil.example", .misdirected), ("localhost.evil.example", .misdirected), ("", .misdirected),
        ("local host", .misdirected), ("127.1", .misdirected),
    ])
    func hostDecides(host: String, expected: AdminAccess.Verdict) {
        #expect(verdict(AdminAccess(hostNames: ["metrics.internal"]), path: "/status", host: host) == expected)
    }

    @Test func aMissingHostIsMisdirected() {
        #expect(verdict(AdminAccess(), path: "/healthz", host: nil) == .misdirected)
    }

    @Test(arguments: [
        ("/status", nil, AdminAccess.Verdict.unauthorized), ("/metrics", "Bearer t0k", .allowed),
        ("/fetches", "bEaReR t0k", .allowed), ("/match", "Bearer  t0k", .allowed),
        ("/match", "Bearer t0", .unauthorized),
        ("/status", "Bearer t0k0", .unauthorized), ("/status", "Basic t0k", .unauthorized),
        ("/status", "Bearer", .unauthorized), ("/healthz", nil, .allowed), ("/readyz", "Bearer nope", .allowed),
        ("/nothing-here", nil, .allowed),
    ])
    func theTokenGuardsTheRevealingPaths(path: String, authorization: String?, expected: AdminAccess.Verdict) {
        let access = AdminAccess(token: Array("t0k".utf8))
        #expect(verdict(access, path: path, host: "localhost", authorization: authorization) == expected)
    }

    /// Several tokens: any of them opens the token routes, and the caller is the holder of the one presented.
    @Test(
        arguments: [
            ("Bearer read-0123456789abcdef", AdminCaller(name: "prometheus", scope: .read)),
            ("bearer  write-0123456789abcdef", AdminCaller(name: "ci-deploy", scope: .write)),
            ("Bearer write-0123456789abcdeF", nil), ("Bearer read-0123456789abcde", nil),
            ("Bearer read-0123456789abcdefwrite-0123456789abcdef", nil), ("Basic read-0123456789abcdef", nil),
            ("Bearer ", nil),
        ] as [(String, AdminCaller?)])
    func eachTokenIsToldApart(authorization: String, expected: AdminCaller?) {
        let access = AdminAccess(tokens: [
            AdminToken(name: "prometheus", scope: .read, bytes: Array("read-0123456789abcdef".utf8)),
            AdminToken(name: "ci-deploy", scope: .write, bytes: Array("write-0123456789abcdef".utf8)),
        ])
        let caller = Array(authorization.utf8).withUnsafeBytes { access.caller(authorization: $0) }
        #expect(caller == expected)
        #expect(
            verdict(access, path: "/status", host: "localhost", authorization: authorization)
                == (expected == nil ? .unauthorized : .allowed))
        #expect(
            verdict(access, path: "/api/v1/domains", host: "localhost", authorization: authorization)
                == (expected == nil ? .unauthorized : .allowed))
    }

    /// A single token (a bare token file's) is a write token named admin; without tokens nobody is a caller.
    @Test func aSingleTokenIsAWriteTokenNamedAdmin() {
        let access = AdminAccess(token: Array("t0k".utf8))
        let caller = Array("Bearer t0k".utf8).withUnsafeBytes { access.caller(authorization: $0) }
        #expect(caller == AdminCaller(name: "admin", scope: .write))
        #expect(Array("Bearer t0k".utf8).withUnsafeBytes { AdminAccess().caller(authorization: $0) } == nil)
    }

    /// A token is never printed: its description, debug description and dump name its holder only.
    @Test func aTokenNeverPrintsItsBytes() {
        let token = AdminToken(name: "ci-deploy", scope: .write, bytes: Array("s3cret-0123456789abcdef".utf8))
        var dumped = ""
        dump(token, to: &dumped)
        for text in [token.description, token.debugDescription, "\(token)", String(reflecting: token), dumped] {
            #expect(text.contains("ci-deploy"), "\(text)")
            #expect(!text.contains("s3cret"), "\(text)")
            #expect(!text.contains(SHA256.hex(Array("s3cret-0123456789abcdef".utf8))), "\(text)")
        }
    }
}
