import Foundation
import RespDecodeTestSupport
import Testing

@testable import RespDecode

@Suite("JSONValue reader")
struct JSONValueTests {
    private func parse(_ text: String, maxDepth: Int = 512) -> Result<JSONValue, JSONValue.ParseError> {
        Result { () throws(JSONValue.ParseError) in try JSONValue.parse(text, maxDepth: maxDepth) }
    }

    private func error(_ text: String, maxDepth: Int = 512) -> JSONValue.ParseError? {
        if case .failure(let error) = parse(text, maxDepth: maxDepth) { return error }
        return nil
    }

    @Test func valuesOfEveryKind() throws {
        let value = try JSONValue.parse(#" {"a": [1, -2.5e+3, true, false, null, "x"], "b": {}, "c": []} "#)
        #expect(
            value
                == .object([
                    (
                        key: "a",
                        value: .array([
                            .number("1"), .number("-2.5e+3"), .bool(true), .bool(false), .null, .string("x"),
                        ])
                    ),
                    (key: "b", value: .object([])), (key: "c", value: .array([])),
                ]))
        #expect(value["a"]?.typeName == "an array")
        #expect(value["missing"] == nil)
    }

    @Test func membersKeepTheirOrderAndDuplicates() throws {
        let value = try JSONValue.parse(#"{"z":1,"a":2,"z":3}"#)
        guard case .object(let members) = value else {
            Issue.record("not an object")
            return
        }
        #expect(members.map(\.key) == ["z", "a", "z"])
        #expect(value["z"] == .number("3"), "the last duplicate wins")
    }

    @Test func numbersKeepTheirText() throws {
        #expect(try JSONValue.parse("123456789012345678901234567890") == .number("123456789012345678901234567890"))
        #expect(try JSONValue.parse("0.10") == .number("0.10"))
        #expect(try JSONValue.parse("200").integerValue == 200)
        #expect(try JSONValue.parse("-7").integerValue == -7)
        #expect(try JSONValue.parse("200.0").integerValue == nil)
        #expect(try JSONValue.parse("2e2").integerValue == nil)
        #expect(try JSONValue.parse("99999999999999999999").integerValue == nil)
        #expect(try JSONValue.parse(#""200""#).integerValue == nil)
    }

    @Test func topLevelScalarsAreAccepted() throws {
        #expect(try JSONValue.parse(" true ") == .bool(true))
        #expect(try JSONValue.parse("null") == .null)
        #expect(try JSONValue.parse(#""s""#) == .string("s"))
    }

    @Test func escapesAndSurrogatePairs() throws {
        let value = try JSONValue.parse(#""a\"b\\c\/d\b\f\n\r\t\u0041\u00e9\u20AC\ud83d\ude00""#)
        #expect(value == .string("a\"b\\c/d\u{8}\u{C}\n\r\tAé€😀"))
        #expect(try JSONValue.parse(#""\u0000""#) == .string("\u{0}"))
    }

    @Test func rawUTF8IsCheckedAndKept() throws {
        #expect(try JSONValue.parse("\"héllo €𝄞\"") == .string("héllo €𝄞"))
        for bad in [[0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0xFF], [0x80]] {
            let text: [UInt8] = [0x22, 0x61] + bad.map(UInt8.init) + [0x62, 0x22]
            #expect(throws: JSONValue.ParseError.self) { try JSONValue.parse(text) }
            if case .failure(let error) = Result(catching: { () throws(JSONValue.ParseError) in
                try JSONValue.parse(text)
            }) {
                #expect(error.offset == 2, "\(bad): \(error)")
                #expect(error.kind == .syntax)
            }
        }
    }

    @Test(arguments: [
        "[1,]", #"{"a":1,}"#, "[01]", "[1.]", "[.5]", "[-]", "[+1]", "[1e]", "[0x10]", "[NaN]", "[Infinity]",
        "[tru]", "[nul]", #"{'a':1}"#, #"{"a" 1}"#, #"{a:1}"#, "[1 2]", "[1]]", "[1] x", #"["a\x"]"#, #"["\u12G4"]"#,
        "[\"tab\there\"]", #"["\ud800"]"#, #"["\udc00\ud800"]"#, #"["\ud800\u0041"]"#, "//c\n[]", "[] /*c*/",
    ])
    func rejected(_ text: String) {
        #expect(error(text) != nil, "\(text) was accepted")
    }

    @Test func errorsSayWhereAndWhat() {
        #expect(
            error(#"{"a" 1}"#) == .init(kind: .syntax, message: "expected ':' after object key, found '1'", offset: 5))
        #expect(error("[1,]") == .init(kind: .syntax, message: "expected a JSON value, found ']'", offset: 3))
        #expect(error("[1 2]")?.offset == 3)
        #expect(
            error("[1] x")
                == .init(kind: .syntax, message: "expected end of input after the JSON value, found 'x'", offset: 4))
        #expect(error(#"["a","#)?.kind == .truncated)
        #expect(
            error(#"{"a":"#) == .init(kind: .truncated, message: "expected a JSON value, found end of input", offset: 5)
        )
        #expect(error(#"{"a":"bc"#) == .init(kind: .truncated, message: "unterminated string", offset: 8))
        #expect(error(#"["\ud800"#)?.kind == .truncated, "a high surrogate at the end may yet be completed")
        #expect(error(#"["\ud800"]"#)?.kind == .syntax)
        #expect(error(#"["\ud800"]"#)?.offset == 2)
        #expect(error("tr")?.kind == .truncated)
        #expect(error("trx")?.kind == .syntax)
        #expect(error("")?.kind == .truncated)
        #expect(error("   ")?.kind == .truncated)
        #expect(error("[\"\u{1}\"]")?.offset == 2)
    }

    @Test func depthLimit() {
        #expect(error("[[[1]]]", maxDepth: 3) == nil)
        #expect(error(#"{"a":{"b":[]}}"#, maxDepth: 3) == nil)
        #expect(
            error("[[[[1]]]]", maxDepth: 3)
                == .init(kind: .tooDeep, message: "JSON nesting deeper than the limit of 3 levels", offset: 3))
        #expect(error("[[[[]]]]", maxDepth: 3)?.kind == .tooDeep, "an empty container one level too deep counts")
        let deep = String(repeating: "[", count: 100_000)
        #expect(error(deep)?.kind == .tooDeep)
        let fine = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(error(fine) == nil)
    }

    /// Long strings take the 8-byte path; what stops it (escapes, non-ASCII, the end) must land on every alignment.
    @Test func longStringsOnEveryAlignment() throws {
        for length in [0, 1, 7, 8, 9, 15, 16, 17, 1000] {
            let plain = String(repeating: "abcdefgh", count: length / 8 + 1).prefix(length)
            #expect(try JSONValue.parse("\"\(plain)\"") == .string(String(plain)))
            #expect(try JSONValue.parse("\"\(plain)\\n\(plain)\"") == .string("\(plain)\n\(plain)"))
            #expect(try JSONValue.parse("\"\(plain)é\(plain)\"") == .string("\(plain)é\(plain)"))
            #expect(error("\"\(plain)\u{1F}\"")?.offset == length + 1)
            #expect(error("\"\(plain)")?.kind == .truncated)
        }
        let megabytes = String(repeating: "QUJD", count: 1 << 20)
        let parsed = try JSONValue.parse("[\"\(megabytes)\"]")
        #expect(parsed == .array([.string(megabytes)]))
    }

    // MARK: JSONTestSuite

    private static let parsing = "json/JSONTestSuite/test_parsing"

    private static func suiteFiles(_ prefix: String) throws -> [URL] {
        try Corpora.files(in: parsing, suffix: ".json").filter { $0.lastPathComponent.hasPrefix(prefix) }
    }

    @Test(.enabled(if: Corpora.available, Corpora.skipComment))
    func jsonTestSuiteYFilesParseToTheSameValues() throws {
        let files = try Self.suiteFiles("y_")
        #expect(files.count == 95)
        var failures: [String] = []
        for file in files {
            let bytes = try Corpora.bytes(file)
            do {
                let value = try JSONValue.parse(bytes)
                let reference = try JSONSerialization.jsonObject(with: Data(bytes), options: .fragmentsAllowed)
                if !Self.matches(value, reference) { failures.append("\(file.lastPathComponent): value differs") }
            } catch {
                failures.append("\(file.lastPathComponent): \(error)")
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    @Test(.enabled(if: Corpora.available, Corpora.skipComment))
    func jsonTestSuiteNFilesFail() throws {
        let files = try Self.suiteFiles("n_")
        #expect(files.count == 188)
        let accepted = files.filter { (try? JSONValue.parse(try Corpora.bytes($0))) != nil }
        #expect(accepted.isEmpty, "\(accepted.map(\.lastPathComponent))")
    }

    /// The implementation-defined cases, decided: big numbers are kept as text; lone surrogates, invalid UTF-8,
    /// UTF-16 and a BOM are refused (the framers strip a BOM themselves); 500 levels are within the 512 limit.
    @Test(.enabled(if: Corpora.available, Corpora.skipComment))
    func jsonTestSuiteIFilesAsDecided() throws {
        let files = try Self.suiteFiles("i_")
        #expect(files.count == 35)
        var wrong: [String] = []
        for file in files {
            let name = file.lastPathComponent
            let accepts = name.hasPrefix("i_number_") || name == "i_structure_500_nested_arrays.json"
            let parsed = (try? JSONValue.parse(try Corpora.bytes(file))) != nil
            if parsed != accepts { wrong.append(name) }
        }
        #expect(wrong.isEmpty, "\(wrong)")
    }

    /// Whether a value equals what JSONSerialization made of the same text (numbers compared as doubles, nearly).
    private static func matches(_ value: JSONValue, _ reference: Any) -> Bool {
        switch value {
        case .null: return reference is NSNull
        case .bool(let flag): return (reference as? Bool) == flag
        case .string(let text): return (reference as? String) == text
        case .number(let text):
            // Foundation's conversion is off in the last digits for some texts (-1e-78 → -1.0000000000000005e-78).
            guard let number = (reference as? NSNumber)?.doubleValue, let mine = Double(text) else { return false }
            return number == mine || abs(number - mine) <= 1e-12 * max(abs(number), abs(mine))
        case .array(let elements):
            guard let array = reference as? [Any], array.count == elements.count else { return false }
            return zip(elements, array).allSatisfy { matches($0, $1) }
        case .object(let members):
            guard let object = reference as? [String: Any] else { return false }
            var last: [String: JSONValue] = [:]
            for member in members { last[member.key] = member.value }
            guard last.count == object.count else { return false }
            return last.allSatisfy { key, value in object[key].map { matches(value, $0) } ?? false }
        }
    }
}
