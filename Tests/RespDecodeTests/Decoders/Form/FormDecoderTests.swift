import Foundation
import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// The form decoder (docs/output.md#form, docs/decoding.md#form): the WHATWG urlencoded parser, grouped by name.
@Suite("Form decoder")
struct FormDecoderTests {
    static let type = "application/x-www-form-urlencoded"

    static func decode(_ body: String, configure: (inout DecoderOptions) -> Void = { _ in }) -> Decoded {
        Decoded(FormBodyDecoder(), body, mimeType: type, configure: configure)
    }

    @Test("the issue's example")
    func issueExample() {
        let decoded = Self.decode("a=1&b=x%20y")
        #expect(decoded.text == #"{"a":["1"],"b":["x y"]}"#)
        #expect(decoded.warnings.isEmpty)
    }

    @Test("names grouped in first-seen order, values in input order")
    func grouping() {
        #expect(Self.decode("b=1&a=2&b=3&c&a=4").text == #"{"b":["1","3"],"a":["2","4"],"c":[""]}"#)
        // A repeated name with an empty value, and one whose value is longer than the name.
        #expect(Self.decode("k=&k=a-long-value&k").text == #"{"k":["","a-long-value",""]}"#)
    }

    @Test(
        "the parser's rules",
        arguments: [
            ("a+b=c+d", #"{"a b":["c d"]}"#),
            ("a%2Bb=%2b", #"{"a+b":["+"]}"#),
            ("a=b=c", #"{"a":["b=c"]}"#),
            ("=x", #"{"":["x"]}"#),
            ("=", #"{"":[""]}"#),
            ("&", "{}"),
            ("&&a&&", #"{"a":[""]}"#),
            ("%", #"{"%":[""]}"#),
            ("%4", #"{"%4":[""]}"#),
            ("%zz%41", #"{"%zzA":[""]}"#),
            ("%%41", #"{"%A":[""]}"#),
            ("q=%22%5C%0A%00", #"{"q":["\"\\\n\u0000"]}"#),
            ("caf%C3%A9=%E2%82%AC", #"{"café":["€"]}"#),
        ])
    func rules(body: String, expected: String) {
        #expect(Self.decode(body).text == expected)
    }

    @Test("invalid UTF-8 becomes U+FFFD, counted in one warning")
    func replacement() {
        let decoded = Self.decode("%FF=%C2x&%ED%A0%80")
        #expect(decoded.text == #"{"�":["�x"],"���":[""]}"#)
        #expect(decoded.warnings == ["5 invalid byte sequences in UTF-8 replaced by U+FFFD"])
        // Raw bytes too, not only percent-encoded ones.
        let raw = Decoded(FormBodyDecoder(), [0x61, 0x3D, 0xFF], mimeType: Self.type)
        #expect(raw.text == #"{"a":["�"]}"#)
        #expect(raw.warnings == ["1 invalid byte sequence in UTF-8 replaced by U+FFFD"])
    }

    @Test("the charset parameter is ignored")
    func charsetIgnored() {
        var context = DecodingContext(mimeType: Self.type, charset: "iso-8859-1", options: DecoderOptions())
        let out = OutputBuffer()
        let wrote = try? Array("a=%E9".utf8).withUnsafeBufferPointer {
            try FormBodyDecoder().decode($0, context: &context, into: out)
        }
        #expect(wrote == true)
        #expect(String(decoding: out.bytes, as: UTF8.self) == #"{"a":["�"]}"#)
    }

    @Test("empty bodies have no value")
    func empty() {
        #expect(Self.decode("").text == nil)
        #expect(Self.decode(" ").text == nil)
        #expect(Self.decode("  ").text == #"{"  ":[""]}"#)
    }

    @Test("maxFormFields and maxValueBytes")
    func limits() {
        let body = (0..<10).map { "f\($0)=\($0)" }.joined(separator: "&") + "&&&"
        #expect(Self.decode(body) { $0.limits.maxFormFields = 10 }.error == nil)
        let over = Self.decode(body + "&x") { $0.limits.maxFormFields = 10 }
        #expect(over.error?.code == .limitExceeded)
        #expect(over.error?.message.contains("maxFormFields") == true)
        let large = Self.decode("a=" + String(repeating: "%01", count: 1000)) { $0.limits.maxValueBytes = 2000 }
        #expect(large.error?.code == .limitExceeded)
        #expect(large.error?.message.contains("maxValueBytes") == true)
    }

    // MARK: Corpora

    /// web-platform-tests' urlencoded-parser-data.json: every case's pairs, exactly, grouped by name.
    @Test(
        "WPT urlencoded parser data: all 35 cases",
        .enabled(if: Corpora.available, Comment(rawValue: Corpora.skipMessage)))
    func wpt() throws {
        let data = try Corpora.bytes("urlencoded/wpt/urlencoded-parser-data.json")
        let cases = try JSONValue.parse(data).elements
        #expect(cases.count == 35)
        for test in cases {
            let input = try #require(test["input"]?.stringValue)
            let pairs = try #require(test["output"]).elements.map {
                ($0.elements[0].stringValue ?? "?", $0.elements[1].stringValue ?? "?")
            }
            let decoded = Self.decode(input)
            if input.isEmpty {
                #expect(decoded.text == nil, "an empty body has no value")
                continue
            }
            #expect(decoded.value == Self.grouped(pairs), "input \(input.debugDescription): \(decoded.text ?? "none")")
            // The charset the request/response variants declare changes nothing.
            for charset in ["windows-1252", "shift_jis"] {
                var context = DecodingContext(mimeType: Self.type, charset: charset, options: DecoderOptions())
                let out = OutputBuffer()
                _ = try Array(input.utf8).withUnsafeBufferPointer {
                    try FormBodyDecoder().decode($0, context: &context, into: out)
                }
                #expect(String(decoding: out.bytes, as: UTF8.self) == decoded.text)
            }
        }
    }

    /// Pairs grouped as the decoder groups them: by name in first-seen order.
    static func grouped(_ pairs: [(String, String)]) -> JSONValue {
        var order: [String] = []
        var values: [String: [String]] = [:]
        for (name, value) in pairs {
            // Compare names by their bytes, not by String's canonical equivalence.
            let key = name.utf8.map { String($0, radix: 16) }.joined(separator: ",")
            if values[key] == nil {
                order.append(name)
                values[key] = []
            }
            values[key]!.append(value)
        }
        return .form(
            order.map { name in (name, values[name.utf8.map { String($0, radix: 16) }.joined(separator: ",")]!) })
    }

    /// busboy's urlencoded cases: the UTF-8 ones exactly; its two non-UTF-8 charsets decode as UTF-8 here (WHATWG),
    /// and its field limits are ours to refuse (limitExceeded) or do not exist (name and value sizes: the whole
    /// pairs, case 005's).
    @Test(
        "busboy urlencoded cases",
        .enabled(if: Corpora.available, Comment(rawValue: Corpora.skipMessage)))
    func busboy() throws {
        let lines = try String(contentsOf: Corpora.url("urlencoded/busboy/cases/cases.jsonl"), encoding: .utf8)
            .split(separator: "\n")
        #expect(lines.count == 25)
        for line in lines {
            let test = try JSONValue.parse(String(line))
            let file = try #require(test["file"]?.stringValue)
            let body = try Corpora.bytes("urlencoded/busboy/cases/\(file)")
            let pairs = try #require(test["expected"]).elements.map {
                ($0.elements[0].stringValue ?? "?", $0.elements[1].stringValue ?? "?")
            }
            let limits = test["limits"]
            let fields = limits?["fields"]?.integerValue
            let decoded = Decoded(FormBodyDecoder(), body, mimeType: Self.type) { options in
                if let fields { options.limits.maxFormFields = fields }
            }
            switch file {
            case "012.body":
                // UTF-16LE bytes read as UTF-8: the NULs stay, D8 and DE are each one U+FFFD.
                #expect(decoded.value == .form([("f\u{0}o\u{0}o\u{0}", ["=\u{FFFD}\u{0}\u{FFFD}!\u{0}"])]))
                #expect(decoded.warnings == ["2 invalid byte sequences in UTF-8 replaced by U+FFFD"])
            case "013.body":
                #expect(decoded.value == .form([("foo", ["<\u{FFFD}:^\u{FFFD}"])]))
                #expect(decoded.warnings == ["2 invalid byte sequences in UTF-8 replaced by U+FFFD"])
            case _ where fields != nil:
                #expect(decoded.error?.code == .limitExceeded, "\(file)")
            case _ where limits != nil:
                #expect(decoded.value == .form([("foo", ["bar"]), ("baz", ["bla"])]), "\(file)")
            case "025.body":
                #expect(body.isEmpty && decoded.text == nil)
            default:
                #expect(decoded.value == Self.grouped(pairs), "\(file): \(decoded.text ?? "none")")
                #expect(decoded.warnings.isEmpty)
            }
        }
    }
}

/// The form decoder's table of names (docs/decoding.md#form): grouping must not depend on how the names hash.
@Suite("Form name table")
struct FormNameTableTests {
    /// 5,000 distinct names, each looked up twice, with the Dictionary fallback forced at the first collision and
    /// without it: every name keeps its first group.
    @Test("groups survive growth and the fallback", arguments: [1, 64])
    func groups(probeLimit: Int) {
        let text = Array((0..<5000).map { "name-\($0)" }.joined().utf8)
        text.withUnsafeBufferPointer { bytes in
            var names: [FormParser.Name] = []
            var table = FormParser.NameTable()
            table.probeLimit = probeLimit
            var offsets: [(Int, Int)] = []
            var start = 0
            for index in 0..<5000 {
                let count = "name-\(index)".utf8.count
                offsets.append((start, count))
                start += count
            }
            for (index, (start, count)) in offsets.enumerated() {
                let name = FormParser.Name(start: bytes.baseAddress! + start, count: count)
                #expect(table.group(of: name, in: &names) == index)
            }
            for (index, (start, count)) in offsets.enumerated().reversed() {
                let name = FormParser.Name(start: bytes.baseAddress! + start, count: count)
                #expect(table.group(of: name, in: &names) == index)
            }
            #expect(names.count == 5000)
            #expect((table.fallback != nil) == (probeLimit == 1))
        }
    }

    @Test("the default chain sends each new type to its decoder, not to text or raw")
    func chain() {
        let chain = CompoundDecoder.Settings().chain
        for (type, decoder) in [
            ("application/x-www-form-urlencoded", "form"), ("text/event-stream", "sse"),
            ("application/x-ndjson", "ndjson"), ("application/ndjson", "ndjson"), ("application/jsonl", "ndjson"),
            ("application/x-jsonlines", "ndjson"), ("application/json-seq", "ndjson"), ("text/plain", "text"),
        ] {
            #expect(chain.first { $0.accepts(type) }?.decoder.name == decoder, "\(type)")
        }
    }
}
