import ArgumentParser
import RespDecode
import Testing

@testable import respdecode

/// Command lines of input files alone, which decode with every option at its default and are not parsed by
/// ArgumentParser (Invocation.plainFiles): which command lines those are, and that they get the configuration that
/// parsing no option gives.
@Suite("Plain invocation")
struct PlainInvocationTests {
    @Test func filesAloneAreAPlainCommandLine() {
        #expect(Invocation.plainFiles([]) == [])
        #expect(Invocation.plainFiles(["-"]) == ["-"], "'-' is standard input, a file")
        #expect(
            Invocation.plainFiles(["a.warc.gz", "dir/b.http", "-", "c d.har", "./decode", "x=1"])
                == ["a.warc.gz", "dir/b.http", "-", "c d.har", "./decode", "x=1"])
        #expect(InputArguments.sources([]) == [.standardInput], "no file: standard input")
        #expect(InputArguments.sources([], list: true) == [], "no file but a --files-from list: the list alone")
        #expect(InputArguments.sources(["-", "a"]) == [.standardInput, .file("a")])
    }

    @Test(arguments: [
        ["--jobs", "1", "a.http"], ["a.http", "--stats"], ["-x"], ["--"], ["--", "a.http"], [""],
        ["a.http", ""], ["--help"], ["-h"], ["--version"], ["help"], ["decode", "a.http"], ["a.http", "frame"],
        ["config"], ["serve"], ["health"],
    ])
    func everyOtherCommandLineIsArgumentParsers(_ arguments: [String]) {
        #expect(Invocation.plainFiles(arguments) == nil, "\(arguments)")
    }

    @Test func everySubcommandNameAndAliasLeavesThePlainPath() {
        for command in RespDecodeCommand.configuration.subcommands {
            for word in [command.configuration.commandName ?? ""] + command.configuration.aliases where !word.isEmpty {
                #expect(Invocation.plainFiles(["a.http", word]) == nil, "\(word)")
            }
        }
    }

    /// The plain path's configuration against the one DecodeCommand makes from an empty command line, option by
    /// option as `respdecode config` prints them (every option has a row, and a row's value is all it sets), and the
    /// two options that are no setting of the configuration.
    @Test func aPlainRunHasTheConfigurationOfNoOptions() throws {
        let parsed = try DecodeOptions.parse([])
        let fromOptions = EffectiveOptions(options: parsed, configuration: try parsed.makeConfiguration())
        let plain = EffectiveOptions(options: parsed, configuration: DecodeOptions.plainConfiguration)
        #expect(DecodeOptions.table.count == DecodeOptions.configKeys.count)
        for row in DecodeOptions.table {
            #expect(row.effective(plain) == row.effective(fromOptions), "\(row.name)")
        }
        #expect(parsed.strict == DecodeOptions.defaultStrict)
        #expect(parsed.logLevel == DecodeOptions.defaultLogLevel)
        #expect(parsed.config == nil)
    }
}
