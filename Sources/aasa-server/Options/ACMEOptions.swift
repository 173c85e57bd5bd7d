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

    mutating func validate() throws {
        try Environment.naming { try checkValues() }
    }

    private mutating func checkValues() throws {
        if acmeEmail == nil { acmeEmail = Environment.optional(.acmeEmail) }
        if acmeDirectory == nil { acmeDirectory = Environment.optional(.acmeDirectory) }
        if acmeCaFile == nil { acmeCaFile = Environment.optional(.acmeCaFile) }
        if acmeRenewBefore == nil { acmeRenewBefore = Environment.optional(.acmeRenewBefore) }
        acmeAgreeTos = acmeAgreeTos || Environment.flag(.acmeAgreeTos)
        if acmeOrderRate == nil { acmeOrderRate = Environment.optional(.acmeOrderRate) }
        if acmeFallbackDirectory == nil { acmeFallbackDirectory = Environment.optional(.acmeFallbackDirectory) }
        if acmeFallbackCaFile == nil { acmeFallbackCaFile = Environment.optional(.acmeFallbackCaFile) }
        if acmeFallbackAfter == nil { acmeFallbackAfter = Environment.optional(.acmeFallbackAfter) }
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
        } else if acmeFallbackCaFile != nil || acmeFallbackAfter != nil {
            throw ValidationError(
                "--acme-fallback-ca-file and --acme-fallback-after need --acme-fallback-directory")
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
        if let acmeOrderRate {
            // Checked by ``validate()``; `0` is `nil`: no pacing.
            do { settings.orderRate = try OrderRate.parse(acmeOrderRate) } catch {}
        }
        if let acmeFallbackDirectory {
            var fallback = ACMEFallback(directoryURL: acmeFallbackDirectory, caFile: acmeFallbackCaFile)
            if let acmeFallbackAfter { fallback.after = .milliseconds(Int64(acmeFallbackAfter * 60_000)) }
            settings.fallback = fallback
        }
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
    static let acmeOrderRate: Self = "AASA_SERVER_ACME_ORDER_RATE"
    static let acmeFallbackDirectory: Self = "AASA_SERVER_ACME_FALLBACK_DIRECTORY"
    static let acmeFallbackCaFile: Self = "AASA_SERVER_ACME_FALLBACK_CA_FILE"
    static let acmeFallbackAfter: Self = "AASA_SERVER_ACME_FALLBACK_AFTER"
}
