import AASACore
import AASAServer
import ArgumentParser

/// `aasa-server sign FILE --cert PEM --key PEM [--chain PEM] --out FILE`: CMS-signs a file for iOS 8.
struct Sign: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "CMS-sign an apple-app-site-association file for iOS 8 (DER, content embedded, no attributes).",
        discussion: """
            The same signature the server makes for domains with "signing" on, for files hosted elsewhere:
            SHA-256, the bytes signed exactly, no signed attributes, intermediates included. Serve the \
            result as application/pkcs7-mime. The key must match the certificate, the certificate must be \
            valid (and cover --domain when given), and the chain must be included.

            Example:
              aasa-server sign apple-app-site-association.json --cert fullchain.pem --key privkey.pem \\
                --out apple-app-site-association
            """)

    @Argument(help: ArgumentHelp("The file to sign.", valueName: "file"))
    var file: String

    @Option(help: ArgumentHelp("PEM certificate, leaf first (may include the intermediates).", valueName: "pem"))
    var cert: String

    @Option(help: ArgumentHelp("PEM private key of the certificate.", valueName: "pem"))
    var key: String

    @Option(help: ArgumentHelp("PEM intermediate certificates, if not in --cert.", valueName: "pem"))
    var chain: String?

    @Option(help: ArgumentHelp("Where to write the signed file (DER).", valueName: "file"))
    var out: String

    @Option(help: ArgumentHelp("Check that the certificate covers this domain.", valueName: "domain"))
    var domain: String?

    func validate() throws {
        if out == file { throw ValidationError("--out must differ from the input file") }
    }

    func run() throws {
        do {
            let result = try FileSigning(
                input: file, certificate: cert, key: key, chain: chain, output: out, domain: domain?.lowercased()
            ).run()
            DiagnosticPrinter.print(result.diagnostics)
            print("wrote \(out): \(result.bytes) bytes, CMS SignedData (DER); serve it as application/pkcs7-mime")
        } catch {
            DiagnosticPrinter.print(error.diagnostics)
            DiagnosticPrinter.printError("sign failed: nothing was written")
            throw ExitCode(2)
        }
    }
}
