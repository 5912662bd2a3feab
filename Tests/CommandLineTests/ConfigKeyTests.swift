import RespDecode
import Testing

@testable import respdecode

/// How a config file's values become arguments, and how `respdecode config` writes them.
@Suite("Config keys")
struct ConfigKeyTests {
    private func arguments(_ shape: ConfigKey.Shape, _ value: ConfigFile.Value) throws(ConfigFileError) -> [String] {
        let entry = ConfigFile.Entry(key: "k", value: value, line: 4)
        return try ConfigKey("k", shape) { _ in .null }.arguments(
            for: entry, in: ConfigFile(path: "c.json", entries: [entry]))
    }

    @Test func eachShapeBecomesTheArgumentsItStandsFor() throws {
        #expect(try arguments(.flag, .bool(true)) == ["--k"])
        #expect(try arguments(.flag, .bool(false)) == ["--no-k"])
        #expect(try arguments(.value, .string("64MiB")) == ["--k=64MiB"])
        #expect(try arguments(.value, .number("-5")) == ["--k=-5"], "a negative number is a value, not an option")
        #expect(try arguments(.list, .strings(["json", "xml"])) == ["--k=json,xml"])
        #expect(try arguments(.list, .array([.string("200-299"), .number("304")])) == ["--k=200-299,304"])
        #expect(try arguments(.list, .string("all")) == ["--k=all"])
        #expect(
            try arguments(
                .decoderLists, .object([.init("json", .strings(["a/b", "c/*"])), .init("xml", .string("d/e"))]))
                == ["--k=json=a/b,c/*", "--k=xml=d/e"])
        #expect(try arguments(.decoderLists, .object([])) == [])
        for shape in [ConfigKey.Shape.flag, .value, .list, .decoderLists] {
            #expect(try arguments(shape, .null) == [], "null keeps the default")
        }
    }

    @Test func aValueOfTheWrongTypeIsAnErrorOnItsLine() {
        #expect(
            throws: ConfigFileError(
                .wrongType, path: "c.json", line: 4, key: "k",
                message: "expected true or false, found a number")
        ) { try arguments(.flag, .number("1")) }
        #expect(
            throws: ConfigFileError(
                .wrongType, path: "c.json", line: 4, key: "k",
                message: "expected a string or a number, found a boolean")
        ) { try arguments(.value, .bool(true)) }
        #expect(
            throws: ConfigFileError(
                .wrongType, path: "c.json", line: 4, key: "k",
                message: "expected an array of strings, found an array holding null")
        ) { try arguments(.list, .array([.null])) }
        #expect(
            throws: ConfigFileError(
                .wrongType, path: "c.json", line: 4, key: "k",
                message: "expected an array of strings, or one comma-separated string, found a boolean")
        ) {
            try arguments(.decoderLists, .object([.init("json", .bool(false))]))
        }
    }

    @Test func sizesAreWrittenWithTheLargestExactUnit() {
        #expect(ByteSize(64 << 10).configValue == .string("64KiB"))
        #expect(ByteSize(64 << 20).configValue == .string("64MiB"))
        #expect(ByteSize(1 << 40).configValue == .string("1024GiB"))
        #expect(ByteSize(8_000_000).configValue == .integer(8_000_000))
        #expect(ByteSize(1).configValue == .integer(1))
    }

    @Test func keysAreUniqueAndNamedLikeTheirOptions() {
        let names = DecodeOptions.configKeys.map(\.name)
        #expect(Set(names).count == names.count)
        for name in names {
            #expect(name.allSatisfy { $0.isLowercase || $0 == "-" }, "\(name)")
        }
    }

    @Test func misspeltKeysFindTheirNeighbour() {
        #expect(Invocation.editDistance("stict", "strict") == 1)
        #expect(Invocation.editDistance("max-dept", "max-depth") == 1)
        #expect(Invocation.editDistance("", "abc") == 3)
        #expect(Invocation.editDistance("abc", "") == 3)
        #expect(Invocation.editDistance("chain", "chain") == 0)
    }
}
