import Foundation

/// Decodes QR codes in an image file with Debian's `zbarimg` (package zbar-tools): a real reader, independent of
/// the encoder under test.
public enum ZBar {
    /// The `zbarimg` executable (scripts/setup.sh --test installs it).
    public static let executable = "/usr/bin/zbarimg"

    /// The text of every QR code `zbarimg` finds in `file` (PNG, PGM, …), one per symbol; empty when it finds none.
    public static func decode(_ file: String) throws -> [String] {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw Failure(description: "zbarimg is missing: run scripts/setup.sh --test (Debian's zbar-tools)")
        }
        // --raw: the text alone, no symbology prefix; -q: no statistics.
        let output = try Command.run(executable, ["--raw", "-q", file], timeout: 60)
        // Status 4: no symbol found.
        if output.status == 4 { return [] }
        guard output.status == 0 else {
            throw Failure(description: "zbarimg \(file) exited \(output.status): \(output.stderr)")
        }
        // Each symbol's text ends with a newline.
        return output.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// A binary PGM (P5) image of a module matrix (`true` dark), `scale` pixels per module, on white.
    public static func pgm(side: Int, scale: Int, isDark: (_ column: Int, _ row: Int) -> Bool) -> [UInt8] {
        var bytes = Array("P5\n\(side * scale) \(side * scale)\n255\n".utf8)
        bytes.reserveCapacity(bytes.count + side * side * scale * scale)
        for row in 0..<(side * scale) {
            for column in 0..<(side * scale) {
                bytes.append(isDark(column / scale, row / scale) ? 0 : 255)
            }
        }
        return bytes
    }

    /// The side (in modules, quiet zone included) and the dark modules of a QR code `<svg>` as the server draws it:
    /// its `viewBox`, and one `<path>` of `M x y h w v1 h-w z` runs.
    public static func modules(ofSVG svg: String) throws -> (side: Int, dark: Set<[Int]>) {
        guard let viewBox = svg.firstRange(of: "viewBox=\"0 0 ")?.upperBound,
            let side = Int(svg[viewBox...].prefix { $0.isNumber }),
            let start = svg.firstRange(of: "<path fill=\"#000\" d=\"")?.upperBound,
            let end = svg[start...].firstIndex(of: "\"")
        else { throw Failure(description: "not a QR code SVG: \(svg.prefix(200))") }
        var dark: Set<[Int]> = []
        for run in svg[start..<end].split(separator: "z") {
            let numbers = run.split(whereSeparator: { !$0.isNumber && $0 != "-" }).compactMap { Int($0) }
            guard numbers.count == 5, numbers[3] == 1, numbers[4] == -numbers[2] else {
                throw Failure(description: "not a run of one row: \(run)")
            }
            for column in numbers[0]..<(numbers[0] + numbers[2]) { dark.insert([column, numbers[1]]) }
        }
        return (side, dark)
    }

    /// The text of the QR code an `<svg>` draws, read by `zbarimg` from a PGM image of it (4 pixels per module).
    public static func decode(svg: String) throws -> [String] {
        let (side, dark) = try modules(ofSVG: svg)
        let folder = TemporaryDirectory("aasa-qr")
        let file = folder.path + "/code.pgm"
        try Data(pgm(side: side, scale: 4) { dark.contains([$0, $1]) }).write(to: URL(fileURLWithPath: file))
        return try decode(file)
    }

    /// A failure to run the decoder or to read an image.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }
}
