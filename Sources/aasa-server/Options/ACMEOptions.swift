import AASAServer
import ArgumentParser

/// The ACME account and CA options, shared by `serve --acme` and `certs acme`.
struct ACMEOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Contact address registered with the CA's account, for expiry and policy mail "
                + "(env: \(EnvironmentVariable.acmeEmail)).", valueName: "address"))
    var acmeEmail: String?

    @Option(
        help: ArgumentHelp(
            "The CA's ACME directory URL; default Let's Encrypt's production directory "
                + "(env: \(EnvironmentVariable.acmeDirectory)).", valueName: "url"))
    var acmeDirectory: String?

    @Option(
        help: ArgumentHelp(
            "PEM file of the CA certificates that sign the ACME server's own HTTPS (a private CA, a test server); "
                + "default the system's (env: \(EnvironmentVariable.acmeCaFile)).", valueName: "pem"))
    var acmeCaFile: String?

    @Flag(
        help:
            "Agree to the CA's terms of service, which CAs such as Let's Encrypt require (env: \(EnvironmentVariable.acmeAgreeTos)=1)."
    )
    var acmeAgreeTos = false

    @Option(
        help: ArgumentHelp(
            "Renew when fewer than this many days remain, instead of when a third of the lifetime remains or in "
                + "the CA's renewal window when it offers one (env: \(EnvironmentVariable.acmeRenewBefore)).",
            valueName: "days"))
    var acmeRenewBefore: Double?

    @Option(
        help: ArgumentHelp(
            "Seconds to wait after a first failed order; ten and a hundred times that after the second and third, "
                + "then a day, never before the CA's Retry-After (env: \(EnvironmentVariable.acmeRetryMin)).",
            valueName: "seconds")
    )
    var acmeRetryMin: Double = Environment.value(.acmeRetryMin, 60.0)

    @Option(
        help: ArgumentHelp(
            "Most orders at once; more domains wait their turn (env: \(EnvironmentVariable.acmeConcurrency)).",
            valueName: "count"))
    var acmeConcurrency: Int = Environment.value(.acmeConcurrency, 3)

    @Option(
        help: ArgumentHelp(
            "The certificate profile to ask the CA for (Let's Encrypt: classic, tlsserver, shortlived), one its "
                + "directory lists; default the CA's (env: \(EnvironmentVariable.acmeProfile)).", valueName: "name"))
    var acmeProfile: String?

    @Option(
        help: ArgumentHelp(
            "The key ID of the external account binding a CA such as ZeroSSL or Google Trust Services requires; "
                + "with --acme-eab-hmac-key-file (env: \(EnvironmentVariable.acmeEabKid)).", valueName: "id"))
    var acmeEabKid: String?

    @Option(
        help: ArgumentHelp(
            "File holding the binding's HMAC key, base64url as the CA hands it out; with --acme-eab-kid "
                + "(env: \(EnvironmentVariable.acmeEabHmacKeyFile)).", valueName: "file"))
    var acmeEabHmacKeyFile: String?

    @Option(
        help: ArgumentHelp(
            "New orders per period at most, shared by every replica of the store: N/PERIOD with PERIOD in s, m, h "
                + "or d; default 300/3h (Let's Encrypt's limit); 0 turns pacing off for a private CA "
                + "(env: \(EnvironmentVariable.acmeOrderRate)).", valueName: "N/PERIOD"))
    var acmeOrderRate: String?

    @Option(
        help: ArgumentHelp(
            "A second CA's directory URL: orders the primary CA cannot issue (server errors, unreachable, a "
                + "rate-limit pause longer than --acme-fallback-after) are placed there "
                + "(env: \(EnvironmentVariable.acmeFallbackDirectory)).", valueName: "url"))
    var acmeFallbackDirectory: String?

    @Option(
        help: ArgumentHelp(
            "PEM file of the CA certificates that sign the fallback CA's own HTTPS; default the system's "
                + "(env: \(EnvironmentVariable.acmeFallbackCaFile)).", valueName: "pem"))
    var acmeFallbackCaFile: String?

    @Option(
        help: ArgumentHelp(
            "Minutes of a rate-limit pause at the primary CA after which new orders go to the fallback CA; "
                + "default 60 (env: \(EnvironmentVariable.acmeFallbackAfter)).", valueName: "minutes"))
    var acmeFallbackAfter: Double?

    @Option(
        help: ArgumentHelp(
            "The key ID of the external account binding the fallback CA requires; with "
                + "--acme-fallback-eab-hmac-key-file (env: \(EnvironmentVariable.acmeFallbackEabKid)).",
            valueName: "id"))
    var acmeFallbackEabKid: String?

    @Option(
        help: ArgumentHelp(
            "File holding the fallback CA's binding HMAC key, base64url; with --acme-fallback-eab-kid "
                + "(env: \(EnvironmentVariable.acmeFallbackEabHmacKeyFile)).", valueName: "file"))
    var acmeFallbackEabHmacKeyFile: String?

    /// dns-01 and wildcard certificates.
    @OptionGroup var dns: ACMEDNSOptions

    mutating func validate() throws {
        try Environment.naming { try checkValues() }
    }

    private mutating func checkValues() throws {
        if acmeEmail == nil { acmeEmail = Environment.optional(.acmeEmail) }
        if acmeDirectory == nil { acmeDirectory = Environment.optional(.acmeDirectory) }
        if acmeCaFile == nil { acmeCaFile = Environment.optional(.acmeCaFile) }
        if acmeRenewBefore == nil { acmeRenewBefore = Environment.optional(.acmeRenewBefore) }
        acmeAgreeTos = acmeAgreeTos || Environment.flag(.acmeAgreeTos)
        if acmeProfile == nil { acmeProfile = Environment.optional(.acmeProfile) }
        if acmeEabKid == nil { acmeEabKid = Environment.optional(.acmeEabKid) }
        if acmeEabHmacKeyFile == nil { acmeEabHmacKeyFile = Environment.optional(.acmeEabHmacKeyFile) }
        if acmeOrderRate == nil { acmeOrderRate = Environment.optional(.acmeOrderRate) }
        if acmeFallbackDirectory == nil { acmeFallbackDirectory = Environment.optional(.acmeFallbackDirectory) }
        if acmeFallbackCaFile == nil { acmeFallbackCaFile = Environment.optional(.acmeFallbackCaFile) }
        if acmeFallbackAfter == nil { acmeFallbackAfter = Environment.optional(.acmeFallbackAfter) }
        if acmeFallbackEabKid == nil { acmeFallbackEabKid = Environment.optional(.acmeFallbackEabKid) }
        if acmeFallbackEabHmacKeyFile == nil {
            acmeFallbackEabHmacKeyFile = Environment.optional(.acmeFallbackEabHmacKeyFile)
        }
        if let invalid = Environment.invalidValues.first { throw ValidationError(invalid) }
        if let email = acmeEmail {
            let parts = email.split(separator: "@", omittingEmptySubsequences: false)
            guard parts.count == 2, !parts[0].isEmpty, parts[1].contains("."),
                !email.contains(where: { $0 == " " || $0 == "," || $0 == ":" })
            else {
                throw ValidationError("--acme-email '\(email)' is not an email address (name@example.com)")
            }
        }
        if let url = acmeDirectory, !url.hasPrefix("https://") {
            throw ValidationError(
                "--acme-directory '\(url)' is not an https URL (RFC 8555 §6.1 requires HTTPS); give the directory URL, "
                    + "e.g. \(ACMESettings.letsEncrypt)")
        }
        if let rate = acmeOrderRate {
            do {
                _ = try OrderRate.parse(rate)
            } catch {
                throw ValidationError("--acme-order-rate \(error)")
            }
        }
        if let url = acmeFallbackDirectory {
            guard url.hasPrefix("https://") else {
                throw ValidationError(
                    "--acme-fallback-directory '\(url)' is not an https URL (RFC 8555 §6.1 requires HTTPS); give the "
                        + "fallback CA's directory URL")
            }
            guard url != (acmeDirectory ?? ACMESettings.letsEncrypt) else {
                throw ValidationError(
                    "--acme-fallback-directory names the primary CA's directory; give a second CA's directory URL")
            }
        } else if acmeFallbackCaFile != nil || acmeFallbackAfter != nil || acmeFallbackEabKid != nil
            || acmeFallbackEabHmacKeyFile != nil
        {
            throw ValidationError(
                "--acme-fallback-ca-file, --acme-fallback-after and --acme-fallback-eab-* need --acme-fallback-directory"
            )
        }
        if let minutes = acmeFallbackAfter, !(minutes >= 0 && minutes <= 7 * 1440) {
            throw ValidationError("--acme-fallback-after must be between 0 and 10080 minutes")
        }
        if let days = acmeRenewBefore, !(days > 0) {
            throw ValidationError("--acme-renew-before must be a positive number of days")
        }
        if !(acmeRetryMin >= 1 && acmeRetryMin <= 86_400) {
            throw ValidationError("--acme-retry-min must be between 1 and 86400 seconds")
        }
        if !(1...64).contains(acmeConcurrency) {
            throw ValidationError("--acme-concurrency must be between 1 and 64")
        }
        if let profile = acmeProfile,
            profile.isEmpty || profile.utf8.count > 64 || !profile.allSatisfy({ $0.isASCII && !$0.isWhitespace })
        {
            throw ValidationError(
                "--acme-profile '\(profile)' is not a profile name (1 to 64 characters, no spaces); give one the CA's "
                    + "directory lists under meta.profiles, e.g. tlsserver")
        }
        do {
            _ = try externalAccountBinding()
            _ = try fallbackExternalAccountBinding()
        } catch {
            throw ValidationError(error.description)
        }
    }

    /// The fallback CA's binding (`--acme-fallback-eab-kid`, `--acme-fallback-eab-hmac-key-file`), `nil` without.
    private func fallbackExternalAccountBinding() throws(ExternalAccountBinding.LoadError) -> ExternalAccountBinding? {
        try ExternalAccountBinding.load(
            keyID: acmeFallbackEabKid, keyFile: acmeFallbackEabHmacKeyFile, keyIDOption: "--acme-fallback-eab-kid",
            keyFileOption: "--acme-fallback-eab-hmac-key-file")
    }

    /// The binding `--acme-eab-kid` and `--acme-eab-hmac-key-file` give, `nil` without them.
    private func externalAccountBinding() throws(ExternalAccountBinding.LoadError) -> ExternalAccountBinding? {
        try ExternalAccountBinding.load(
            keyID: acmeEabKid, keyFile: acmeEabHmacKeyFile, keyIDOption: "--acme-eab-kid",
            keyFileOption: "--acme-eab-hmac-key-file")
    }

    /// The settings these options describe.
    var settings: ACMESettings {
        var settings = ACMESettings()
        if let acmeDirectory { settings.directoryURL = acmeDirectory }
        settings.email = acmeEmail
        settings.agreesToTerms = acmeAgreeTos
        settings.caFile = acmeCaFile
        settings.renewBefore = acmeRenewBefore.map { .milliseconds(Int64($0 * 86_400_000)) }
        settings.minimumRetry = .milliseconds(Int64(acmeRetryMin * 1000))
        settings.concurrency = acmeConcurrency
        settings.profile = acmeProfile
        // Read (and checked) once already by validate(); a file that became unreadable since leaves no binding, and
        // a CA requiring one then says which options give it.
        settings.externalAccountBinding = try? externalAccountBinding()
        if let acmeOrderRate {
            // Checked by ``validate()``; `0` is `nil`: no pacing.
            do { settings.orderRate = try OrderRate.parse(acmeOrderRate) } catch {}
        }
        if let acmeFallbackDirectory {
            var fallback = ACMEFallback(directoryURL: acmeFallbackDirectory, caFile: acmeFallbackCaFile)
            if let acmeFallbackAfter { fallback.after = .milliseconds(Int64(acmeFallbackAfter * 60_000)) }
            fallback.externalAccountBinding = try? fallbackExternalAccountBinding()
            settings.fallback = fallback
        }
        // Checked by ``ACMEDNSOptions/validate()``.
        settings.dns = try? dns.settings()
        return settings
    }
}

/// The variables of the ACME options, in the order of the options.
extension EnvironmentVariable {
    static let acmeEmail: Self = "AASA_SERVER_ACME_EMAIL"
    static let acmeDirectory: Self = "AASA_SERVER_ACME_DIRECTORY"
    static let acmeCaFile: Self = "AASA_SERVER_ACME_CA_FILE"
    static let acmeAgreeTos: Self = "AASA_SERVER_ACME_AGREE_TOS"
    static let acmeRenewBefore: Self = "AASA_SERVER_ACME_RENEW_BEFORE"
    static let acmeRetryMin: Self = "AASA_SERVER_ACME_RETRY_MIN"
    static let acmeConcurrency: Self = "AASA_SERVER_ACME_CONCURRENCY"
    static let acmeProfile: Self = "AASA_SERVER_ACME_PROFILE"
    static let acmeEabKid: Self = "AASA_SERVER_ACME_EAB_KID"
    static let acmeEabHmacKeyFile: Self = "AASA_SERVER_ACME_EAB_HMAC_KEY_FILE"
    static let acmeOrderRate: Self = "AASA_SERVER_ACME_ORDER_RATE"
    static let acmeFallbackDirectory: Self = "AASA_SERVER_ACME_FALLBACK_DIRECTORY"
    static let acmeFallbackCaFile: Self = "AASA_SERVER_ACME_FALLBACK_CA_FILE"
    static let acmeFallbackAfter: Self = "AASA_SERVER_ACME_FALLBACK_AFTER"
    static let acmeFallbackEabKid: Self = "AASA_SERVER_ACME_FALLBACK_EAB_KID"
    static let acmeFallbackEabHmacKeyFile: Self = "AASA_SERVER_ACME_FALLBACK_EAB_HMAC_KEY_FILE"
}
