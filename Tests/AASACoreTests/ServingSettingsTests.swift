import AASACore
import Testing

/// What a server keeps of a domain's config between loads (``SiteConfig/servingSettings``): every field but those
/// listed as done with once the bytes are generated. A field added to ``SiteConfig`` and not listed here fails the
/// test, so whether the server keeps it is decided, not forgotten.
@Suite struct ServingSettingsTests {
    /// Each field, a change of it from the default, and whether the server keeps it.
    static let fields: [String: (change: @Sendable (inout SiteConfig) -> Void, kept: Bool)] = [
        "legacyFormat": ({ $0.legacyFormat = false }, true),
        "cacheControl": ({ $0.cacheControl = "no-store" }, true),
        "universalLinks": ({ $0.universalLinks = UniversalLinks() }, false),
        "webCredentials": ({ $0.webCredentials = ["ABCDE12345.com.example"] }, false),
        "appClips": ({ $0.appClips = ["ABCDE12345.com.example.Clip"] }, false),
        "handoff": ({ $0.handoff = ["ABCDE12345.com.example"] }, false),
        "authsrv": ({ $0.authsrv = ["ABCDE12345.com.example"] }, false),
        "tests": ({ $0.tests = [LinkTest(url: "https://example.com/", expectation: .staysOnWeb)] }, false),
        "signing": ({ $0.signing = SigningConfig(enabled: true) }, true),
        "android": ({ $0.android = AndroidConfig() }, false),
        "smartAppBanner": ({ $0.smartAppBanner = BannerConfig(appStoreID: "123456789") }, true),
        "pages": ({ $0.pages.cacheControl = "no-store" }, true),
        "hsts": ({ $0.hsts = HSTSConfig() }, true),
        "passkeys": ({ $0.passkeys = PasskeyEndpoints(enroll: "https://example.com/passkeys/new") }, true),
        "changePassword": ({ $0.changePassword = "https://example.com/account/password" }, true),
        "fallback": ({ $0.fallback = AppFallback(ios: .web) }, true),
    ]

    @Test func everyFieldIsKeptUnlessListedAsDoneWith() {
        let labels = Mirror(reflecting: SiteConfig()).children.compactMap(\.label)
        #expect(Set(labels) == Set(Self.fields.keys), "every field of SiteConfig needs a row here")
        for (name, field) in Self.fields {
            var config = SiteConfig()
            field.change(&config)
            #expect(config != SiteConfig(), "\(name): the change changes nothing")
            #expect((config.servingSettings == config) == field.kept, "\(name)")
        }
    }
}
