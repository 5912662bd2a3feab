import Foundation
import Testing

// Nested in the documents' suite, which is serialized: the hostile suites measure CPU time, so they run one at a
// time, not beside each other (in CI, with the suites in parallel, CBOR's 64 MB took 1.07 s against 0.65 s alone).
extension HostileDocumentTests {
    /// Hostile event streams through the real binary, each within 1 s of CPU time and 256 MB resident
    /// (``HostileDocumentTests/runLimited(input:name:arguments:)``), one line, nothing on stderr (docs/decoding.md#sse).
    @Suite("Hostile event streams")
    struct HostileSSETests {
        static let megabyte = 1 << 20

        static func run(_ body: Data, name: String, arguments: [String] = []) throws -> [String: Any] {
            try HostileDocumentTests.runLimited(
                body, type: "text/event-stream", name: name, arguments: ["--chain", "sse"] + arguments)
        }

        static func events(_ line: [String: Any]) -> [[String: Any]]? {
            (line["value"] as? [String: Any])?["events"] as? [[String: Any]]
        }

        static func code(_ line: [String: Any]) -> String? { (line["error"] as? [String: Any])?["code"] as? String }

        @Test("one data line of 60 MB")
        func hugeLine() throws {
            let body =
                Data("data: ".utf8) + Data(repeating: UInt8(ascii: "x"), count: 60 * Self.megabyte) + Data("\n\n".utf8)
            let line = try Self.run(body, name: "60 MB data line")
            #expect((Self.events(line)?.first?["text"] as? String)?.utf8.count == 60 * Self.megabyte)
        }

        @Test("one data line of 60 MB that starts like JSON")
        func hugeJSONLikeLine() throws {
            let body =
                Data("data: [\"".utf8) + Data(repeating: UInt8(ascii: "x"), count: 60 * Self.megabyte)
                + Data("\n\n".utf8)
            let line = try Self.run(body, name: "60 MB unterminated JSON string")
            #expect(Self.events(line)?.first?["text"] != nil)
        }

        @Test("60 MB of '[' in one data line: deeper than maxDepth, kept as text")
        func deepData() throws {
            let body =
                Data("data: ".utf8) + Data(repeating: UInt8(ascii: "["), count: 60 * Self.megabyte) + Data("\n\n".utf8)
            let line = try Self.run(body, name: "60 MB of [ in data")
            #expect(Self.events(line)?.first?["text"] != nil)
            #expect((line["warnings"] as? [String])?.first?.contains("maxDepth") == true)
        }

        @Test("a JSON data line nested 511 deep, 100,000 times")
        func manyDeepEvents() throws {
            let event = "data: " + String(repeating: "[", count: 250) + String(repeating: "]", count: 250) + "\n\n"
            let body = Data(String(repeating: event, count: 100_000).utf8)
            let line = try Self.run(body, name: "100,000 events nested 250 deep")
            #expect(Self.events(line)?.count == 100_000)
        }

        @Test("millions of tiny events and comments: past maxEvents")
        func tinyEvents() throws {
            for (piece, name) in [
                ("data:x\n\n", "7M events"), (":\n", "30M comments"), ("data\r\r", "10M empty events"),
            ] {
                let body = Data(String(repeating: piece, count: 60 * Self.megabyte / piece.utf8.count).utf8)
                let line = try Self.run(body, name: name)
                #expect(Self.code(line) == "limitExceeded", "\(name)")
            }
        }

        @Test("millions of lines that never dispatch")
        func noDispatch() throws {
            let cases: [(String, String)] = [
                ("data:x\n", "8M data lines of one event"), ("\n", "60M blank lines"), ("\r", "60M CRs"),
                ("id:1\n", "12M id lines"), ("retry:1\n", "7M retry lines"), ("event:e\n", "7M event lines"),
                ("x\n", "30M unknown fields"),
            ]
            for (piece, name) in cases {
                let body = Data(String(repeating: piece, count: 60 * Self.megabyte / piece.utf8.count).utf8)
                let line = try Self.run(body, name: name)
                #expect(Self.events(line)?.isEmpty == true, "\(name)")
            }
        }

        @Test("60 MB of invalid UTF-8 in data")
        func invalidUTF8() throws {
            let body = Data("data: ".utf8) + Data(repeating: 0xFF, count: 20 * Self.megabyte) + Data("\n\n".utf8)
            let line = try Self.run(body, name: "20 MB of 0xFF in data")
            #expect(line["ok"] as? Bool == true)
            #expect((line["warnings"] as? [String])?.count == 1)
        }

        @Test("20 MB of invalid UTF-8 inside a JSON string in data: decoded to 60 MB and read as JSON")
        func invalidUTF8InJSONString() throws {
            let body =
                Data("data: [\"".utf8) + Data(repeating: 0xFF, count: 20 * Self.megabyte) + Data("\"]\n\n".utf8)
            let line = try Self.run(body, name: "20 MB of 0xFF in a JSON string in data")
            let data = Self.events(line)?.first?["data"] as? [String]
            #expect(data?.first?.unicodeScalars.count == 20 * Self.megabyte)
            #expect((line["warnings"] as? [String])?.count == 1)
        }
    }
}
