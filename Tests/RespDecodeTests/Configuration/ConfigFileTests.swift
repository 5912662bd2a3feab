import Foundation
import Testing

@testable import RespDecode

/// The config file format: entries with the lines of their keys, the refusals that need no knowledge of the options,
/// and the pretty-printed form `respdecode config` writes.
@Suite("Config file")
struct ConfigFileTests {
    private func parse(_ text: String) throws(ConfigFileError) -> ConfigFile {
        try ConfigFile(path: "c.json", bytes: Array(text.utf8))
    }

    private func error(_ text: String) -> ConfigFileError? {
        do {
            _ = try parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func entriesKeepFileOrderValuesAndTheLinesOfTheirKeys() throws {
        let file = try parse(
            """
            {
              "chain": ["json", "xml"],
              "accept": {"json": ["text/*"],
                         "xml": "text/xml"},

              "max-depth": 7, "strict": true,
              "scale":
                null,
              "note\\"s": "a \\"quoted\\" {[,"
            }
            """)
        #expect(file.entries.map(\.key) == ["chain", "accept", "max-depth", "strict", "scale", "note\"s"])
        #expect(file.entries.map(\.line) == [2, 3, 6, 6, 7, 9])
        #expect(file.entries[0].value == .strings(["json", "xml"]))
        #expect(
            file.entries[1].value == .object([.init("json", .strings(["text/*"])), .init("xml", .string("text/xml"))]))
        #expect(file.entries[2].value == .number("7"))
        #expect(file.entries[3].value == .bool(true))
        #expect(file.entries[4].value == .null)
    }

    @Test func anEmptyObjectHasNoEntriesAndAByteOrderMarkIsSkipped() throws {
        #expect(try parse("{}").entries.isEmpty)
        let file = try ConfigFile(path: "c.json", bytes: [0xEF, 0xBB, 0xBF] + Array("{\"a\":1}".utf8))
        #expect(file.entries == [.init(key: "a", value: .number("1"), line: 1)])
    }

    @Test func invalidJSONNamesTheLineOfTheProblem() {
        let trailingComma = error("{\n  \"a\": 1,\n}\n")
        #expect(trailingComma?.code == .invalidJSON)
        #expect(trailingComma?.line == 3)
        #expect(
            trailingComma?.description.hasPrefix("c.json:3: invalid JSON: ") == true,
            "\(String(describing: trailingComma))")

        let unterminated = error("{\n\"a\": \"b")
        #expect(unterminated?.code == .invalidJSON)
        #expect(unterminated?.line == 2)
        #expect(error("")?.line == 1)
        #expect(error("{\"a\": 1} {")?.code == .invalidJSON)
        #expect(
            error("{\"a\": [[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]}")?.code == .invalidJSON, "deeper than maxDepth")
    }

    @Test func theTopLevelMustBeAnObject() {
        let array = error("\n\n  [\"--strict\"]")
        #expect(array?.code == .notAnObject)
        #expect(array?.description == "c.json:3: expected a JSON object of options, found an array")
    }

    @Test func aKeyGivenTwiceIsRefusedAtItsSecondLine() {
        let duplicate = error("{\n\"max-depth\": 1,\n\"strict\": true,\n\"max-depth\": 2}")
        #expect(duplicate?.code == .duplicateKey)
        #expect(duplicate?.description == #"c.json:4: "max-depth": appears twice (first on line 2)"#)
    }

    @Test func unreadableFilesNameThePathAndTheReason() throws {
        let missing = "/nonexistent-\(getpid())/c.json"
        do {
            _ = try ConfigFile.read(path: missing)
            Issue.record("read a file that does not exist")
        } catch {
            #expect(error.code == .unreadable)
            #expect(error.line == nil)
            #expect(error.description == "\(missing): cannot open: No such file or directory")
        }
        do {
            _ = try ConfigFile.read(path: FileManager.default.temporaryDirectory.path)
            Issue.record("read a directory")
        } catch {
            #expect(error.description.hasSuffix("cannot read: Is a directory"), "\(error)")
        }
    }

    @Test func readingAFileGivesItsEntries() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("respdecode-config-\(getpid()).json")
        try Data("{\n  \"strict\": false\n}\n".utf8).write(to: url)
        defer { try? FileManager.default.removeItem(at: url) }
        let file = try ConfigFile.read(path: url.path)
        #expect(file.path == url.path)
        #expect(file.entries == [.init(key: "strict", value: .bool(false), line: 2)])
    }

    @Test func errorsAboutAnEntryNameTheFileLineAndKey() throws {
        let file = try parse("{\n\n  \"max-depth\": 0\n}")
        let error = file.error(.invalidValue, "must be from 1 to 1000000", at: file.entries[0])
        #expect(error.description == #"c.json:3: "max-depth": must be from 1 to 1000000"#)
        #expect(error.code.description == "invalidValue")
    }

    @Test func renderingIsStablePrettyJSONThatReadsBackTheSame() throws {
        let fields: [ConfigFile.Field] = [
            .init("input", .string("auto")),
            .init("chain", .strings(["json", "xml"])),
            .init("accept", .object([])),
            .init("types", .object([.init("json", .strings(["text/*", "a/\"b\""]))])),
            .init("max-depth", .integer(512)),
            .init("scale", .double(0.5)),
            .init("strict", .bool(false)),
            .init("stats-interval", .null),
        ]
        let text = ConfigFile.render(fields)
        #expect(
            text == """
                {
                  "input": "auto",
                  "chain": ["json", "xml"],
                  "accept": {},
                  "types": {
                    "json": ["text/*", "a/\\"b\\""]
                  },
                  "max-depth": 512,
                  "scale": 0.5,
                  "strict": false,
                  "stats-interval": null
                }

                """)
        let back = try parse(text)
        #expect(back.entries.map { ConfigFile.Field($0.key, $0.value) } == fields)
        #expect(back.entries.map(\.line) == [2, 3, 4, 5, 8, 9, 10, 11])
    }
}
