import ArgumentParser
import RespDecode

/// A subcommand that takes the decode options, and with them `--config FILE`: ``Invocation`` merges the file under
/// its command line before the command runs.
protocol DecodeOptionsCommand: ParsableCommand {
    var options: DecodeOptions { get }
    /// Config file keys for the command's own options, beyond the decode options' (`serve`'s "listen"). Only this
    /// command reads them; a file giving one to another command is an error. Default: none.
    static var ownConfigKeys: [ConfigKey] { get }
    /// Parses and checks the arguments that a file's own keys stand for, alone (the file's own errors, whatever the
    /// command line says). Default: nothing to check.
    static func checkOwnOptions(_ arguments: [String]) throws
}

extension DecodeOptionsCommand {
    static var ownConfigKeys: [ConfigKey] { [] }
    static func checkOwnOptions(_ arguments: [String]) throws {}
}

/*
 From a command line to the command to run, with the config file it names merged in.

 The file's entries become the arguments they stand for (ConfigKey), placed before the command line's own, right
 after the subcommand's name, and the whole is parsed again: a later option wins in ArgumentParser (the last value of
 an option, the last of --x and --no-x, and --accept applied in order), so the command line overrides the file, and
 every value is checked by the same code whichever side it came from (DecodeOptions.validate).

 When that fails, the error is put on the entry that causes it: the file alone is parsed with its entries added one
 at a time, the first prefix that fails naming the entry (its own value, or a clash with an entry above it,
 such as "accept" naming a decoder the "chain" above left out); when the file alone is fine, the same is done with
 the command line after each prefix, and the message says the command line took part. The command line alone was
 parsed first (to find --config), so its own errors are reported as usual, before the file is read.

 A command may have keys of its own beside the decode options' (`serve`'s "listen", "max-connections",
 "idle-timeout"): they are checked alone by the command's own group in the same way, and another command given one
 says that only its owner reads it.
 */
enum Invocation {
    /// An entry of a config file and the arguments it stands for.
    typealias EntryArguments = (entry: ConfigFile.Entry, arguments: [String])

    /// The command `arguments` (without the program name) ask for, with the options of its config file.
    static func parse(_ arguments: [String]) throws -> any ParsableCommand {
        let direct = decodeDirectly(arguments)
        // Decoding without --config (nearly every run) returns before the cast below, which looks the conformance up
        // at run time: a scan of every conformance record of the binary, 1 % of an empty run's instructions.
        if let direct, direct.options.config == nil { return direct }
        let command = try direct ?? RespDecodeCommand.parseAsRoot(arguments)
        guard let decoding = command as? any DecodeOptionsCommand, let path = decoding.options.config else {
            return command
        }
        let commandType = type(of: decoding)
        let file = try ConfigFile.read(path: path)
        let entries = try fileArguments(file, ownKeys: commandType.ownConfigKeys)
        let allFileArguments = entries.flatMap(\.arguments)
        let isDecodeKey = { (entry: EntryArguments) in DecodeOptions.configKeys.contains { $0.name == entry.entry.key }
        }
        let decodeEntries = entries.filter(isDecodeKey)
        let ownEntries = entries.filter { !isDecodeKey($0) }

        // The file's arguments go right after the subcommand's name, when the command line starts with it.
        let split = arguments.first == type(of: command).configuration.commandName ? 1 : 0
        func merged(_ fileArguments: [String]) -> [String] {
            Array(arguments[..<split]) + fileArguments + Array(arguments[split...])
        }

        // The file alone first: a bad value in it is an error even when the command line overrides it this time.
        do {
            _ = try DecodeOptions.parse(decodeEntries.flatMap(\.arguments))
        } catch {
            throw blame(decodeEntries, in: file, with: error) { try DecodeOptions.parse($0) }
        }
        do {
            try commandType.checkOwnOptions(ownEntries.flatMap(\.arguments))
        } catch {
            throw blame(ownEntries, in: file, with: error) { try commandType.checkOwnOptions($0) }
        }
        do {
            return try RespDecodeCommand.parseAsRoot(merged(allFileArguments))
        } catch {
            throw blame(entries, in: file, with: error, together: true) {
                try RespDecodeCommand.parseAsRoot(merged($0))
            }
        }
    }

    /// The decode command `arguments` ask for, parsed by `DecodeCommand` itself; nil when the root must parse them: a
    /// word that names a subcommand (or `help`) is among them, or they do not parse as decoding (a usage error, a help
    /// or version request), so that every message stays the root's.
    ///
    /// Why: start-up is a share of every short run (bench/small's workloads), and two thirds of an empty run's
    /// instructions were ArgumentParser's, most of them the root building the decode command's argument set again for
    /// each question it asks on the way to its default subcommand (34 M of 51 M instructions, callgrind).
    static func decodeDirectly(_ arguments: [String]) -> DecodeCommand? {
        let words = commandWords
        guard !arguments.contains(where: { words.contains($0) }) else { return nil }
        return (try? DecodeCommand.parseAsRoot(arguments)) as? DecodeCommand
    }

    /// The words that make the root parse a command line: the subcommands' names and aliases, and `help`.
    static var commandWords: Set<String> {
        Set(
            RespDecodeCommand.configuration.subcommands.flatMap { command in
                [command.configuration.commandName ?? ""] + command.configuration.aliases
            } + ["help"])
    }

    /// The files of a command line that is nothing but input files (none: standard input), as `respdecode FILE ...`
    /// and `... | respdecode` are; nil for any other. Such a run decodes with every option at its default, which
    /// needs no parsing: ``runPlain(_:)`` runs it without ArgumentParser.
    ///
    /// A word starting with `-` (an option, `--`; `-` alone is standard input and is a file here), an empty word, and
    /// a word that names a subcommand (or `help`) leave the command line to ArgumentParser, as do all others, so that
    /// every message, `--config` and every option stay its.
    ///
    /// Why: ArgumentParser's first parse of the decode options was a third of an empty run's CPU time (5.4 of 15.5 ms,
    /// and 190 of its 850 page faults), mostly the Swift runtime's first look-ups of the conformances and types of
    /// sixty options, which no later parse pays again but every process pays once.
    static func plainFiles(_ arguments: [String]) -> [String]? {
        guard arguments.allSatisfy({ $0 == "-" || !($0.isEmpty || $0.hasPrefix("-")) }) else { return nil }
        let words = commandWords
        guard !arguments.contains(where: { words.contains($0) }) else { return nil }
        return arguments
    }

    /// Decodes `files` (from ``plainFiles(_:)``) as `DecodeCommand` does with no option given: the configuration's
    /// defaults, which are the options' (``DecodeOptions/defaults``; a test checks that parsing no option makes the
    /// same configuration).
    static func runPlain(_ files: [String]) throws {
        try DecodeCommand.stream(
            InputArguments.sources(files), list: nil, logLevel: DecodeOptions.defaultLogLevel,
            strict: DecodeOptions.defaultStrict, configuration: DecodeOptions.plainConfiguration, writer: nil)
    }

    /// Each entry of `file` with the arguments it stands for.
    /// - Parameters:
    ///   - file: the config file as read.
    ///   - ownKeys: the keys of the command's own options, beside the decode options'.
    /// - Returns: the entries in file order, each with its arguments.
    /// - Throws: `unknownKey` for a key no option has, `wrongType` for a value of the wrong JSON type.
    static func fileArguments(_ file: ConfigFile, ownKeys: [ConfigKey] = []) throws(ConfigFileError) -> [EntryArguments]
    {
        var result: [EntryArguments] = []
        let keys = DecodeOptions.configKeys + ownKeys
        for entry in file.entries {
            guard let key = keys.first(where: { $0.name == entry.key }) else {
                var reason = "no option has this name"
                if entry.key == "config" {
                    reason = "a config file cannot name another"
                } else if let owner = commandsWithOwnKeys.first(where: { command in
                    command.ownConfigKeys.contains { $0.name == entry.key }
                }) {
                    reason = "only 'respdecode \(owner.configuration.commandName ?? "")' reads this key"
                } else if let near = keys.first(where: { editDistance($0.name, entry.key) <= 2 }) {
                    reason += "; did you mean \"\(near.name)\"?"
                } else {
                    reason += " ('respdecode config' prints every key)"
                }
                throw file.error(.unknownKey, reason, at: entry)
            }
            result.append((entry, try key.arguments(for: entry, in: file)))
        }
        return result
    }

    /// The subcommands whose config file keys are more than the decode options'.
    static var commandsWithOwnKeys: [any DecodeOptionsCommand.Type] {
        RespDecodeCommand.configuration.subcommands.compactMap { $0 as? any DecodeOptionsCommand.Type }
            .filter { !$0.ownConfigKeys.isEmpty }
    }

    /// The error of the first entry whose arguments, added to those of the entries above it, make `parse` fail;
    /// `error` (what parsing all of them gave) when none does.
    static func blame(
        _ entries: [EntryArguments], in file: ConfigFile, with error: any Error,
        together: Bool = false, _ parse: ([String]) throws -> Any
    ) -> any Error {
        var arguments: [String] = []
        for (entry, entryArguments) in entries {
            arguments += entryArguments
            do {
                _ = try parse(arguments)
            } catch {
                var message = RespDecodeCommand.message(for: error)
                // "--max-depth must be from 1 to 1000000" says its option; the key in front says it already.
                if message.hasPrefix("--\(entry.key) ") { message.removeFirst(entry.key.count + 3) }
                // One line: ArgumentParser lists six choices or more one a line ("  - trace").
                let lines = message.split(separator: "\n")
                if lines.count > 1 {
                    message =
                        lines[0] + " " + lines.dropFirst().map { $0.trimmingPrefix("  - ") }.joined(separator: ", ")
                }
                if together { message = "together with the command line: " + message }
                return file.error(.invalidValue, message, at: entry)
            }
        }
        return error
    }

    /// The Levenshtein distance of two short strings, to suggest the key a misspelt one meant.
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8)
        let b = Array(b.utf8)
        var previous = Array(0...b.count)
        for i in 1...max(a.count, 1) where !a.isEmpty {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...max(b.count, 1) where !b.isEmpty {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
