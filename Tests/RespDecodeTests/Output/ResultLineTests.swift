import Foundation
import Testing

@testable import RespDecode

@Suite("Result lines")
struct ResultLineTests {
    func line(_ record: ResponseRecord, input: String? = "in.http", configure: (inout Configuration) -> Void = { _ in })
        -> String
    {
        var configuration = Configuration()
        configure(&configuration)
        let out = OutputBuffer()
        CompoundDecoder(configuration: configuration).writeLine(
            for: .record(record), source: .init(seq: 3, offset: 120, input: input), into: out)
        return String(decoding: out.array, as: UTF8.self)
    }

    @Test func keysComeInTheDocumentedOrder() {
        var headers = HeaderFields()
        headers.append(name: "Content-Type", value: "application/json")
        var record = ResponseRecord(offset: 120, status: 404, headers: headers, body: Array(#"{"a":null}"#.utf8))
        record.url = "https://example.com/a"
        record.method = "GET"
        record.id = "r-1"
        record.trailers = HeaderFields([("X-T", "1"), ("X-T", "2")])
        record.warnings = ["a warning"]
        #expect(
            line(record) == #"{"seq":3,"offset":120,"input":"in.http","id":"r-1","url":"https://example.com/a","#
                + #""method":"GET","status":404,"contentType":"application/json","bodyBytes":10,"decoder":"json","ok":false,"#
                + #""value":{},"error":{"code":"unacceptableStatusCode","urlErrorCode":-1011,"#
                + #""message":"Request failed: not found (404)"},"trailers":{"X-T":"1, 2"},"warnings":["a warning"]}"#
                + "\n")
    }

    @Test func framingFailureLine() {
        let failure = FramingFailure(
            offset: 7, error: RecordError(.truncatedRecord, "input ended", location: .init(offset: 9)), status: 200,
            headers: HeaderFields([("Content-Type", "Text/Plain; charset=utf-8")]), excerpt: Array("ab".utf8), bytes: 30
        )
        let out = OutputBuffer()
        CompoundDecoder(configuration: Configuration()).writeLine(
            for: .failure(failure), source: .init(seq: 0, offset: 7, input: nil), into: out)
        #expect(
            String(decoding: out.array, as: UTF8.self)
                == #"{"seq":0,"offset":7,"status":200,"contentType":"text/plain","decoder":"none","ok":false,"#
                + #""error":{"code":"truncatedRecord","#
                + #""message":"input ended","offset":9},"body":{"bytes":30,"base64":"YWI=","truncated":true}}"# + "\n")
    }

    @Test func emptyFailingBodiesAreLeftOut() throws {
        let record = ResponseRecord(offset: 0, status: 404, headers: HeaderFields([("Content-Type", "text/plain")]))
        let text = line(record)
        #expect(text.contains(#""code":"unacceptableStatusCode""#) && !text.contains(#""body""#))
    }

    @Test func trailerNamesMergeIgnoringCase() {
        var record = ResponseRecord(offset: 0, status: 200, headers: HeaderFields([("Content-Type", "text/plain")]))
        record.trailers = HeaderFields([("X-T", "1"), ("x-t", "2"), ("Y", "3")])
        #expect(line(record).contains(#""trailers":{"X-T":"1, 2","Y":"3"}"#))
    }

    /// The escaper's 8-byte fast path must stop for a byte that needs escaping (or validation) at any position.
    @Test func escapingStopsAtEveryPositionOfAWord() {
        for special: [UInt8] in [[0x22], [0x5C], [0x00], [0x1F], [0x0A], [0x7F], [0xC3, 0xA9]] {
            for position in 0..<17 {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 24)
                bytes.replaceSubrange(position..<position + 1, with: special)
                let out = OutputBuffer()
                #expect(bytes.withUnsafeBufferPointer { out.appendJSONString(utf8: $0) })
                let decoded =
                    try? JSONSerialization.jsonObject(with: Data(out.array), options: [.fragmentsAllowed]) as? String
                #expect(decoded.map { Array($0.utf8) } == bytes, "special \(special) at \(position)")
            }
        }
    }

    @Test func failingBodiesAreCapped() throws {
        let body = String(repeating: "x", count: 100)
        let record = ResponseRecord(
            offset: 0, status: 500, headers: HeaderFields([("Content-Type", "application/octet-stream")]),
            body: Array(body.utf8))
        let text = line(record) { $0.limits.maxErrorBodyBytes = 10 }
        let object = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        let kept = try #require(object["body"] as? [String: Any])
        #expect(kept["bytes"] as? Int == 100)
        #expect(kept["truncated"] as? Bool == true)
        #expect(Data(base64Encoded: kept["base64"] as? String ?? "") == Data(String(repeating: "x", count: 10).utf8))
    }

    @Test func unsupportedContentEncodingIsAnError() throws {
        let headers = HeaderFields([("Content-Type", "application/json"), ("Content-Encoding", "gzip")])
        let text = line(ResponseRecord(offset: 0, status: 200, headers: headers, body: [0x1F, 0x8B]))
        #expect(text.contains(#""contentEncoding":["gzip"]"#))
        #expect(text.contains(#""code":"contentDecodingFailed""#))
        let identity = HeaderFields([("Content-Type", "application/json"), ("Content-Encoding", "identity")])
        #expect(
            line(ResponseRecord(offset: 0, status: 200, headers: identity, body: Array("[]".utf8))).contains(
                #""value":[]"#))
    }

    @Test func aLineKeepsAtMostMaxWarningsTheLastCountingTheRest() {
        var record = ResponseRecord(offset: 0, status: 204, headers: HeaderFields())
        record.warnings = (1...20).map { "w\($0)" }
        #expect(
            line(record) { $0.limits.maxWarnings = 3 }.hasSuffix(
                #""warnings":["w1","w2","18 more warnings (--max-warnings)"]}"# + "\n"))
        #expect(line(record) { $0.limits.maxWarnings = 20 }.hasSuffix(#""w19","w20"]}"# + "\n"))
        #expect(
            line(record) { $0.limits.maxWarnings = 1 }.hasSuffix(
                #""warnings":["20 more warnings (--max-warnings)"]}"# + "\n"))
    }

    @Test func keepNullsAndDepthComeFromTheConfiguration() {
        let headers = HeaderFields([("Content-Type", "application/json")])
        let record = ResponseRecord(offset: 0, status: 200, headers: headers, body: Array(#"{"a":null}"#.utf8))
        #expect(line(record) { $0.decoding.options.stripNulls = false }.contains(#""value":{"a":null}"#))
        let deep = ResponseRecord(offset: 0, status: 200, headers: headers, body: Array("[[[1]]]".utf8))
        #expect(line(deep) { $0.limits.maxDepth = 2 }.contains(#""code":"limitExceeded""#))
    }

    @Test func suffixTypesAndRawValues() {
        let problem = HeaderFields([("Content-Type", "application/problem+json")])
        #expect(
            line(ResponseRecord(offset: 0, status: 200, headers: problem, body: Array("{}".utf8))).contains(
                #""decoder":"json""#))
        // `+xml` is the structured suffix here, so the xml decoder takes it, not json.
        let bare = HeaderFields([("Content-Type", "application/json+xml")])
        #expect(
            line(ResponseRecord(offset: 0, status: 200, headers: bare, body: Array("{}".utf8))).contains(
                #""decoder":"xml""#))
        let neither = HeaderFields([("Content-Type", "application/jsonp")])
        #expect(
            line(ResponseRecord(offset: 0, status: 200, headers: neither, body: Array("{}".utf8))).contains(
                #""decoder":"raw""#))
        // A type no decoder takes (text types go to the text decoder): the raw decoder's text or base64.
        let text = HeaderFields([("Content-Type", "application/octet-stream")])
        #expect(
            line(ResponseRecord(offset: 0, status: 200, headers: text, body: Array("é\u{1}\"".utf8)))
                .contains(#""value":{"text":"é\u0001\""}"#))
        #expect(
            line(ResponseRecord(offset: 0, status: 200, headers: text, body: [0xFF, 0x00]))
                .contains(#""value":{"base64":"/wA="}"#))
    }

    @Test(arguments: [
        ([UInt8](), ""), (Array("f".utf8), "Zg=="), (Array("fo".utf8), "Zm8="), (Array("foo".utf8), "Zm9v"),
        (Array("foob".utf8), "Zm9vYg=="), ([0, 255, 128, 7], "AP+ABw=="),
    ])
    func base64(_ bytes: [UInt8], _ expected: String) {
        let out = OutputBuffer()
        out.appendBase64(bytes)
        #expect(String(decoding: out.array, as: UTF8.self) == expected)
    }

    @Test(
        arguments: [
            [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0xE2, 0x82], [0x80],
            [0xF8, 0x88, 0x80, 0x80, 0x80],
        ] as [[UInt8]])
    func invalidUTF8IsNotWrittenAsText(_ bytes: [UInt8]) {
        let out = OutputBuffer()
        out.append(ascii: "prefix")
        #expect(bytes.withUnsafeBufferPointer { out.appendJSONString(utf8: $0) } == false)
        #expect(String(decoding: out.array, as: UTF8.self) == "prefix")
    }

    @Test func prettyPrinting() {
        let out = OutputBuffer()
        let compact = Array(#"{"a":[1,{"b":"x,:{"}],"c":{},"d":[]}"#.utf8)
        compact.withUnsafeBufferPointer { PrettyPrinter.append($0, to: out) }
        #expect(
            String(decoding: out.array, as: UTF8.self) == """
                {
                  "a": [
                    1,
                    {
                      "b": "x,:{"
                    }
                  ],
                  "c": {},
                  "d": []
                }

                """)
    }

    @Test func byteCounts() {
        #expect(ByteCount.parse("4096") == 4096)
        #expect(ByteCount.parse("64KiB") == 65536)
        #expect(ByteCount.parse("64MiB") == 64 << 20)
        #expect(ByteCount.parse("1g") == 1 << 30)
        #expect(ByteCount.parse("12x") == nil)
        #expect(ByteCount.parse("99999999999999999999G") == nil)
    }
}
