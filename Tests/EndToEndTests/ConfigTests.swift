import Foundation
import Testing

/// `--config FILE` and `respdecode config` through the built binary: a file changes the output, the command line
/// overrides it, `config`'s output reads back the same, every option is a key, and bad files exit 2 naming the file,
/// the line and the key.
@Suite("Config file, end to end", .serialized)
struct ConfigTests {
    /// Writes `text` to a new file in the temporary directory and returns its path; `files` removes them at the end.
    final class Files {
        private var urls: [URL] = []

        func write(_ text: String) throws -> String {
            let url = FileManager.default.temporaryDirectory.appendingPathComponent(
                "respdecode-\(UUID().uuidString).json")
            try Data(text.utf8).write(to: url)
            urls.append(url)
            return url.path
        }

        deinit { for url in urls { try? FileManager.default.removeItem(at: url) } }
    }

    static func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

    /// The top-level keys of a config file as `respdecode config` writes it (two-space indent), in order.
    static func keys(_ configFile: String) -> [String] {
        configFile.split(separator: "\n").compactMap { line -> String? in
            guard line.hasPrefix("  \""), !line.hasPrefix("   "), let end = line.dropFirst(3).firstIndex(of: "\"")
            else {
                return nil
            }
            return String(line[line.index(line.startIndex, offsetBy: 3)..<end])
        }
    }

    @Test func aFileSetsOptionsThatChangeTheOutput() throws {
        let files = Files()
        let pretty = try EndToEndTests.run([
            "--config", try files.write(#"{"output": "pretty"}"#), "samples/capture.http",
        ])
        #expect(pretty.status == 0, "\(pretty.stderr)")
        #expect(pretty.stdout == (try EndToEndTests.sample("capture.expected.pretty")))

        let html = Data("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 8\r\n\r\n{\"a\":[]}".utf8)
        let json = try files.write(
            """
            {
              "chain": ["json"],
              "accept": {"json": ["text/*", "application/json"]}
            }
            """)
        let accepted = try EndToEndTests.run(["--config", json], stdin: html)
        #expect(accepted.status == 0)
        #expect(Self.text(accepted.stdout).contains(#""decoder":"json","ok":true,"value":{"a":[]}"#))

        let strict = try EndToEndTests.run(["--config", try files.write(#"{"strict": true}"#), "samples/capture.http"])
        #expect(strict.status == 1)
    }

    @Test func theCommandLineOverridesTheFile() throws {
        let files = Files()
        let config = try files.write(#"{"output": "pretty", "strict": true, "keep-nulls": false}"#)
        let result = try EndToEndTests.run([
            "--output", "ndjson", "--config", config, "--no-strict", "samples/capture.http",
        ])
        #expect(result.status == 0, "--no-strict turns off the file's strict")
        #expect(result.stdout == (try EndToEndTests.sample("capture.expected.ndjson")))

        let nulls = Data(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{\"a\":null}".utf8)
        let kept = try EndToEndTests.run(["--config", config, "--keep-nulls", "--output", "ndjson"], stdin: nulls)
        #expect(Self.text(kept.stdout).contains(#""value":{"a":null}"#))
    }

    /// `respdecode config`'s output, given back with --config, gives the same configuration -- printed again, and
    /// decoding the same way.
    @Test func theConfigOutputRoundTrips() throws {
        let files = Files()
        let start = try files.write(#"{"chain": "json,xml", "max-depth": 64, "warc-types": "all", "scale": 2}"#)
        let options = ["--inflate", "--accept", "json=text/*", "--max-body-bytes", "1MiB", "--stats-interval", "1.5"]
        let first = try EndToEndTests.run(["config", "--config", start] + options)
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stderr.isEmpty)
        let printed = Self.text(first.stdout)
        #expect(printed.contains(#""max-depth": 64"#) && printed.contains(#""inflate": true"#))
        #expect(printed.contains(#""max-body-bytes": "1MiB""#) && printed.contains(#""stats-interval": 1.5"#))

        let again = try EndToEndTests.run(["config", "--config", try files.write(printed)])
        #expect(again.status == 0)
        #expect(Self.text(again.stdout) == printed)

        let inputs = ["samples/images.http", "samples/capture.http"]
        let direct = try EndToEndTests.run(["--config", start] + options + inputs)
        let fromPrinted = try EndToEndTests.run(["--config", try files.write(printed)] + inputs)
        #expect(direct.status == 0)
        #expect(fromPrinted.stdout == direct.stdout)
    }

    /// Every option of the decode command, as ArgumentParser lists it (`--experimental-dump-help`), is a key of
    /// `respdecode config`'s output, in the order of `--help` -- but --config itself, the built-in --help and
    /// --version, and --files-from, which names inputs as the FILE arguments do (a list of inputs is no setting). A
    /// flag's --no- form is the same key. `frame` takes the same options, so that one file serves both.
    @Test func everyOptionIsAKeyOfTheConfigOutput() throws {
        let dump = try EndToEndTests.run(["--experimental-dump-help"])
        #expect(dump.status == 0)
        let tool = try #require(try JSONSerialization.jsonObject(with: dump.stdout) as? [String: Any])
        let root = try #require(tool["command"] as? [String: Any])
        let subcommands = try #require(root["subcommands"] as? [[String: Any]])
        func optionNames(of name: String) throws -> [String] {
            let command = try #require(subcommands.first { $0["commandName"] as? String == name }, "no \(name)")
            let arguments = try #require(command["arguments"] as? [[String: Any]])
            let named = arguments.filter { ["option", "flag"].contains($0["kind"] as? String) }
                .compactMap { ($0["preferredName"] as? [String: Any])?["name"] as? String }
            return named.filter { name in
                !["help", "version", "config", "files-from"].contains(name)
                    && !(name.hasPrefix("no-") && named.contains(String(name.dropFirst(3))))
            }
        }
        let decodeOptions = try optionNames(of: "decode")
        #expect(decodeOptions.count > 30)
        #expect(
            decodeOptions.contains("digest-check") && decodeOptions.contains("jobs") && decodeOptions.contains("accept")
        )

        let config = try EndToEndTests.run(["config"])
        #expect(config.status == 0)
        #expect(Self.keys(Self.text(config.stdout)) == decodeOptions)
        #expect(try optionNames(of: "config") == decodeOptions, "config takes the same options as decode")
        #expect(try optionNames(of: "frame") == decodeOptions, "frame takes the same options as decode")
    }

    /// Each case: a file, the line and key its message must name (`path:line: "key": ` or `path:line: `), and a word
    /// of the reason.
    @Test(arguments: [
        ("{\n  \"chain\": \"json\",\n\n  \"max-dept\": 5\n}", ":4: \"max-dept\": ", "did you mean \"max-depth\""),
        ("{\n  \"strict\": true,\n  \"max-depth\": 0\n}", ":3: \"max-depth\": ", "must be from 1 to 1000000"),
        ("{\n  \"jobs\": 0\n}", ":2: \"jobs\": ", "must be from 1 to 1024"),
        ("{\n  \"strict\": \"yes\"\n}", ":2: \"strict\": ", "expected true or false"),
        ("{\n  \"strict\": true,\n}\n", ":3: ", "invalid JSON"),
        ("", ":1: ", "invalid JSON"),
    ])
    func badFilesExitTwoNamingTheFileTheLineAndTheKey(_ text: String, _ place: String, _ reason: String) throws {
        let files = Files()
        let path = try files.write(text)
        for command in [["--config", path, "samples/capture.http"], ["config", "--config", path]] {
            let result = try EndToEndTests.run(command, stdin: try EndToEndTests.sample("capture.http"))
            #expect(result.status == 2)
            #expect(result.stdout.isEmpty)
            #expect(result.stderr.hasPrefix("respdecode: \(path)\(place)"), "\(result.stderr)")
            #expect(result.stderr.contains(reason), "\(result.stderr)")
            #expect(result.stderr.split(separator: "\n").count == 1, "one line: \(result.stderr)")
        }
    }

    /// A command line of input files alone runs without ArgumentParser (Invocation.plainFiles); `--` in front makes
    /// ArgumentParser parse the same files, with every option at its default. Both must give the same lines, the same
    /// messages and the same exit status: on each framing of the samples, several files, standard input named and
    /// not, and a file that cannot be read.
    @Test(arguments: [
        ["samples/capture.http"], ["samples/documents.http", "samples/pages.http"], ["samples/apis.http"],
        ["samples/traffic.warc.gz"], ["samples/traffic.har"], ["samples/traffic.ndjson"],
        ["samples/images.http", "does/not/exist.http"], ["-"], [],
    ])
    func filesAloneDecodeAsWithEveryOptionAtItsDefault(_ files: [String]) throws {
        let stdin = try EndToEndTests.sample("capture.http")
        let plain = try EndToEndTests.run(files, stdin: stdin)
        let parsed = try EndToEndTests.run(["--"] + files, stdin: stdin)
        #expect(!plain.stdout.isEmpty)
        #expect(plain.stdout == parsed.stdout, "\(files)")
        #expect(plain.status == parsed.status, "\(files)")
        // Log lines start with their time, which may tick between the two runs.
        func messages(_ stderr: String) -> [Substring] {
            stderr.split(separator: "\n").map { $0.drop { $0 != " " } }
        }
        #expect(messages(plain.stderr) == messages(parsed.stderr), "\(plain.stderr)")
        if files.contains("does/not/exist.http") {
            #expect(plain.status == 3)
            #expect(plain.stderr.contains("cannot open does/not/exist.http"), "\(plain.stderr)")
        }
    }

    @Test func anUnreadableFileExitsTwo() throws {
        let result = try EndToEndTests.run(["--config", "does/not/exist.json", "samples/capture.http"])
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr == "respdecode: does/not/exist.json: cannot open: No such file or directory\n")
    }

    @Test(arguments: [
        ["--jobs", "0"], ["--jobs", "1025"], ["--stats-interval", "0"], ["--stats-interval", "86401"],
    ])
    func runtimeOptionsOutOfRangeExitTwo(_ arguments: [String]) throws {
        let result = try EndToEndTests.run(arguments + ["samples/capture.http"])
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.contains(arguments[0]), "\(result.stderr)")
    }

    @Test func runtimeOptionsAreAcceptedAndShownByConfig() throws {
        let result = try EndToEndTests.run([
            "config", "--jobs", "3", "--stats", "--stats-interval", "0.5", "--log-level", "info",
        ])
        #expect(result.status == 0)
        let printed = Self.text(result.stdout)
        for expected in [#""jobs": 3"#, #""stats": true"#, #""stats-interval": 0.5"#, #""log-level": "info""#] {
            #expect(printed.contains(expected), "\(printed)")
        }
        #expect(
            try EndToEndTests.run(["--jobs", "1", "--stats", "--stats-interval", "2", "samples/capture.http"]).status
                == 0)
    }

    /// `config` as the first argument is the subcommand; a file of that name is `./config`, or follows `--` or an
    /// option.
    @Test func aFileNamedConfigIsWrittenAsAPath() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("respdecode-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try EndToEndTests.sample("capture.http").write(to: directory.appendingPathComponent("config"))
        let expected = try EndToEndTests.sample("capture.expected.ndjson")
        for arguments in [["./config"], ["--", "config"], ["--output", "ndjson", "config"]] {
            let process = Process()
            process.executableURL = EndToEndTests.binary
            process.arguments = arguments
            process.currentDirectoryURL = directory
            let output = Pipe()
            process.standardOutput = output
            process.standardError = FileHandle.nullDevice
            try process.run()
            let lines = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0, "\(arguments)")
            // The golden output, with the input named as given.
            let named = Self.text(expected).replacingOccurrences(
                of: #""input":"samples/capture.http""#, with: #""input":"\#(arguments.last ?? "")""#)
            #expect(Self.text(lines) == named, "\(arguments)")
        }
        #expect(Self.keys(Self.text(try EndToEndTests.run(["config"]).stdout)).contains("max-depth"))
    }

    @Test func helpDocumentsTheNewOptionsAndTheSubcommand() throws {
        let help = try EndToEndTests.run(["--help"])
        #expect(help.status == 0)
        let text = Self.text(help.stdout)
        for expected in [
            "--config <file>", "--jobs <n>", "number of cores", "--stats/--no-stats", "--stats-interval <seconds>",
            "--strict/--no-strict", "--digest-check/--no-digest-check", "default: warning)", "SUBCOMMANDS:", "./NAME",
            "(values: auto, http, warc, har,",
        ] {
            #expect(text.contains(expected), "help lacks \(expected)")
        }
        #expect(
            try EndToEndTests.run(["--no-digest-check", "samples/traffic.warc.gz"]).status == 0,
            "the old spelling works")
        let configHelp = try EndToEndTests.run(["help", "config"])
        #expect(configHelp.status == 0)
        #expect(Self.text(configHelp.stdout).contains("USAGE: respdecode config"))
    }
}
