import FoundationEssentials
import Testing

@testable import AASACore

/// Spec §10.8 vectors 111–113 and the probe paths.
@Suite struct TouchIconTests {
    static let icons = [120, 152, 167, 180].map { TouchIcon(path: "/icons/icon-\($0).png", size: $0) }

    @Test func vector111OneLinkPerSizePlusOneWithoutSizes() {
        let links = HeadMarkup(banner: nil, icons: Self.icons).iconLinks
        for size in [120, 152, 167, 180] {
            #expect(
                links.contains(
                    "<link rel=\"apple-touch-icon\" sizes=\"\(size)x\(size)\" href=\"/icons/icon-\(size).png\">"))
        }
        #expect(links.contains("<link rel=\"apple-touch-icon\" href=\"/icons/icon-180.png\">"))
        #expect(links.components(separatedBy: "<link").count - 1 == 5)
    }

    @Test(arguments: [
        "/apple-touch-icon.png", "/apple-touch-icon-precomposed.png", "/apple-touch-icon-180x180.png",
        "/apple-touch-icon-180x180-precomposed.png",
    ])
    func vector112ProbePathsAskFor180(path: String) {
        #expect(TouchIcon.probeSize(path) == 180)
        #expect(TouchIcon.best(for: TouchIcon.probeSize(path)!, among: Self.icons)?.size == 180)
    }

    @Test(arguments: [
        "/apple-touch-icon-180x152.png", "/apple-touch-icon-x.png", "/apple-touch-icon.jpg", "/touch-icon.png",
        "/apple-touch-icon-precomposed-180x180.png", "/apple-touch-icon-.png",
    ])
    func otherNamesAreNotProbes(path: String) {
        #expect(TouchIcon.probeSize(path) == nil)
    }

    @Test(arguments: [(152, 152), (58, 120), (200, 180), (120, 120), (170, 180), (1, 120)])
    func vector113Selection(wanted: Int, chosen: Int) {
        #expect(TouchIcon.best(for: wanted, among: Self.icons)?.size == chosen)
    }

    @Test func noIconsNoChoice() {
        #expect(TouchIcon.best(for: 180, among: []) == nil)
        #expect(HeadMarkup(banner: nil, icons: []).iconLinks == "")
    }

    @Test func pngSizeComesFromTheHeader() {
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13] + Array("IHDR".utf8)
        png += [0, 0, 0, 180, 0, 0, 0, 120, 8, 2, 0, 0, 0]
        #expect(PNGInfo(png) == PNGInfo(width: 180, height: 120))
        #expect(PNGInfo(Array("GIF89a.................".utf8)) == nil)
        #expect(PNGInfo(Array(png.prefix(20))) == nil)
    }
}

extension PNGInfo {
    init(width: Int, height: Int) {
        var bytes = Self.signature + [0, 0, 0, 13] + Array("IHDR".utf8)
        for value in [width, height] {
            bytes += [
                UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF),
            ]
        }
        self.init(bytes)!
    }
}
