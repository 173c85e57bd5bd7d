import AASACore
import Testing

@testable import AASAServer

@Suite struct AdminAccessTests {
    func verdict(_ access: AdminAccess, path: String, host: String?, authorization: String? = nil)
        -> AdminAccess.Verdict
    {
        func bytes(_ text: String?, _ body: (UnsafeRawBufferPointer?) -> AdminAccess.Verdict) -> AdminAccess.Verdict {
            guard let text else { return body(nil) }
            return Array(text.utf8).withUnsafeBytes { body($0) }
        }
        return bytes(host) { host in
            bytes(authorization) { access.verdict(path: path, host: host, authorization: $0) }
        }
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
}
