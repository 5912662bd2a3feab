import Foundation
import Testing

@testable import RespDecode

/// The ndjson body decoder (docs/output.md#ndjson, docs/decoding.md#ndjson): NDJSON, JSON Lines and RFC 7464 JSON
/// text sequences as one array.
@Suite("NDJSON body decoder")
struct NDJSONDecoderTests {
    static func decode(
        _ body: String, type: String = "application/x-ndjson", configure: (inout DecoderOptions) -> Void = { _ in }
    ) -> Decoded {
        Decoded(NDJSONBodyDecoder(), body, mimeType: type, configure: configure)
    }

    @Test("lines as an array: blank lines skipped, CRLF, nulls stripped as JSON's are")
    func lines() {
        let decoded = Self.decode("{\"a\":1,\"b\":null}\r\n\n   \t\r\n[null, 2]\n\"s\"\n12\n")
        #expect(decoded.text == #"[{"a":1},[2],"s",12]"#)
        #expect(Self.decode("[null]\nnull") { $0.stripNulls = false }.text == "[[null],null]")
        #expect(Self.decode("\n\n\n").text == "[]")
        #expect(Self.decode("").text == nil)
        #expect(Self.decode("1").text == "[1]")
    }

    @Test(
        "every type it accepts reads lines",
        arguments: [
            "application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines",
        ])
    func types(type: String) {
        #expect(Self.decode("1\n2\n", type: type).text == "[1,2]")
        #expect(NDJSONBodyDecoder().defaultAcceptableTypes.contains { $0.matches(type) })
    }

    @Test("a bad line is invalidNDJSON, located by line, column and byte")
    func badLine() throws {
        let decoded = Self.decode("{\"a\":1}\n\n[1,2\n{}\n")
        let error = try #require(decoded.error)
        #expect(error.code == .invalidNDJSON)
        #expect(error.message == "line 3: expected ',' or ']' after array element, found end of input")
        #expect(error.location == RecordError.Location(offset: 13, line: 3, column: 5))
        let second = try #require(Self.decode("1\n  {x}").error)
        #expect(second.message == "line 2: expected a string key or '}', found 'x'")
        #expect(second.location == RecordError.Location(offset: 5, line: 2, column: 4))
        // Two texts on one line are one bad line.
        #expect(Self.decode("1 2\n").error?.code == .invalidNDJSON)
        // NDJSON is UTF-8: a line the JSON decoder would read as UTF-16 is an error.
        let utf16 = try #require(
            Decoded(NDJSONBodyDecoder(), [0x31, 0x0A, 0x00, 0x31], mimeType: "application/x-ndjson").error)
        #expect(utf16.code == .invalidNDJSON && utf16.location == RecordError.Location(offset: 2, line: 2, column: 1))
    }

    @Test("limits: maxNDJSONValues, maxDepth")
    func limits() throws {
        let body = String(repeating: "1\n\n", count: 10)
        #expect(Self.decode(body) { $0.limits.maxNDJSONValues = 10 }.text?.count == 21)
        let over = try #require(Self.decode(body + "2") { $0.limits.maxNDJSONValues = 10 }.error)
        #expect(over.code == .limitExceeded && over.message.contains("maxNDJSONValues"))
        #expect(over.location?.line == 21)
        let deep = try #require(
            Self.decode("1\n" + String(repeating: "[", count: 11)) { $0.limits.maxDepth = 10 }.error)
        #expect(deep.code == .limitExceeded && deep.message.hasPrefix("line 2: "))
    }

    // MARK: RFC 7464

    static let seq = "application/json-seq"

    @Test("json-seq: RS-prefixed texts")
    func sequence() {
        let decoded = Self.decode(
            "\u{1E}{\"a\":1}\n\u{1E}[1,\n2]\n\u{1E}\u{1E}\"s\"\n\u{1E}3\n\u{1E}true\n", type: Self.seq)
        #expect(decoded.text == #"[{"a":1},[1,2],"s",3,true]"#)
        #expect(decoded.warnings.isEmpty)
    }

    @Test("json-seq: a top-level number or literal without whitespace after it may be truncated and is dropped")
    func truncated() {
        let decoded = Self.decode("\u{1E}12\u{1E}{}\n\u{1E}tru\u{1E}\"s\"\u{1E}12\n", type: Self.seq)
        #expect(decoded.text == #"[{},"s",12]"#)
        #expect(decoded.warnings.count == 2)
        #expect(decoded.warnings.allSatisfy { $0.contains("RFC 7464 §2.3") })
    }

    @Test("json-seq: a text that does not parse is skipped with a warning, the rest read")
    func invalidSkipped() {
        let decoded = Self.decode("\u{1E}{\"a\":\n\u{1E}[1]\n", type: Self.seq)
        #expect(decoded.text == "[[1]]")
        #expect(decoded.warnings == ["JSON text 1 (byte 1) skipped: expected a JSON value, found end of input"])
        let many = Self.decode(String(repeating: "\u{1E}{\n", count: 40), type: Self.seq)
        #expect(many.text == "[]")
        #expect(many.warnings.count == DecoderOptions().limits.maxWarnings + 1)
        #expect(many.warnings.last == "24 more JSON texts skipped")
    }
}
