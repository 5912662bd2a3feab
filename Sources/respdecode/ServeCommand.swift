import ArgumentParser
import Glibc
import RespDecode
import RespDecodeServe

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
        "serve needs --listen or --http, each unix:PATH or tcp:HOST:PORT (or \"listen\" or \"http\" in the --config file)"
    )

    /// Without a config file, --listen or --http must be on the command line (with one, the file is read after this
    /// is called, and `run` checks).
    func validate() throws {
        if server.listen == nil && server.http == nil && options.config == nil { throw Self.missingListen }
    }

    func run() throws {
        let configuration = try options.makeConfiguration()
        let level = options.logLevel
        if configuration.indexFile != nil {
            StatisticsReporter.writeError("respdecode: --index-file is for runs over files, not for serve\n")
            throw ExitCode(2)
        }
        guard server.listen != nil || server.http != nil else {
            StatisticsReporter.writeError("respdecode: \(Self.missingListen.message)\n")
            throw ExitCode(2)
        }
        var settings = ServeSettings(requestConfiguration: RequestConfiguration(base: configuration).make)
        settings.stream = try server.listen.map(ServeOptions.address)
        settings.http = try server.http.map(ServeOptions.address)
        settings.maxConnections = server.maxConnections
        settings.idleTimeout = server.idleTimeout > 0 ? server.idleTimeout : nil
        settings.firstByteTimeout = server.firstByteTimeout > 0 ? server.firstByteTimeout : nil
        settings.headerTimeout = server.headerTimeout > 0 ? server.headerTimeout : nil
        settings.maxRequestBytes = server.maxRequestBytes.bytes
        settings.maxRequests = server.maxRequests
        settings.drainTimeout = server.drainTimeout
        if let path = server.authTokenFile {
            do {
                settings.authToken = try AuthToken.read(path)
            } catch {
                StatisticsReporter.writeError("respdecode: serve: --auth-token-file: \(error)\n")
                throw ExitCode(2)
            }
        }
        // A client that goes away must come back as EPIPE from write(2) and end its connection only.
        signal(SIGPIPE, SIG_IGN)
        Descriptors.raiseOpenFileLimit()
        let logger = startLogging(at: level)
        try withStatistics(configuration) { statistics in
            let server: SidecarServer
            do {
                server = try SidecarServer(
                    settings: settings, configuration: configuration, logger: logger, statistics: statistics)
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
            "Where to listen for the stream protocol (records in, lines out on the same connection): unix:PATH -- a "
                + "stale socket file there is replaced, anything else is refused; created 0600 -- or tcp:HOST:PORT, "
                + "HOST an IPv4 or IPv6 address or localhost, PORT 0 for any free port.", valueName: "address"))
    var listen: String?

    @Option(
        help: ArgumentHelp(
            "Where to listen for the HTTP API (POST /decode, /decode/response; GET /healthz, /readyz, /metrics), "
                + "as --listen.", valueName: "address"))
    var http: String?

    @Option(
        help: ArgumentHelp(
            "Connections open at once on each listener, 1 to 1000000; more wait in the listen backlog until one "
                + "ends.", valueName: "n"))
    var maxConnections = 10_000

    @Option(
        help: ArgumentHelp(
            "Close a connection that sends nothing for this many seconds in the middle of a stream (after writing its "
                + "lines; a record left unfinished is truncatedRecord), of a request body (408) or between requests, "
                + "or that reads none of its lines for as long; 0: never.",
            valueName: "seconds"))
    var idleTimeout = 300.0

    @Option(
        help: ArgumentHelp(
            "Close a new connection that sends no byte within this many seconds; 0: never.", valueName: "seconds"))
    var firstByteTimeout = 10.0

    @Option(
        help: ArgumentHelp(
            "Answer 408 and close when an HTTP request's head has not arrived this many seconds after its first "
                + "byte; 0: never.", valueName: "seconds"))
    var headerTimeout = 10.0

    @Option(help: ArgumentHelp("Largest HTTP request body: 413 beyond.", valueName: "size"))
    var maxRequestBytes = ByteSize(256 << 20)

    @Option(
        help: ArgumentHelp(
            "HTTP requests decoding at once; beyond, 503 with Retry-After (and /readyz says 503).", valueName: "n"))
    var maxRequests = 64

    @Option(
        help: ArgumentHelp(
            "A file holding the bearer token every HTTP request must carry (Authorization: Bearer TOKEN) but "
                + "/healthz and /readyz; 401 without it. The file's one line, without its line end.", valueName: "file")
    )
    var authTokenFile: String?

    @Option(
        help: ArgumentHelp(
            "On SIGTERM, wait at most this many seconds for the requests and streams in flight to finish.",
            valueName: "seconds"))
    var drainTimeout = 30.0

    /// The config file keys of these options. `respdecode config` prints the decode options only, so their values
    /// are never written.
    static let configKeys: [ConfigKey] = [
        "listen", "http", "max-connections", "idle-timeout", "first-byte-timeout", "header-timeout",
        "max-request-bytes", "max-requests", "auth-token-file", "drain-timeout",
    ].map { ConfigKey($0, .value) { _ in .null } }

    static func address(_ text: String) throws -> ListenAddress {
        do {
            return try ListenAddress(parsing: text)
        } catch {
            throw ValidationError("--listen \(error.message)")
        }
    }

    func validate() throws {
        guard maxConnections >= 1 && maxConnections <= 1_000_000 else {
            throw ValidationError("--max-connections must be from 1 to 1000000")
        }
        for (name, value) in [
            ("idle-timeout", idleTimeout), ("first-byte-timeout", firstByteTimeout), ("header-timeout", headerTimeout),
        ] {
            guard value.isFinite, value >= 0, value <= 86400 else {
                throw ValidationError("--\(name) must be a number of seconds from 0 (never) to 86400")
            }
        }
        guard drainTimeout.isFinite, drainTimeout >= 0, drainTimeout <= 86400 else {
            throw ValidationError("--drain-timeout must be a number of seconds from 0 to 86400")
        }
        guard maxRequests >= 1 && maxRequests <= 100_000 else {
            throw ValidationError("--max-requests must be from 1 to 100000")
        }
        guard maxRequestBytes.bytes >= 1 else { throw ValidationError("--max-request-bytes must be at least 1") }
        if let listen { _ = try Self.address(listen) }
        if let http { _ = try Self.address(http) }
    }
}
