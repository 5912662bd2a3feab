import ArgumentParser
import Glibc
import RespDecode

/// `respdecode serve --listen ADDRESS [OPTIONS]`: the sidecar. Each connection to the socket is one stream, decoded
/// with the decode options as standard input would be, its lines written back on the same connection.
struct ServeCommand: DecodeOptionsCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract:
            "Decode over a unix or TCP socket (a sidecar): each connection is one stream, its lines sent back on it.",
        usage: "respdecode serve --listen <address> [--config <file>] [<options>]",
        discussion: """
            Each accepted connection is one stream in the protocol of standard input and output: the client writes \
            records (any framing, detected per connection), the server writes one line per record back on the same \
            connection, in order, flushed whenever the connection's input is idle. When the client half-closes \
            (shutdown(SHUT_WR)), the server writes the remaining lines and closes the connection. All connections \
            share the --jobs workers and the statistics (--stats, --stats-interval, SIGUSR1); every limit applies \
            per record as usual. Nothing is written on standard output; logs go to standard error ("listening on \
            ..." at notice level: --log-level notice shows the port chosen for tcp:HOST:0).

            SIGTERM or SIGINT: stop accepting, let every connection write the lines of the records it sent in full, \
            close them, remove the unix socket, and exit 0. A second signal exits at once. Exit status: 0 after such \
            a stop; 2 for a usage or configuration error, or when the address cannot be listened on (a regular file \
            at the socket's path, another server on it, a port in use).

            A config file (--config) may also set "listen", "max-connections" and "idle-timeout".
            """
    )

    // The server's own options first in --help.
    @OptionGroup var server: ServeOptions
    @OptionGroup var options: DecodeOptions

    static var ownConfigKeys: [ConfigKey] { ServeOptions.configKeys }
    static func checkOwnOptions(_ arguments: [String]) throws { _ = try ServeOptions.parse(arguments) }

    static let missingListen = ValidationError(
        "serve needs --listen unix:PATH or tcp:HOST:PORT (or \"listen\" in the --config file)")

    /// Without a config file, --listen must be on the command line (with one, the file is read after this is
    /// called, and `run` checks).
    func validate() throws {
        if server.listen == nil && options.config == nil { throw Self.missingListen }
    }

    func run() throws {
        let configuration = try options.makeConfiguration()
        let level = options.logLevel
        if configuration.indexFile != nil {
            StatisticsReporter.writeError("respdecode: --index-file is for runs over files, not for serve\n")
            throw ExitCode(2)
        }
        guard let listen = server.listen else {
            StatisticsReporter.writeError("respdecode: \(Self.missingListen.message)\n")
            throw ExitCode(2)
        }
        let address = try ServeOptions.address(listen)
        // A client that goes away must come back as EPIPE from write(2) and end its connection only.
        signal(SIGPIPE, SIG_IGN)
        let logger = startLogging(at: level)
        try withStatistics(configuration) { statistics in
            let server: Server
            do {
                server = try Server(
                    listeningOn: address, configuration: configuration, logger: logger, statistics: statistics,
                    maxConnections: self.server.maxConnections,
                    idleTimeout: self.server.idleTimeout > 0 ? self.server.idleTimeout : nil)
            } catch {
                StatisticsReporter.writeError("respdecode: serve: \(error)\n")
                throw ExitCode(2)
            }
            server.run()
        }
    }
}

/// The options of `serve` beyond decoding's. A config file may set them too ("listen", "max-connections",
/// "idle-timeout"); only `serve` reads those keys.
struct ServeOptions: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Where to listen (required): unix:PATH -- a stale socket file there is replaced, "
                + "anything else is refused -- or tcp:HOST:PORT, HOST an IPv4 or IPv6 address or localhost, PORT 0 for any "
                + "free port.", valueName: "address"))
    var listen: String?

    @Option(
        help: ArgumentHelp(
            "Connections served at once, 1 to 10000 (each takes two threads); more wait in the "
                + "listen backlog until one ends.", valueName: "n"))
    var maxConnections = 64

    @Option(
        help: ArgumentHelp(
            "Close a connection that sends nothing for this many seconds, after writing its lines "
                + "(a record left unfinished is truncatedRecord), or that reads none of its lines for as long; 0: never.",
            valueName: "seconds"))
    var idleTimeout = 300.0

    /// The config file keys of these options. `respdecode config` prints the decode options only, so their values
    /// are never written.
    static let configKeys: [ConfigKey] = [
        ConfigKey("listen", .value) { _ in .null },
        ConfigKey("max-connections", .value) { _ in .null },
        ConfigKey("idle-timeout", .value) { _ in .null },
    ]

    static func address(_ text: String) throws -> ListenAddress {
        do {
            return try ListenAddress(parsing: text)
        } catch {
            throw ValidationError("--listen \(error.message)")
        }
    }

    func validate() throws {
        guard maxConnections >= 1 && maxConnections <= 10_000 else {
            throw ValidationError("--max-connections must be from 1 to 10000")
        }
        guard idleTimeout.isFinite, idleTimeout >= 0, idleTimeout <= 86400 else {
            throw ValidationError("--idle-timeout must be a number of seconds from 0 (never) to 86400")
        }
        if let listen { _ = try Self.address(listen) }
    }
}
