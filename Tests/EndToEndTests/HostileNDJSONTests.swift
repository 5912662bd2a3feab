import Foundation
import Testing

// Nested in the documents' suite, which is serialized: the hostile suites measure CPU time, so they run one at a
// time, not beside each other (in CI, with the suites in parallel, CBOR's 64 MB took 1.07 s against 0.65 s alone).
extension HostileDocumentTests {
    /// Hostile NDJSON and JSON text sequence bodies through the real binary, each within 1 s of CPU time and 256 MB
    /// resident (``HostileDocumentTests/runLimited(input:name:arguments:)``), one line, nothing on stderr
    /// (docs/decoding.md#ndjson).
    @Suite("Hostile NDJSON bodies")
    struct HostileNDJSONTests {
        static let megabyte = 1 << 20

        static func run(_ body: Data, type: String = "application/x-ndjson", name: String) throws -> [String: Any] {
            try HostileDocumentTests.runLimited(body, type: type, name: name, arguments: ["--chain", "ndjson"])
        }

        static func code(_ line: [String: Any]) -> String? { (line["error"] as? [String: Any])?["code"] as? String }

        static func repeated(_ piece: String, count: Int) -> Data { Data(String(repeating: piece, count: count).utf8) }

        @Test("10 million blank lines, and 60 MB of whitespace lines")
        func blankLines() throws {
            for (body, name) in [
                (Self.repeated("\n", count: 10_000_000), "10M blank lines"),
                (Self.repeated(" \t\r\n", count: 15 * Self.megabyte), "60 MB of whitespace lines"),
            ] {
                let line = try Self.run(body, name: name)
                #expect((line["value"] as? [Any])?.isEmpty == true, "\(name)")
            }
        }

        @Test("a million values, the most maxNDJSONValues allows, and one more")
        func manyValues() throws {
            let line = try Self.run(Self.repeated("1\n", count: 1_000_000), name: "1M values")
            #expect((line["value"] as? [Any])?.count == 1_000_000)
            let over = try Self.run(Self.repeated("1\n", count: 1_000_001), name: "1M + 1 values")
            #expect(Self.code(over) == "limitExceeded")
        }

        @Test("60 MB of '[' on one line, and a bad last line after 30 MB of good ones")
        func badLines() throws {
            let deep = try Self.run(Data(repeating: UInt8(ascii: "["), count: 60 * Self.megabyte), name: "60 MB of [")
            #expect(Self.code(deep) == "limitExceeded")
            let late = try Self.run(
                Self.repeated("{\"k\":[1,2,3]}\n", count: 900_000) + Data("{".utf8), name: "bad last line")
            #expect(Self.code(late) == "invalidNDJSON")
            #expect((late["error"] as? [String: Any])?["line"] as? Int == 900_001)
        }

        @Test("json-seq: 60 MB of RS, and 10 million invalid texts: past maxNDJSONValues")
        func sequences() throws {
            let separators = try Self.run(
                Data(repeating: 0x1E, count: 60 * Self.megabyte), type: "application/json-seq", name: "60 MB of RS")
            #expect((separators["value"] as? [Any])?.isEmpty == true)
            let invalid = try Self.run(
                Self.repeated("\u{1E}{\n", count: 10_000_000), type: "application/json-seq", name: "10M invalid texts")
            #expect(Self.code(invalid) == "limitExceeded")
            let invalidAtLimit = try Self.run(
                Self.repeated("\u{1E}{\n", count: 1_000_000), type: "application/json-seq", name: "1M invalid texts")
            #expect((invalidAtLimit["value"] as? [Any])?.isEmpty == true)
            #expect((invalidAtLimit["warnings"] as? [String])?.count == 16)
            let truncated = try Self.run(
                Self.repeated("\u{1E}1", count: 1_000_000), type: "application/json-seq", name: "1M truncated numbers")
            #expect((truncated["value"] as? [Any])?.isEmpty == true)
            #expect((truncated["warnings"] as? [String])?.count == 16)
        }
    }
}
