import ArgumentParser
import Glibc
import Logging
import RespDecode

/// The `respdecode` tool: a command of subcommands, `decode` being the default, so that `respdecode [OPTIONS]
/// [FILE ...]` decodes as it always has while `respdecode config`, `serve` and `health` are commands of their own.
///
/// A first argument that names a subcommand picks it; anything else (an option, a file) goes to `decode`. A FILE
/// named like a subcommand (`config`, `decode`, `serve`, `health`, `help`) is therefore written `./config`, or after an option or
/// `--`. A new subcommand is one `ParsableCommand` added to `subcommands`; one that decodes takes
/// `@OptionGroup var options: DecodeOptions` and conforms to ``DecodeOptionsCommand`` to get `--config` for free.
struct RespDecodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "respdecode",
        abstract: "Decode framed HTTP responses in bulk: one JSON line per record on standard output.",
        version: "respdecode 0.1.0",
        subcommands: [DecodeCommand.self, ConfigCommand.self, ServeCommand.self, HealthCommand.self],
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

            Exit status: 0 when every record got its line (lines reporting errors included); 1 with --strict when \
            any line has "ok": false; 2 for a usage or configuration error; 3 when an input could not be read or \
            output could not be written.
            """
    )

    @OptionGroup var options: DecodeOptions

    @Argument(help: ArgumentHelp("Input files; '-' or none reads standard input.", valueName: "file"))
    var files: [String] = []

    func run() throws {
        let configuration = try options.makeConfiguration()
        let logger = startLogging(at: try options.makeLogLevel())

        // A closed stdout must come back as EPIPE from write(2), so the worker can stop quietly, not die of SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        let inputs: [InputSource] = files.isEmpty ? [.standardInput] : files.map { $0 == "-" ? .standardInput : .file($0) }
        let summary = try Self.decode(inputs, configuration: configuration, logger: logger)
        if !summary.skipped.isEmpty {
            let kinds = summary.skipped.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }
            logger.info("skipped WARC records: \(kinds.joined(separator: ", ")) (--warc-types chooses)")
        }
        if let signal = summary.interruptedBy { throw ExitCode(128 + signal) }
        if summary.failedInputs > 0 { throw ExitCode(3) }
        if options.strict && summary.ok < summary.records { throw ExitCode(1) }
    }
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
/// to ``Shutdown`` (SPEC §1).
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
    /// Runs the inputs through a ``StreamRunner`` with signals, statistics and progress on standard error (SPEC §1).
    static func decode(_ inputs: [InputSource], configuration: Configuration, logger: Logger) throws -> RunSummary {
        do {
            return try withStatistics(configuration) { statistics throws(OutputFailure) in
                try StreamRunner(configuration: configuration, logger: logger, statistics: statistics).run(inputs)
            }
        } catch .closed {
            throw ExitCode(3)
        } catch .failed(let message) {
            logger.critical("cannot write output: \(message)")
            throw ExitCode(3)
        }
    }
}
