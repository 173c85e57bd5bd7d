import AASACore
import AASAOpenSSL
import AASAPostgres
import AASAServer
import ArgumentParser

/// `aasa-server store`: the PostgreSQL store (docs/store.md).
struct Store: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create the PostgreSQL store's schema, push folders to it, or pull it back as folders.",
        subcommands: [Init.self, Push.self, Pull.self])

    /// `--store`, shared by every store subcommand.
    struct StoreOptions: ParsableArguments {
        @Option(
            name: .long,
            help: ArgumentHelp(
                "libpq connection URI of the store, e.g. postgresql://aasa@db:5432/aasa?sslmode=verify-full "
                    + "(env: \(EnvironmentVariable.store)).", valueName: "uri"))
        var store: String?

        @Option(
            name: .long,
            help: ArgumentHelp(
                "File holding the 64-hex-character key private keys are sealed with; needed with --certs "
                    + "(env: \(EnvironmentVariable.storeKeyFile)).", valueName: "file"))
        var storeKeyFile: String?

        /// The URI: the flag, else its variable.
        var uri: String? { store ?? Environment.optional(.store) }

        /// The key file: the flag, else its variable.
        var keyFile: String? { storeKeyFile ?? Environment.optional(.storeKeyFile) }

        func validate() throws {
            guard uri != nil else {
                throw ValidationError(
                    "--store is required: the store's connection URI (or \(EnvironmentVariable.store))")
            }
        }

        /// Connects and, when `migrating`, creates or upgrades the schema; a failure is printed (server named, no
        /// password) as exit 1.
        func open(migrating: Bool = true) throws -> AASAServer.Store {
            try reporting { try AASAServer.Store(uri: uri ?? "", migrating: migrating) }
        }

        /// The store key, or exit 1 naming the file and what is wrong with it.
        func key(for certs: String?) throws -> StoreKey? {
            guard certs != nil, let file = keyFile else { return nil }
            do {
                return try StoreKeyFile.load(file)
            } catch {
                DiagnosticPrinter.printError(error.description)
                throw ExitCode(1)
            }
        }

        /// Refuses `--certs` without `--store-key-file`.
        func requireKey(for certs: String?) throws {
            if certs != nil && keyFile == nil {
                throw ValidationError(
                    "--certs needs --store-key-file (or \(EnvironmentVariable.storeKeyFile)): private keys are sealed "
                        + "with the store key, never stored in plaintext")
            }
        }
    }

    /// Runs `body`, printing a store failure (which names host:port/database, never the password) as exit 1.
    static func reporting<Value>(_ body: () throws -> Value) throws -> Value {
        do {
            return try body()
        } catch let exit as ExitCode {
            throw exit
        } catch {
            DiagnosticPrinter.printError("error: \(error)")
            throw ExitCode(1)
        }
    }

    /// `aasa-server store init`.
    struct Init: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create or upgrade the store's schema and print its version.",
            discussion: """
                Safe to run any number of times, and from several machines at once: the upgrade runs under an advisory lock, in one transaction. The tables are described in docs/store.md.

                Examples:
                  aasa-server store init --store postgresql://aasa@db.internal:5432/aasa?sslmode=verify-full
                """)

        @OptionGroup var options: StoreOptions

        func run() throws {
            let store = try options.open()
            let version = try reporting { try StoreSchema.version(store.connection) }
            print("store \(store.connection.server): schema version \(version)")
        }
    }

    /// `aasa-server store push`.
    struct Push: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Upload domain folders (and certificates) to the store, each domain checked as check does.",
            discussion: """
                A domain with an error is refused (nothing of it is written) and its diagnostics are printed; the others are compared with the store a thousand at a time (site.json and file digests, no stored file read) and those that differ written in one transaction per batch, each domain with its own change and history entry; each changed domain prints the semantic diff of what was stored against what is pushed. A second identical push writes nothing, and reads again only the folders whose files changed since (each folder's stamp, its entries' inodes, sizes and times, is kept with its row); --dry-run never writes (not even the schema: run store init first). Private keys are sealed with the store key before they leave the process. Exit status 0 when every domain was written, 2 when any was refused, 1 when the store failed.

                Examples:
                  aasa-server store push --config site-config --store postgresql://aasa@db/aasa
                  aasa-server store push --config site-config --certs certs --store-key-file /run/secrets/store.key --prune
                """)

        @OptionGroup var configOptions: ConfigOptions

        @Option(
            name: .long,
            help: ArgumentHelp(
                "Also push the certificate folders of this folder (needs --store-key-file).", valueName: "dir"))
        var certs: String?

        @OptionGroup var options: StoreOptions

        @Flag(help: "Compare and report, write nothing.")
        var dryRun = false

        @Flag(help: "Delete stored domains (and, with --certs, certificates) the folders do not have.")
        var prune = false

        func validate() throws { try options.requireKey(for: certs) }

        func run() throws {
            let key = try options.key(for: certs)
            let store = try options.open(migrating: !dryRun)
            let config = configOptions.config
            var push = StorePush(
                config: config, certs: certs, excludedCerts: certs ?? Environment.value(.certs, "certs"), key: key)
            push.dryRun = dryRun
            push.prune = prune
            let outcome = try reporting { try push.run(store) { print($0) } }
            for refused in outcome.refused {
                DiagnosticPrinter.printError("\(refused.domain): refused: nothing of it is written")
                DiagnosticPrinter.print(refused.diagnostics)
            }
            if outcome.unread > 0 {
                print(
                    "\(outcome.unread) folder\(outcome.unread == 1 ? "" : "s") unchanged since a push compared "
                        + "\(outcome.unread == 1 ? "it" : "them") with the store: not read again")
            }
            if outcome.changed == 0 {
                print("nothing changed: the store at \(store.connection.server) already holds what \(config) has")
            } else if dryRun {
                print("dry run: \(outcome.changed) change\(outcome.changed == 1 ? "" : "s"), nothing written")
            }
            if !outcome.refused.isEmpty { throw ExitCode(2) }
        }
    }

    /// `aasa-server store pull`.
    struct Pull: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Write the store back out as folders (backup, migration, diff).",
            discussion: """
                Nothing is written to the store (run store init first). Every stored domain becomes <config>/<domain>/site.json and its files; with --certs, every certificate becomes <certs>/<name>/ with privkey.pem opened with the store key and written with mode 0600. A certificate whose key does not open is named with the key file and not written; the exit status is then 1.

                Examples:
                  aasa-server store pull --store postgresql://aasa@db/aasa --config backup/site-config
                """)

        @Option(name: .long, help: ArgumentHelp("Folder to write <domain>/site.json into.", valueName: "dir"))
        var config: String

        @Option(
            name: .long,
            help: ArgumentHelp(
                "Also write the certificates into this folder (needs --store-key-file).", valueName: "dir"))
        var certs: String?

        @OptionGroup var options: StoreOptions

        func validate() throws { try options.requireKey(for: certs) }

        func run() throws {
            let key = try options.key(for: certs)
            let store = try options.open(migrating: false)
            let pull = StorePull(config: config, certs: certs, key: key)
            let errors = try reporting { try pull.run(store) { print($0) } }
            for error in errors { DiagnosticPrinter.printError(error) }
            if !errors.isEmpty { throw ExitCode(1) }
        }
    }
}

/// The variables of `--store` and `--store-key-file`.
extension EnvironmentVariable {
    static let store: Self = "AASA_SERVER_STORE"
    static let storeKeyFile: Self = "AASA_SERVER_STORE_KEY_FILE"
}
