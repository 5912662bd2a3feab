import ArgumentParser
import Glibc
import Logging
import RespDecode

/// The `respdecode` tool: a command of subcommands, `decode` being the default, so that `respdecode [OPTIONS]
/// [FILE ...]` decodes as it always has while `respdecode config`, `serve` and `health` are commands of their own.
///
/// A first argument that names a subcommand picks it; anything else (an option, a file) goes to `decode`. A FILE
/// named like a subcommand (`config`, `decode`, `frame`, `serve`, `health`, `help`) is therefore written `./config`, or
/// after an option or
/// `--`. A new subcommand is one `ParsableCommand` added to `subcommands`; one that decodes takes
/// `@OptionGroup var options: DecodeOptions` and conforms to ``DecodeOptionsCommand`` to get `--config` for free.
struct RespDecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "respdecode",
        abstract: "Decode framed HTTP responses in bulk: one JSON line per record on standard output.",
        version: "respdecode 0.1.0",
        subcommands: [
            DecodeCommand.self, FrameCommand.self, ConfigCommand.self, ServeCommand.self, HealthCommand.self,
        ],
        defaultSubcommand: DecodeCommand.self
    )

    /// The help of `respdecode --help` (and of `respdecode help`): the decode command's, which is what a bare
    /// `respdecode` runs, followed by the other subcommands. ArgumentParser would print the root's, which has no
    /// options of its own.
    static func decodeHelp() -> String {
        var text = helpMessage(for: DecodeCommand.self)
        while text.last == "\n" { text.removeLast() }
        let others = configuration.subcommands.filter { $0 != DecodeCommand.self }
        guard !others.isEmpty else { return text + "\n" }
        text += "\n\nSUBCOMMANDS:\n"
        for command in others {
            // As ArgumentParser lays out its sections: names in 26 columns, text wrapped at 80.
            var line = "  " + (command.configuration.commandName ?? "")
            line += String(repeating: " ", count: max(26 - line.count, 1))
            for word in command.configuration.abstract.split(separator: " ") {
                if line.count + 1 + word.count > 80 {
                    text += line + "\n"
                    line = String(repeating: " ", count: 26)
                }
                line += line.hasSuffix(" ") ? String(word) : " " + word
            }
            text += line + "\n"
        }
        return text + "\n  See 'respdecode help <subcommand>' for the options of one. A FILE named like a\n"
            + "  subcommand is written ./NAME (or after '--' or an option).\n"
    }
}

/// `respdecode [decode] [OPTIONS] [FILE ...]`: decodes the FILEs (or standard input).
struct DecodeCommand: DecodeOptionsCommand {
    static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode framed HTTP responses in bulk: one JSON line per record on standard output.",
        usage: "respdecode [<options>] [<file> ...]",
        discussion: """
            Reads captured responses from FILEs (or standard input) -- raw HTTP/1.x streams, WARC (plain or gzip), HAR \
            or ndjson records, each input's framing detected from its first bytes -- undoes Content-Encoding, \
            validates each response's status and \
            MIME type as AFNetworking does, decodes its body with the first decoder of the chain that accepts the \
            type, and writes one JSON line per record, in input order. Logs and warnings go to standard error.

            \(exitStatusHelp)
            """
    )

    @OptionGroup var options: DecodeOptions
    @OptionGroup var inputs: InputArguments

    func run() throws {
        try Self.stream(inputs, options, configuration: try options.makeConfiguration(), writer: nil)
    }

    static let exitStatusHelp = """
        Exit status: 0 when every record got its line (lines reporting errors included); 1 with --strict when \
        any line has "ok": false; 2 for a usage or configuration error; 3 when an input could not be read or \
        output could not be written; 143 (SIGTERM) or 130 (SIGINT) when stopped with input left unread.
        """
}

/// `respdecode frame [OPTIONS] [FILE ...]`: the records of any input as ndjson input lines, not decoded.
struct FrameCommand: DecodeOptionsCommand {
    static let configuration = CommandConfiguration(
        commandName: "frame",
        abstract: "Frame inputs into ndjson record lines (body in bodyBase64, id INPUT:OFFSET) without decoding them.",
        usage: "respdecode frame [<options>] [<file> ...]",
        discussion: """
            Reads FILEs (or standard input, or the files named by --files-from) as decoding does -- raw HTTP, WARC, \
            HAR or ndjson, each input's framing detected from its first bytes -- and writes each record as one ndjson \
            input line: id (the input's name, '-' for standard input, a colon and the record's byte offset), url, \
            method, the WARC fields and digest check, status, headers as [name, value] pairs, trailers, \
            contentDecoded (HAR), framing warnings, and the body in bodyBase64. Input that cannot be framed is a \
            line with its error. A line-oriented engine can then spread the records evenly over its workers, and \
            'respdecode --input ndjson' decodes them there into the lines a direct run gives (value and error alike).

            Takes the options of decoding, so that one --config file serves both; only the framing ones apply: \
            --input, --warc-types, --[no-]digest-check, --max-header-bytes, --max-body-bytes, --max-depth, \
            --max-error-body-bytes, --jobs, --strict (a framing failure), --stats, --stats-interval, --log-level, \
            --resolve-revisits, --max-revisit-digests, --index-file.

            \(DecodeCommand.exitStatusHelp)
            """
    )

    @OptionGroup var options: DecodeOptions
    @OptionGroup var inputs: InputArguments

    func run() throws {
        var configuration = try options.makeConfiguration()
        configuration.outputStyle = .ndjson
        try DecodeCommand.stream(inputs, options, configuration: configuration, writer: RecordLineWriter())
    }
}

/// The inputs of a command that reads records: FILE arguments and `--files-from`.
struct InputArguments: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "Also read the files named in this file ('-': standard input), one name per line, in "
                + "turn, after any FILEs: each detected on its own and named as \"input\" on its lines. file: URIs are "
                + "taken as their paths.", valueName: "list"))
    var filesFrom: String?

    @Argument(
        help: ArgumentHelp(
            "Input files; '-' reads standard input, as does none without --files-from.",
            valueName: "file"))
    var files: [String] = []

    func validate() throws {
        if filesFrom == "-" && files.contains("-") {
            throw ValidationError("standard input cannot be both an input and the --files-from list")
        }
    }

    /// The FILE arguments; standard input when there are none and no list.
    var sources: [InputSource] { Self.sources(files, list: filesFrom != nil) }

    /// The inputs `files` name; standard input when they name none and no --files-from `list` is given.
    static func sources(_ files: [String], list: Bool = false) -> [InputSource] {
        if files.isEmpty && !list { return [.standardInput] }
        return files.map(source)
    }

    /// Where `--files-from` reads the names.
    var list: InputSource? { filesFrom.map(Self.source) }

    /// `-` is standard input, anything else a file.
    private static func source(_ name: String) -> InputSource { name == "-" ? .standardInput : .file(name) }
}

/// Log messages from `level` up go to standard error; returns the tool's logger.
func startLogging(at level: Logger.Level) -> Logger {
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = level
        return handler
    }
    return Logger(label: "respdecode")
}

/// Runs `body` with the statistics of the run, printed on standard error as `configuration` asks (`--stats-interval`
/// lines, a progress line on a terminal, `--stats`' summary at the end, a line on SIGUSR1), and SIGTERM/SIGINT routed
/// to ``Shutdown`` (docs/output.md#exit-status).
func withStatistics<R, Failure: Error>(
    _ configuration: Configuration, _ body: (Statistics) throws(Failure) -> R
) throws(Failure) -> R {
    let statistics = Statistics()
    let reporter = StatisticsReporter(statistics: statistics, interval: configuration.statsInterval)
    Shutdown.shared.setStatisticsHandler { reporter.printLine() }
    Shutdown.shared.installSignalHandlers()
    reporter.start()
    defer {
        reporter.stop()
        if configuration.stats { StatisticsReporter.writeError(statistics.snapshot.summary) }
    }
    return try body(statistics)
}

extension DecodeCommand {
    /// Runs `inputs` through a ``StreamRunner`` whose workers write lines with `writer` (nil: decode), and exits as
    /// the summary says (docs/output.md#exit-status): an engine must be able to tell a partial run from a complete one.
    static func stream(
        _ inputs: InputArguments, _ options: DecodeOptions, configuration: Configuration, writer: (any LineWriter)?
    ) throws {
        try stream(
            inputs.sources, list: inputs.list,
            logLevel: options.logLevel, strict: options.strict, configuration: configuration, writer: writer)
    }

    /// Decodes `sources` (then the files named in `list`) with `configuration` and the two options that are no
    /// setting of it; what ``run()`` does with the parsed options, and ``Invocation/plainFiles(_:)``'s command lines
    /// with the defaults.
    static func stream(
        _ sources: [InputSource], list: InputSource?, logLevel: Logger.Level, strict: Bool,
        configuration: Configuration, writer: (any LineWriter)?
    ) throws {
        let logger = startLogging(at: logLevel)
        // A closed stdout must come back as EPIPE from write(2), so the worker can stop quietly, not die of SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        var indexDescriptor: Int32?
        if let path = configuration.indexFile {
            let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                logger.critical("cannot open the index file \(path): \(String(cString: strerror(errno)))")
                throw ExitCode(3)
            }
            indexDescriptor = fd
        }
        defer { if let indexDescriptor { close(indexDescriptor) } }
        let summary = try run(
            sources, list: list, configuration: configuration, logger: logger, writer: writer,
            indexDescriptor: indexDescriptor)
        if !summary.skipped.isEmpty {
            let kinds = summary.skipped.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }
            logger.info(
                """
                skipped archive records: \(kinds.joined(separator: ", ")) (--warc-types chooses the WARC types; \
                an ARC file's filedesc record is always skipped)
                """)
        }
        if let signal = summary.interruptedBy { throw ExitCode(128 + signal) }
        if summary.failedInputs > 0 { throw ExitCode(3) }
        if strict && summary.ok < summary.records { throw ExitCode(1) }
    }

    /// Runs the inputs through a ``StreamRunner`` with signals, statistics and progress on standard error
    /// (docs/output.md#exit-status).
    private static func run(
        _ sources: [InputSource], list: InputSource?, configuration: Configuration, logger: Logger,
        writer: (any LineWriter)?, indexDescriptor: Int32?
    ) throws -> RunSummary {
        do {
            return try withStatistics(configuration) { statistics throws(OutputFailure) in
                try StreamRunner(
                    configuration: configuration, logger: logger, statistics: statistics, writer: writer,
                    indexDescriptor: indexDescriptor
                )
                .run(sources, thenFilesNamedIn: list)
            }
        } catch .closed {
            throw ExitCode(3)
        } catch .failed(let message) {
            logger.critical("cannot write output: \(message)")
            throw ExitCode(3)
        }
    }
}
