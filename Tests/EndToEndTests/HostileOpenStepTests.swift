import Foundation
import Testing

// Nested in the documents' suite, which is serialized: the hostile suites measure CPU time, so they run one at a
// time, not beside each other (in CI, with the suites in parallel, CBOR's 64 MB took 1.07 s against 0.65 s alone).
extension HostileDocumentTests {
    /// Hostile OpenStep property lists through the real binary (docs/decoding.md#openstep-property-lists), each within
    /// 1 s of CPU time and 256 MB resident (``HostileDocumentTests/runLimited(input:name:arguments:)``), one line,
    /// nothing on stderr.
    @Suite("Hostile OpenStep plists")
    struct HostileOpenStepTests {
        static func code(of line: [String: Any]) -> String? { (line["error"] as? [String: Any])?["code"] as? String }

        @Test("a million nested '(': the depth limit, not the stack")
        func deepNesting() throws {
            let body = Data(repeating: UInt8(ascii: "("), count: 1_000_000)
            let line = try HostileDocumentTests.runLimited(body, type: "application/x-plist", name: "openstep 1M (")
            #expect(Self.code(of: line) == "limitExceeded")
        }

        @Test("64 MB of an unterminated /* comment")
        func unterminatedComment() throws {
            var body = Data("( a, /*".utf8)
            body.append(Data(repeating: UInt8(ascii: "x"), count: 64_000_000))
            let line = try HostileDocumentTests.runLimited(body, type: "application/x-plist", name: "openstep 64 MB /*")
            #expect(Self.code(of: line) == "invalidPropertyList")
        }

        @Test("a 64 MB quoted string without its end")
        func unterminatedString() throws {
            var body = Data("{ a = \"".utf8)
            body.append(Data(repeating: UInt8(ascii: "y"), count: 64_000_000))
            let line = try HostileDocumentTests.runLimited(
                body, type: "application/x-plist", name: "openstep 64 MB string")
            #expect(Self.code(of: line) == "invalidPropertyList")
        }

        @Test("a 64 MB quoted string of escapes without its end")
        func unterminatedEscapedString() throws {
            var body = Data("( \"".utf8)
            body.append(Data(String(repeating: "\\n", count: 32_000_000).utf8))
            let line = try HostileDocumentTests.runLimited(
                body, type: "application/x-plist", name: "openstep 64 MB escapes")
            #expect(["invalidPropertyList", "limitExceeded"].contains(Self.code(of: line)))
        }

        @Test("62 MB of UTF-16 CJK text: 93 MB as UTF-8, refused before it is made")
        func wideText() throws {
            var body = Data([0xFF, 0xFE])
            body.append(("( \"" + String(repeating: "中", count: 31_000_000) + "\" )").data(using: .utf16LittleEndian)!)
            let line = try HostileDocumentTests.runLimited(
                body, type: "application/x-plist", name: "openstep 62 MB UTF-16")
            #expect(Self.code(of: line) == "limitExceeded")
        }

        @Test("10 million tiny dictionary entries")
        func manyEntries() throws {
            let body = Data(("{" + String(repeating: "a=b;", count: 10_000_000) + "}").utf8)
            let line = try HostileDocumentTests.runLimited(
                body, type: "application/x-plist", name: "openstep 10M entries")
            #expect(Self.code(of: line) == "limitExceeded")
            // A .strings table of 10 million `a;` entries, the objects limit raised past them: the value limit stops it.
            let table = Data(String(repeating: "a;", count: 10_000_000).utf8)
            let tableLine = try HostileDocumentTests.runLimited(
                table, type: "application/x-plist", name: "openstep 10M strings entries",
                arguments: ["--max-plist-objects", "100000000"])
            #expect(Self.code(of: tableLine) == "limitExceeded")
        }
    }
}
