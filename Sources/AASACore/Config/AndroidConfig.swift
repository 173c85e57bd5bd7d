/// The `android` section of a site config: Android apps that verify this domain as an App Link host,
/// served as `/.well-known/assetlinks.json` (spec §7).
public struct AndroidConfig: Sendable, Hashable {
    /// The apps, each becoming one `android_app` statement, in order.
    public var apps: [AndroidApp] = []

    /// Creates the section.
    public init(apps: [AndroidApp] = []) {
        self.apps = apps
    }

    static let keys = ["apps", "comment"]
    static let appKeys = ["package", "fingerprints", "appLinks", "loginCredentials", "rules", "rulesFrom", "comment"]

    /// Decodes the section, reporting problems to `reader`.
    static func read(_ node: JSONNode, path: @autoclosure () -> KeyPath, reader: JSONReader) -> AndroidConfig? {
        guard let object = reader.object(node, path: path(), known: keys) else { return nil }
        var android = AndroidConfig()
        if let member = object["comment"] { _ = reader.string(member.value, path: path().key("comment")) }
        if let member = object["apps"], let elements = reader.array(member.value, path: path().key("apps")) {
            android.apps = elements.enumerated().compactMap { index, element in
                AndroidApp.read(element, path: path().key("apps").index(index), reader: reader)
            }
        } else if object["apps"] == nil {
            reader.report(
                .error, rule: .noApp, "the android section lists no apps", at: node.offset, path: path(),
                hint: "add \"apps\": [{\"package\": \"com.example.app\", \"fingerprints\": [\"AA:BB:…\"]}]")
        }
        return android
    }

    /// As site.json content.
    var jsonValue: JSONValue {
        .members([("apps", .array(apps.map { JSONNode($0.jsonValue) }))])
    }
}

/// One Android app: its package name, the SHA-256 fingerprints of the certificates it is signed with, and
/// which permissions this domain delegates to it.
public struct AndroidApp: Sendable, Hashable {
    /// The application ID (`applicationId` in Gradle), e.g. `com.example.shop`.
    public var package: String
    /// SHA-256 fingerprints of the signing certificates, as written (normalised when generated): debug,
    /// release and the Play App Signing key, as needed.
    public var fingerprints: [String]
    /// `delegate_permission/common.handle_all_urls`: the app opens this domain's links. Default `true`.
    public var appLinks: Bool = true
    /// `delegate_permission/common.get_login_creds`: the app may use this domain's saved sign-ins.
    /// `nil`: when the domain lists `webCredentials` apps.
    public var loginCredentials: Bool?
    /// Android 15 dynamic rules (`dynamic_app_link_components`), in site.json rule syntax.
    public var rules: [ComponentPattern]?
    /// Mirror the universal-link rules of this Apple app ID as the dynamic rules.
    public var rulesFrom: String?

    /// Creates an app.
    public init(
        package: String, fingerprints: [String], appLinks: Bool = true, loginCredentials: Bool? = nil,
        rules: [ComponentPattern]? = nil, rulesFrom: String? = nil
    ) {
        self.package = package
        self.fingerprints = fingerprints
        self.appLinks = appLinks
        self.loginCredentials = loginCredentials
        self.rules = rules
        self.rulesFrom = rulesFrom
    }

    static func read(_ node: JSONNode, path: @autoclosure () -> KeyPath, reader: JSONReader) -> AndroidApp? {
        guard let object = reader.object(node, path: path(), known: AndroidConfig.appKeys) else { return nil }
        var app = AndroidApp(package: "", fingerprints: [])
        if let member = object["package"] {
            app.package = reader.string(member.value, path: path().key("package")) ?? ""
        } else {
            reader.report(
                .error, rule: .missingKey, "this app has no \"package\"", at: node.offset, path: path(),
                hint: "add \"package\": \"com.example.app\" (the applicationId)")
        }
        if let member = object["fingerprints"] {
            app.fingerprints = reader.strings(member.value, path: path().key("fingerprints")) ?? []
        } else {
            reader.report(
                .error, rule: .missingKey, "this app has no \"fingerprints\"", at: node.offset, path: path(),
                hint:
                    "add the SHA-256 fingerprint of each signing certificate (keytool -list -v, or Play Console › App signing)"
            )
        }
        if let member = object["appLinks"], let flag = reader.bool(member.value, path: path().key("appLinks")) {
            app.appLinks = flag
        }
        if let member = object["loginCredentials"] {
            app.loginCredentials = reader.bool(member.value, path: path().key("loginCredentials"))
        }
        if let member = object["rulesFrom"] {
            app.rulesFrom = reader.string(member.value, path: path().key("rulesFrom"))
        }
        if let member = object["comment"] { _ = reader.string(member.value, path: path().key("comment")) }
        if let member = object["rules"], let elements = reader.array(member.value, path: path().key("rules")) {
            app.rules = elements.enumerated().compactMap { index, element in
                ComponentPattern.read(element, path: path().key("rules").index(index), reader: reader, spelling: .site)
            }
        }
        return app
    }

    var jsonValue: JSONValue {
        var pairs: [(String, JSONValue)] = [("package", .string(package)), ("fingerprints", .strings(fingerprints))]
        if !appLinks { pairs.append(("appLinks", .bool(false))) }
        if let loginCredentials { pairs.append(("loginCredentials", .bool(loginCredentials))) }
        if let rulesFrom { pairs.append(("rulesFrom", .string(rulesFrom))) }
        if let rules { pairs.append(("rules", .array(rules.map { JSONNode($0.jsonValue(spelling: .site)) }))) }
        return .members(pairs)
    }
}

/// SHA-256 certificate fingerprints as Android wants them: 32 bytes, upper-case hex pairs joined by `:`
/// (spec §7; lower-case fingerprints are a common reason App Links fail to verify, spec §8 #16).
public enum CertificateFingerprint {
    /// `AA:BB:…` (32 pairs) from upper- or lower-case hex, with or without colons; `nil` when malformed.
    public static func normalized(_ text: String) -> String? {
        if let canonical = canonicalForm(text) { return canonical }
        return problem(text) == nil ? pairs(text).joined(separator: ":").uppercased() : nil
    }

    /// The normalized form of a fingerprint already written as 32 colon-separated hex pairs or 64 hex digits,
    /// ASCII with no spaces: what nearly every config holds, checked byte by byte (the general path below works
    /// on Characters and cost megainstructions per domain at load). `nil` for anything else.
    private static func canonicalForm(_ text: String) -> String? {
        switch text.utf8.count {
        case 95:
            // Checked in place; already upper case (as `keytool` writes it), the text itself.
            let lowerCase =
                text.utf8.withContiguousStorageIfAvailable(lowerCaseInColonPairs)
                ?? Array(text.utf8).withUnsafeBufferPointer(lowerCaseInColonPairs)
            guard let lowerCase else { return nil }
            return lowerCase ? String(decoding: text.utf8.map(upperCased), as: UTF8.self) : text
        case 64:
            guard text.utf8.allSatisfy(isHex) else { return nil }
            var paired: [UInt8] = []
            paired.reserveCapacity(95)
            for (index, byte) in text.utf8.enumerated() {
                if index > 0 && index % 2 == 0 { paired.append(UInt8(ascii: ":")) }
                paired.append(upperCased(byte))
            }
            return String(decoding: paired, as: UTF8.self)
        default:
            return nil
        }
    }

    /// For 32 hex pairs separated by colons (95 bytes), whether a digit is lower case; `nil` for anything else.
    private static func lowerCaseInColonPairs(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool? {
        guard bytes.count == 95 else { return nil }
        var lowerCase = false
        var place = 0  // in each pair and its colon
        for byte in bytes {
            if place == 2 {
                guard byte == UInt8(ascii: ":") else { return nil }
                place = 0
            } else {
                guard isHex(byte) else { return nil }
                lowerCase = lowerCase || byte >= 0x61
                place += 1
            }
        }
        return lowerCase
    }

    private static func isHex(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
    }

    /// An ASCII hex digit in upper case.
    private static func upperCased(_ byte: UInt8) -> UInt8 { byte >= 0x61 ? byte - 0x20 : byte }

    private static func pairs(_ text: String) -> [String] {
        let trimmed = text.trimmingSpaces
        if trimmed.contains(":") {
            return trimmed.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        }
        var result: [String] = []
        var index = trimmed.startIndex
        while index < trimmed.endIndex {
            let next = trimmed.index(index, offsetBy: 2, limitedBy: trimmed.endIndex) ?? trimmed.endIndex
            result.append(String(trimmed[index..<next]))
            index = next
        }
        return result
    }

    /// Why `text` is not a SHA-256 fingerprint, or `nil`.
    public static func problem(_ text: String) -> String? {
        if canonicalForm(text) != nil { return nil }
        let trimmed = text.trimmingSpaces
        let hex = Set("0123456789abcdefABCDEF")
        let letters = trimmed.filter { $0.isLetter && !hex.contains($0) }
        if trimmed.isEmpty { return "the fingerprint is empty" }
        if letters.count >= 2 || trimmed.contains("_") {
            return "'\(text)' is a placeholder, not a fingerprint"
        }
        if trimmed.contains(":") {
            let groups = trimmed.split(separator: ":", omittingEmptySubsequences: false)
            if let (index, group) = groups.enumerated().first(where: {
                $0.element.count != 2 || !$0.element.allSatisfy(hex.contains)
            }) {
                return "'\(text)': byte \(index + 1) is '\(group)', not two hex digits"
            }
            if groups.count == 20 {
                return "'\(text)' is a SHA-1 fingerprint (20 bytes); Android needs SHA-256 (32 bytes)"
            }
            if groups.count != 32 { return "'\(text)' has \(groups.count) bytes; a SHA-256 fingerprint has 32" }
            return nil
        }
        guard trimmed.allSatisfy(hex.contains) else { return "'\(text)' is not hexadecimal" }
        if trimmed.count == 40 {
            return "'\(text)' is a SHA-1 fingerprint (20 bytes); Android needs SHA-256 (32 bytes)"
        }
        guard trimmed.count == 64 else {
            return "'\(text)' has \(trimmed.count) hex digits; a SHA-256 fingerprint has 64 (32 bytes)"
        }
        return nil
    }
}

extension String {
    /// Without leading and trailing spaces (U+0020 only).
    fileprivate var trimmingSpaces: String {
        guard let first = firstIndex(where: { $0 != " " }), let last = lastIndex(where: { $0 != " " }) else {
            return ""
        }
        return String(self[first...last])
    }
}
