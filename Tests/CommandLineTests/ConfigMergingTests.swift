import ArgumentParser
import Foundation
import RespDecode
import Testing

@testable import respdecode

/// A config file in the temporary directory for the length of `body`, which gets its path.
func withConfigFile<T>(_ text: String, _ body: (String) throws -> T) throws -> T {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent("respdecode-\(UUID().uuidString).json")
    try Data(text.utf8).write(to: url)
    defer { try? FileManager.default.removeItem(at: url) }
    return try body(url.path)
}

/// The options of the command `arguments` parse to, with its config file merged in.
func options(_ arguments: [String]) throws -> DecodeOptions {
    let command = try Invocation.parse(arguments)
    return try #require(command as? any DecodeOptionsCommand, "\(type(of: command))").options
}

/// The config file error `arguments` give, or nil (recording an issue) when they give none or another error.
func configError(_ arguments: [String]) -> ConfigFileError? {
    do {
        _ = try Invocation.parse(arguments)
        Issue.record("\(arguments) parsed")
    } catch let error as ConfigFileError {
        return error
    } catch {
        Issue.record("\(arguments): not a config file error: \(RespDecodeCommand.message(for: error))")
    }
    return nil
}

/// `--config FILE` merged under the command line: values of every shape, precedence, subcommands, and errors put on
/// the key and line that cause them.
@Suite("Config file merging")
struct ConfigMergingTests {
    @Test func aFileSetsOptionsOfEveryShape() throws {
        let configuration = try withConfigFile(
            """
            {
              "input": "http",
              "warc-types": ["response", "request"],
              "digest-check": false,
              "chain": "json,xml",
              "accept": {"json": ["text/*", "application/json"], "xml": "text/xml"},
              "status-codes": ["200-299", 304],
              "keep-nulls": true,
              "scale": 2.5,
              "max-body-bytes": 1048576,
              "max-header-bytes": "1KiB",
              "max-depth": 64,
              "strict": true,
              "log-level": "debug",
              "jobs": 3,
              "stats": true,
              "stats-interval": 0.25
            }
            """
        ) { path in
            let options = try options(["--config", path])
            #expect(options.strict)
            #expect(options.logLevel.configValue == .string("debug"))
            return try options.makeConfiguration()
        }
        #expect(configuration.input == .http)
        #expect(configuration.warcTypes == ["response", "request"])
        #expect(!configuration.verifyDigests)
        #expect(configuration.decoding.chain.map(\.decoder.name) == ["json", "xml"])
        #expect(configuration.decoding.chain[0].acceptableTypes.map(\.description) == ["text/*", "application/json"])
        #expect(configuration.decoding.chain[1].acceptableTypes.map(\.description) == ["text/xml"])
        #expect(configuration.decoding.acceptableStatusCodes.description == "200-299,304")
        #expect(!configuration.decoding.options.stripNulls)
        #expect(configuration.decoding.options.imageScale == 2.5)
        #expect(configuration.limits.maxBodyBytes == 1 << 20)
        #expect(configuration.limits.maxHeaderBytes == 1024)
        #expect(configuration.limits.maxDepth == 64)
        #expect(configuration.jobs == 3)
        #expect(configuration.stats)
        #expect(configuration.statsInterval == 0.25)
    }

    @Test func theCommandLineOverridesTheFile() throws {
        let text = """
            {
              "max-depth": 64, "strict": true, "sniff": false, "output": "pretty",
              "accept": {"json": ["text/json"], "xml": ["text/xml"]}, "warc-types": "all"
            }
            """
        try withConfigFile(text) { path in
            // A scalar given on the command line wins, before or after --config.
            #expect(try options(["--max-depth", "7", "--config", path]).maxDepth == 7)
            #expect(try options(["--config", path, "--max-depth=8"]).maxDepth == 8)
            // A flag the file turns on can be turned off, and one it turns off turned on.
            #expect(try options(["--config", path, "--no-strict"]).strict == false)
            #expect(try options(["--config", path, "--sniff"]).sniff == true)
            // --accept replaces the file's list for the decoders it names, and only for them.
            let configuration = try options(["--config", path, "--accept", "json=application/json"]).makeConfiguration()
            let types = Dictionary(
                uniqueKeysWithValues: configuration.decoding.chain.map {
                    ($0.decoder.name, $0.acceptableTypes.map(\.description))
                })
            #expect(types["json"] == ["application/json"])
            #expect(types["xml"] == ["text/xml"])
            #expect(configuration.warcTypes == nil)
            #expect(configuration.outputStyle == .pretty)
            #expect(configuration.limits.maxDepth == 64)
        }
    }

    @Test func nullAndAnEmptyFileKeepTheDefaults() throws {
        let defaults = try options([]).effectiveConfigFile()
        for text in ["{}", #"{"scale": null, "strict": null, "accept": null, "max-depth": null}"#] {
            let printed = try withConfigFile(text) { try options(["--config", $0]).effectiveConfigFile() }
            #expect(printed == defaults, "\(text)")
        }
    }

    @Test func everySubcommandWithTheDecodeOptionsReadsTheFile() throws {
        try withConfigFile(#"{"max-depth": 9}"#) { path in
            let config = try Invocation.parse(["config", "--config", path])
            #expect((config as? ConfigCommand)?.options.maxDepth == 9)
            let decode = try Invocation.parse(["decode", "--config", path, "in.http"])
            #expect((decode as? DecodeCommand)?.options.maxDepth == 9)
            #expect((decode as? DecodeCommand)?.inputs.files == ["in.http"])
            let bare = try Invocation.parse(["in.http", "--config", path, "-"])
            #expect((bare as? DecodeCommand)?.options.maxDepth == 9)
            #expect((bare as? DecodeCommand)?.inputs.files == ["in.http", "-"])
        }
    }

    @Test func aFileNamedLikeASubcommandIsDecodedWhenWrittenAsAPathOrAfterAnOption() throws {
        #expect(try Invocation.parse(["config"]) is ConfigCommand)
        #expect((try Invocation.parse(["./config"]) as? DecodeCommand)?.inputs.files == ["./config"])
        #expect((try Invocation.parse(["--", "config"]) as? DecodeCommand)?.inputs.files == ["config"])
        #expect((try Invocation.parse(["--strict", "config"]) as? DecodeCommand)?.inputs.files == ["config"])
        #expect((try Invocation.parse(["decode", "config"]) as? DecodeCommand)?.inputs.files == ["config"])
    }

    /// Each case: a file, and the message it must give (`FILE` stands for its path).
    @Test(arguments: [
        // A bad value, checked by makeConfiguration as on the command line; the option's name is not repeated.
        (
            "{\n  \"chain\": \"json\",\n  \"strict\": true,\n\n  \"max-depth\": 0\n}",
            "FILE:5: \"max-depth\": must be from 1 to 1000000"
        ),
        ("{\"jobs\": 0}", "FILE:1: \"jobs\": must be from 1 to 1024"),
        (
            "{\n\"max-body-bytes\": \"lots\"}",
            "FILE:2: \"max-body-bytes\": 'lots' is not a size from 1 byte to 1TiB, like 4096, 64KiB or 64MiB"
        ),
        (
            "{\n\"stats-interval\": -1}",
            "FILE:2: \"stats-interval\": must be a number of seconds above 0 and at most 86400"
        ),
        (
            "{\n\"input\": \"carrier-pigeon\"}",
            "FILE:2: \"input\": The value 'carrier-pigeon' is invalid for '--input <format>'. Please provide one of 'auto', 'http', 'warc', 'har' or 'ndjson'."
        ),
        (
            "{\n\"log-level\": \"loud\"}",
            "FILE:2: \"log-level\": The value 'loud' is invalid for '--log-level <level>'. Please provide one of the following: trace, debug, info, notice, warning, error, critical"
        ),
        // A value ArgumentParser itself refuses.
        ("{\n\n\"max-depth\": 1.5}", "FILE:3: \"max-depth\": The value '1.5' is invalid for '--max-depth <n>'"),
        // Wrong types.
        ("{\n\"strict\": \"yes\"}", "FILE:2: \"strict\": expected true or false, found a string"),
        ("{\n\"max-depth\": [5]}", "FILE:2: \"max-depth\": expected a string or a number, found an array"),
        (
            "{\n\"chain\": [\"json\", true]}",
            "FILE:2: \"chain\": expected an array of strings, found an array holding a boolean"
        ),
        (
            "{\n\"chain\": {}}",
            "FILE:2: \"chain\": expected an array of strings, or one comma-separated string, found an object"
        ),
        (
            "{\n\"accept\": [\"json=text/*\"]}",
            "FILE:2: \"accept\": expected an object of decoder names to lists of MIME types, found an array"
        ),
        // Unknown keys.
        ("{\n\"stict\": true}", "FILE:2: \"stict\": no option has this name; did you mean \"strict\"?"),
        (
            "{\n\"filenames\": [\"a\"]}",
            "FILE:2: \"filenames\": no option has this name ('respdecode config' prints every key)"
        ),
        // Near an option's name (--fields): the suggestion.
        ("{\n\"files\": [\"a\"]}", "FILE:2: \"files\": no option has this name; did you mean \"fields\"?"),
        ("{\n\"config\": \"other.json\"}", "FILE:2: \"config\": a config file cannot name another"),
        // Two keys that clash: the second one is blamed.
        (
            "{\n\"chain\": [\"json\"],\n\"accept\": {\"xml\": [\"text/xml\"]}\n}",
            "FILE:3: \"accept\": names 'xml', which is not in --chain"
        ),
        (
            "{\n\"accept\": {\"xml\": [\"text/xml\"]},\n\"chain\": [\"json\"]\n}",
            "FILE:3: \"chain\": --accept names 'xml', which is not in --chain"
        ),
        // The format itself.
        ("{\n\"strict\": true,\n}", "FILE:3: invalid JSON: expected a string key, found '}'"),
        ("[]", "FILE:1: expected a JSON object of options, found an array"),
        ("{\"strict\": true,\n\"strict\": false}", "FILE:2: \"strict\": appears twice (first on line 1)"),
    ])
    func fileErrorsNameTheFileTheLineAndTheKey(_ text: String, _ expected: String) throws {
        try withConfigFile(text) { path in
            let error = configError(["--config", path])
            #expect(error?.description == expected.replacingOccurrences(of: "FILE", with: path))
        }
    }

    @Test func aClashWithTheCommandLineIsPutOnTheFileKeyAndSaysSo() throws {
        try withConfigFile("{\n\"max-depth\": 5,\n\"accept\": {\"xml\": \"text/xml\"}\n}") { path in
            let error = configError(["--config", path, "--chain", "json"])
            #expect(error?.code == .invalidValue)
            #expect(
                error?.description
                    == "\(path):3: \"accept\": together with the command line: names 'xml', which is not in --chain")
        }
    }

    @Test func aBadValueInTheFileIsAnErrorEvenWhenTheCommandLineOverridesIt() throws {
        try withConfigFile("{\n\"max-depth\": 0\n}") { path in
            #expect(
                configError(["--config", path, "--max-depth", "5"])?.description
                    == "\(path):2: \"max-depth\": must be from 1 to 1000000")
        }
    }

    @Test func theCommandLineIsCheckedBeforeTheFileIsRead() {
        // Its own errors are usage errors as before, even when the file does not exist.
        #expect(throws: (any Error).self) {
            try Invocation.parse(["--max-depth", "0", "--config", "/nonexistent/c.json"])
        }
        do {
            _ = try Invocation.parse(["--max-depth", "0", "--config", "/nonexistent/c.json"])
        } catch {
            #expect(!(error is ConfigFileError))
            #expect(RespDecodeCommand.message(for: error) == "--max-depth must be from 1 to 1000000")
        }
        #expect(
            configError(["--config", "/nonexistent/c.json"])?.description
                == "/nonexistent/c.json: cannot open: No such file or directory")
    }

    /// `respdecode config`'s output, given back with --config, makes the same configuration: compared as the output
    /// again (every key), for the defaults and for options of every shape set away from them.
    @Test(arguments: [
        [],
        [
            "--input", "warc", "--warc-types", "all", "--no-digest-check", "--strict-digests", "--sniff", "--chain",
            "xml,json",
            "--accept", "json=text/*,application/json", "--status-codes", "200-299,304,400", "--strict-types",
            "--keep-nulls",
            "--xml-keep-whitespace", "--inflate", "--scale", "0.3", "--max-image-pixels", "12345", "--max-jpeg-scans",
            "7",
            "--max-jpeg-scan-pixels", "99999", "--max-image-memory", "3MiB", "--max-image-chunk-bytes", "1000",
            "--output", "pretty", "--max-header-bytes", "1G", "--max-body-bytes", "12345", "--max-decoded-body-bytes",
            "2k",
            "--max-content-codings", "0", "--max-depth", "3", "--max-plist-objects", "8", "--max-value-bytes", "1",
            "--max-error-body-bytes", "1024", "--max-warnings", "3", "--strict", "--log-level", "trace", "--jobs",
            "1024", "--stats",
            "--stats-interval", "86400",
        ],
        ["--warc-types", "continuation,warcinfo", "--scale", "1e-3", "--stats-interval", "0.1", "--chain", "image"],
    ])
    func theConfigOutputReadsBackAsTheSameConfiguration(_ arguments: [String]) throws {
        let printed = try options(arguments).effectiveConfigFile()
        let again = try withConfigFile(printed) { try options(["--config", $0]).effectiveConfigFile() }
        #expect(again == printed)
        // and the file's values are the ones printed, not the defaults
        if !arguments.isEmpty { #expect(printed != (try options([]).effectiveConfigFile())) }
    }
}

/// `serve`'s own keys ("listen", "max-connections", "idle-timeout"): read by serve only, checked like its options.
@Suite("Config file keys of serve")
struct ServeConfigKeyTests {
    @Test func serveReadsItsOwnKeysAndTheCommandLineWins() throws {
        try withConfigFile(#"{"listen": "tcp:127.0.0.1:9", "max-connections": 3, "idle-timeout": 1.5, "max-depth": 9}"#)
        {
            path in
            let fromFile = try #require(try Invocation.parse(["serve", "--config", path]) as? ServeCommand)
            #expect(fromFile.server.listen == "tcp:127.0.0.1:9")
            #expect(fromFile.server.maxConnections == 3)
            #expect(fromFile.server.idleTimeout == 1.5)
            #expect(fromFile.options.maxDepth == 9)
            let overridden = try #require(
                try Invocation.parse(["serve", "--listen", "unix:s.sock", "--config", path, "--max-connections", "5"])
                    as? ServeCommand)
            #expect(overridden.server.listen == "unix:s.sock")
            #expect(overridden.server.maxConnections == 5)
        }
    }

    @Test(arguments: [
        (
            "{\n\"listen\": \"nowhere\"}",
            "FILE:2: \"listen\": 'nowhere' is not an address: expected unix:PATH or tcp:HOST:PORT"
        ),
        ("{\n\n\"max-connections\": 0}", "FILE:3: \"max-connections\": must be from 1 to 1000000"),
        ("{\"idle-timeout\": true}", "FILE:1: \"idle-timeout\": expected a string or a number, found a boolean"),
        ("{\"lisen\": \"unix:s\"}", "FILE:1: \"lisen\": no option has this name; did you mean \"listen\"?"),
    ])
    func badServeKeysAreErrorsOnTheirLine(_ text: String, _ expected: String) throws {
        try withConfigFile(text) { path in
            #expect(
                configError(["serve", "--config", path])?.description
                    == expected.replacingOccurrences(of: "FILE", with: path))
        }
    }

    @Test func otherCommandsRefuseServesKeys() throws {
        try withConfigFile("{\n\"listen\": \"unix:s.sock\"}") { path in
            for arguments in [["--config", path], ["config", "--config", path]] {
                #expect(
                    configError(arguments)?.description
                        == "\(path):2: \"listen\": only 'respdecode serve' reads this key")
            }
        }
    }
}
