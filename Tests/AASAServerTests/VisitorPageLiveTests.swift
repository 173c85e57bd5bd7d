import AASACore
import AASATestSupport
import Foundation
import Testing

@testable import AASAServer

/// The headers of the pages that vary by visitor, from the real daemon over real HTTPS (curl): each variant says
/// `Vary: User-Agent` and has a tag of its own, so no cache and no `If-None-Match` gives one visitor another's page;
/// the files that are the same for everyone say nothing of the `User-Agent`.
@Suite(.serialized) struct VisitorPageLiveTests {
    static let visitors = [
        ("instagram-ios", UserAgents.inApp("instagram", "ios")), ("safari", UserAgents.iPhoneSafari),
        ("android-chrome", UserAgents.androidChrome), ("desktop", UserAgents.desktop),
        ("googlebot", UserAgents.googlebot),
    ]

    /// The landing page and the hosted index page, with the visitors that share a variant on each: on the landing
    /// page each gets their own (an in-app browser's way out, a platform's buttons, a desktop's QR code, a crawler's
    /// buttons without a code); on the hosted page everyone gets Safari's page but an in-app browser's visitor (the way
    /// out) and a desktop (the QR code).
    @Test(arguments: [
        ("/buy/red-shoes?ref=ad", [["instagram-ios"], ["safari"], ["android-chrome"], ["desktop"], ["googlebot"]]),
        ("/?ref=ad", [["instagram-ios"], ["safari", "android-chrome", "googlebot"], ["desktop"]]),
    ])
    func eachVariantVariesByUserAgentAndHasATagOfItsOwn(path: String, sharing: [[String]]) throws {
        let live = try PagesLiveTests.server()
        var tags: [String: String] = [:]
        for (name, agent) in Self.visitors {
            let page = try live.get("shop.example", path, headers: ["User-Agent: \(agent)"])
            #expect(page.status == 200, "\(name)")
            #expect(page.headers["vary"] == "User-Agent", "\(name)")
            #expect(page.headers["content-type"] == "text/html; charset=utf-8", "\(name)")
            #expect(page.text.contains("id=\"open-in-browser\"") == (name == "instagram-ios"), "\(name)")
            let tag = page.headers["etag"]
            #expect(tag != nil, "\(name)")
            tags[name] = tag
        }
        // Visitors share a tag exactly when they share a variant.
        for group in sharing {
            #expect(Set(group.map { tags[$0]! }).count == 1, "\(group): \(tags)")
        }
        #expect(Set(tags.values).count == sharing.count, "\(tags)")
        #expect(tags["instagram-ios"] != tags["safari"])

        for (name, agent) in Self.visitors {
            for (other, tag) in tags {
                let answer = try live.get(
                    "shop.example", path, headers: ["User-Agent: \(agent)", "If-None-Match: \(tag)"])
                let same = tag == tags[name]
                // Its own tag: 304, with the same Vary; another variant's: the visitor's own page whole.
                #expect(answer.status == (same ? 304 : 200), "\(name) with \(other)'s tag")
                #expect(answer.headers["vary"] == "User-Agent", "\(name) with \(other)'s tag")
                #expect(answer.headers["etag"] == tags[name], "\(name) with \(other)'s tag")
                #expect(answer.body.isEmpty == same, "\(name) with \(other)'s tag")
            }
        }
    }

    /// The association files and a hosted file that is not a page are the same bytes and tag for every visitor and
    /// say nothing of the `User-Agent`.
    @Test(arguments: [
        "/.well-known/apple-app-site-association", "/.well-known/assetlinks.json", "/apple-touch-icon.png",
    ])
    func filesThatAreTheSameForEveryoneHaveNoVary(path: String) throws {
        let live = try PagesLiveTests.server()
        var answers: [CurlResponse] = []
        for (name, agent) in Self.visitors + [("in-app", UserAgents.inApp("wechat", "android"))] {
            let answer = try live.get("shop.example", path, headers: ["User-Agent: \(agent)"])
            #expect(answer.status == 200, "\(path) \(name)")
            #expect(answer.headers["vary"] == nil, "\(path) \(name): \(answer.headers)")
            #expect(!answer.text.contains("open-in-browser"), "\(path) \(name)")
            answers.append(answer)
        }
        #expect(answers.allSatisfy { $0.body == answers[0].body && $0.headers["etag"] == answers[0].headers["etag"] })
        #expect(!answers[0].body.isEmpty)
    }
}
