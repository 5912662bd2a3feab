import Foundation
import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// The sse decoder (docs/output.md#sse, docs/decoding.md#sse): the HTML standard's event-stream interpretation.
@Suite("SSE decoder")
struct SSEDecoderTests {
    static let type = "text/event-stream"

    static func decode(_ body: String, configure: (inout DecoderOptions) -> Void = { _ in }) -> Decoded {
        Decoded(SSEBodyDecoder(), body, mimeType: type, configure: configure)
    }

    @Test("events, JSON data and text data")
    func basics() {
        let decoded = Self.decode("data: {\"a\":1,\"b\":null}\n\nevent: end\nid: 7\ndata: [DONE]\n\n")
        #expect(
            decoded.text
                == #"{"events":[{"event":"message","data":{"a":1}},{"event":"end","text":"[DONE]","id":"7"}]}"#)
        #expect(decoded.warnings.isEmpty)
        // --keep-nulls keeps them in data too.
        #expect(Self.decode("data: [null]\n\n") { $0.stripNulls = false }.text?.contains(#""data":[null]"#) == true)
    }

    @Test(
        "data that is one JSON text is a value; anything else is text",
        arguments: [
            ("data: 42", #"{"event":"message","data":42}"#),
            ("data:  \"s\" ", #"{"event":"message","data":"s"}"#),
            ("data: null", #"{"event":"message","data":null}"#),
            ("data: {\"a\":\ndata: 1}", #"{"event":"message","data":{"a":1}}"#),
            ("data: {\"a\":1}{}", #"{"event":"message","text":"{\"a\":1}{}"}"#),
            ("data: [DONE]", #"{"event":"message","text":"[DONE]"}"#),
            ("data", #"{"event":"message","text":""}"#),
            ("data: \u{FEFF}1", #"{"event":"message","text":"\#u{FEFF}1"}"#),
            ("data: 1\ndata: 2", #"{"event":"message","text":"1\n2"}"#),
            ("data: {'a':1}", #"{"event":"message","text":"{'a':1}"}"#),
        ])
    func dataKinds(line: String, event: String) {
        #expect(Self.decode(line + "\n\n").text == #"{"events":["# + event + "]}")
    }

    @Test("the last event ID persists; an empty id resets it; an id with NUL is ignored")
    func ids() {
        let decoded = Self.decode("id: 1\ndata: a\n\ndata: b\n\nid: 2\u{0}\ndata: c\n\nid\ndata: d\n\n")
        let ids = decoded.value?["events"]?.elements.map { $0["id"]?.stringValue ?? "" }
        #expect(ids == ["1", "1", "1", ""])
    }

    @Test("retry: digits only, the last valid one, without leading zeros")
    func retry() {
        #expect(Self.decode("retry: 0300\n\n").text == #"{"events":[],"retry":300}"#)
        #expect(Self.decode("retry: 000\nretry: 12x\nretry:\nretry: -1\n").text == #"{"events":[],"retry":0}"#)
        let huge = String(repeating: "9", count: 40)
        #expect(Self.decode("retry: \(huge)\n").text == #"{"events":[],"retry":\#(huge)}"#)
    }

    @Test("comments, line ends and the BOM")
    func lines() {
        let decoded = Self.decode("\u{FEFF}: one\r\ndata:x\rdata:y\r\n\r:two\n\n")
        #expect(decoded.text == #"{"events":[{"event":"message","text":"x\ny"}],"comments":[" one","two"]}"#)
        // Only one BOM is dropped.
        #expect(Self.decode("\u{FEFF}\u{FEFF}data: x\n\n").text == #"{"events":[]}"#)
    }

    @Test("an event without its blank line is discarded, with a warning")
    func incomplete() {
        for body in ["data: a\n\ndata: b\n", "data: a\n\ndata: b", "data: a\n\nevent: x"] {
            let decoded = Self.decode(body)
            #expect(decoded.text == #"{"events":[{"event":"message","text":"a"}]}"#, "\(body.debugDescription)")
            #expect(decoded.warnings.count == 1 && decoded.warnings[0].contains("discarded"))
        }
        #expect(Self.decode("data: a\n\n: trailing comment").warnings.isEmpty)
    }

    @Test("invalid UTF-8 becomes U+FFFD, counted in one warning")
    func replacement() {
        let body: [UInt8] = Array("event: e".utf8) + [0xFF] + Array("\ndata: ".utf8) + [0xC3, 0x28] + [0x0A, 0x0A]
        let decoded = Decoded(SSEBodyDecoder(), body, mimeType: Self.type)
        #expect(decoded.text == #"{"events":[{"event":"e�","text":"�("}]}"#)
        #expect(decoded.warnings == ["2 invalid byte sequences in UTF-8 replaced by U+FFFD"])
    }

    static func decode(bytes body: [UInt8], configure: (inout DecoderOptions) -> Void = { _ in }) -> Decoded {
        Decoded(SSEBodyDecoder(), body, mimeType: type, configure: configure)
    }

    /// A body of UTF-8 strings and raw bytes, in order: `body("data: ", [0xFF], "\n\n")`.
    static func body(_ parts: Part...) -> [UInt8] {
        parts.flatMap { part in
            switch part {
            case .text(let text): Array(text.utf8)
            case .bytes(let bytes): bytes
            }
        }
    }

    enum Part: ExpressibleByStringLiteral, ExpressibleByArrayLiteral {
        case text(String)
        case bytes([UInt8])
        init(stringLiteral value: String) { self = .text(value) }
        init(arrayLiteral elements: UInt8...) { self = .bytes(elements) }
    }

    @Test("data is decoded before the JSON try: a bad byte inside a JSON string is U+FFFD in the value")
    func replacementInJSONString() {
        let decoded = Self.decode(bytes: Self.body("data: {\"a\":\"", [0xFF], "\"}\n\n"))
        #expect(decoded.text == #"{"events":[{"event":"message","data":{"a":"\#u{FFFD}"}}]}"#)
        #expect(decoded.warnings == ["1 invalid byte sequence in UTF-8 replaced by U+FFFD"])
        #expect(decoded.value?["events"]?.elements.first?["data"]?["a"]?.stringValue == "\u{FFFD}")
    }

    @Test("multi-line data: bad bytes in its JSON strings, one U+FFFD per maximal subpart")
    func replacementInMultiLineJSON() {
        // E2 82 is one truncated sequence (one U+FFFD); F0 80 is two subparts (F0 takes no 80 after it).
        let decoded = Self.decode(
            bytes: Self.body(
                "event: delta\ndata: {\"a\":\"x", [0xE2, 0x82], "y\",\ndata: \"b\":[\"", [0xF0, 0x80], "\", null]}\n\n")
        )
        #expect(
            decoded.text
                == #"{"events":[{"event":"delta","data":{"a":"x\#u{FFFD}y","b":["\#u{FFFD}\#u{FFFD}"]}}]}"#)
        #expect(decoded.warnings == ["3 invalid byte sequences in UTF-8 replaced by U+FFFD"])
    }

    @Test(
        "a bad byte outside a JSON string: text, with the U+FFFD in it, counted once",
        arguments: [
            (SSEDecoderTests.body("data: {\"a\":1", [0xFF], "}"), "{\"a\":1\u{FFFD}}"),
            (SSEDecoderTests.body("data: [", [0xC0, 0xAF], "]"), "[\u{FFFD}\u{FFFD}]"),
            (SSEDecoderTests.body("data: \"", [0xFF], "\" 1"), "\"\u{FFFD}\" 1"),
            (SSEDecoderTests.body("data: [\"", [0xFF], "\"\ndata: ]x"), "[\"\u{FFFD}\"\n]x"),
        ])
    func replacementMakingText(data: [UInt8], text: String) {
        let decoded = Self.decode(bytes: data + Array("\n\n".utf8))
        let event = decoded.value?["events"]?.elements.first
        #expect(event?["text"]?.stringValue == text && event?["data"] == nil, "\(decoded.text ?? "no value")")
        let count = text.unicodeScalars.filter { $0 == "\u{FFFD}" }.count
        let word = count == 1 ? "sequence" : "sequences"
        #expect(decoded.warnings == ["\(count) invalid byte \(word) in UTF-8 replaced by U+FFFD"])
    }

    @Test("event types, IDs and comments are decoded the same way, each counted once; a NUL still voids an id")
    func replacementElsewhere() {
        // ED A0 80 (a surrogate) is three subparts: ED takes no A0 after it.
        let decoded = Self.decode(
            bytes: Self.body(
                ":c", [0xFF], "\nid: i", [0xED, 0xA0, 0x80], "\nevent: e", [0xC3], "\ndata: 1\n\nid: ", [0xFF, 0x00],
                "\ndata: 2\n\n"))
        let id = "i\u{FFFD}\u{FFFD}\u{FFFD}"
        #expect(
            decoded.text
                == #"{"events":[{"event":"e\#u{FFFD}","data":1,"id":"\#(id)"},"#
                + #"{"event":"message","data":2,"id":"\#(id)"}],"comments":["c\#u{FFFD}"]}"#)
        // The comment's, the event type's and the ID's (once, though two events carry it); not the ignored id's.
        #expect(decoded.warnings == ["5 invalid byte sequences in UTF-8 replaced by U+FFFD"])
    }

    @Test("decoded data too deep or too large: one maxDepth warning, a limit error")
    func replacementLimits() {
        let nested = Self.body(
            .text("data: " + String(repeating: "[", count: 20) + "\""), [0xFF],
            .text("\"" + String(repeating: "]", count: 20) + "\n\n"))
        let deep = Self.decode(bytes: nested) { $0.limits.maxDepth = 10 }
        #expect(deep.value?["events"]?.elements.first?["text"]?.stringValue?.unicodeScalars.count == 43)
        #expect(deep.warnings.count == 2 && deep.warnings.first?.contains("maxDepth") == true)
        #expect(deep.warnings.last == "1 invalid byte sequence in UTF-8 replaced by U+FFFD")
        // 100 bad bytes in a JSON string decode to 300: past a maxValueBytes of 200, as JSON and as text.
        let data = Self.body("data: [\"", .bytes([UInt8](repeating: 0xFF, count: 100)), "\"]\n\n")
        let large = Self.decode(bytes: data) { $0.limits.maxValueBytes = 200 }
        #expect(large.error?.code == .limitExceeded)
        let fits = Self.decode(bytes: data) { $0.limits.maxValueBytes = 400 }
        #expect(fits.value?["events"]?.elements.first?["data"]?.elements.first?.stringValue?.count == 100)
        #expect(fits.warnings == ["100 invalid byte sequences in UTF-8 replaced by U+FFFD"])
    }

    @Test("limits: maxEvents, maxDepth in data, maxValueBytes")
    func limits() {
        let events = String(repeating: "data: 1\n\n", count: 10)
        #expect(Self.decode(events) { $0.limits.maxEvents = 10 }.error == nil)
        let over = Self.decode(events + ": c\n") { $0.limits.maxEvents = 10 }
        #expect(over.error?.code == .limitExceeded && over.error?.message.contains("maxEvents") == true)
        let deep = Self.decode(
            "data: " + String(repeating: "[", count: 20) + String(repeating: "]", count: 20) + "\n\n"
        ) {
            $0.limits.maxDepth = 10
        }
        #expect(deep.value?["events"]?.elements.first?["text"]?.stringValue?.count == 40)
        #expect(deep.warnings.count == 1 && deep.warnings[0].contains("maxDepth"))
        let large = Self.decode("data: " + String(repeating: "\u{1}", count: 1000) + "\n\n") {
            $0.limits.maxValueBytes = 2000
        }
        #expect(large.error?.code == .limitExceeded)
    }

    @Test("empty bodies have no value; a body of only blank lines has no events")
    func empty() {
        #expect(Self.decode("").text == nil)
        #expect(Self.decode("\n\n\n").text == #"{"events":[]}"#)
    }

    /// An OpenAI-style chat completion stream (written here in the style of its documented format): every chunk is a
    /// value, nulls stripped, and the closing `[DONE]` stays a string.
    @Test("an OpenAI-style stream reads as values")
    func openAI() throws {
        let chunk = { (delta: String, finish: String) in
            "data: {\"id\":\"chatcmpl-7\",\"object\":\"chat.completion.chunk\",\"created\":1732590000,"
                + "\"model\":\"gpt-4o-mini\",\"system_fingerprint\":null,\"choices\":[{\"index\":0,\"delta\":\(delta),"
                + "\"logprobs\":null,\"finish_reason\":\(finish)}]}\n\n"
        }
        let body =
            chunk(#"{"role":"assistant","content":""}"#, "null") + chunk(#"{"content":"Hel"}"#, "null")
            + chunk(#"{"content":"lo!"}"#, "null") + chunk("{}", #""stop""#) + "data: [DONE]\n\n"
        let decoded = Self.decode(body)
        let events = try #require(decoded.value?["events"]).elements
        #expect(events.count == 5)
        let text = events.prefix(4).compactMap {
            $0["data"]?["choices"]?.elements.first?["delta"]?["content"]?.stringValue
        }.joined()
        #expect(text == "Hello!")
        #expect(events[3]["data"]?["choices"]?.elements.first?["finish_reason"]?.stringValue == "stop")
        #expect(events[0]["data"]?["choices"]?.elements.first?["logprobs"] == nil, "nulls are stripped")
        #expect(events[4]["text"]?.stringValue == "[DONE]" && events[4]["data"] == nil)
        #expect(decoded.warnings.isEmpty)
    }

    /// An Anthropic-style messages stream (written here in the style of its documented format): named events, each
    /// with a JSON object.
    @Test("an Anthropic-style stream reads as values")
    func anthropic() throws {
        let body = """
            event: message_start
            data: {"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],\
            "model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}

            event: content_block_start
            data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}

            event: ping
            data: {"type": "ping"}

            event: content_block_delta
            data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}

            event: content_block_delta
            data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":", world"}}

            event: content_block_stop
            data: {"type":"content_block_stop","index":0}

            event: message_delta
            data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":6}}

            event: message_stop
            data: {"type":"message_stop"}


            """
        let decoded = Self.decode(body)
        let events = try #require(decoded.value?["events"]).elements
        #expect(events.count == 8)
        for event in events {
            #expect(event["event"]?.stringValue == event["data"]?["type"]?.stringValue, "\(event)")
        }
        let text = events.compactMap { $0["data"]?["delta"]?["text"]?.stringValue }.joined()
        #expect(text == "Hello, world")
        #expect(events[6]["data"]?["delta"]?["stop_reason"]?.stringValue == "end_turn")
        #expect(decoded.warnings.isEmpty)
    }

    // MARK: Corpora

    /// One corpus case against our value: events (type, last event ID, data), comments, retry.
    static func check(
        folder: String, _ test: JSONValue, sameComments: Bool
    ) throws {
        let file = try #require(test["file"]?.stringValue)
        let body = try Corpora.bytes("sse/\(folder)/cases/\(file)")
        // Nulls kept, so that JSON data compares with the data string read as JSON.
        let decoded = Decoded(SSEBodyDecoder(), body, mimeType: type) { $0.stripNulls = false }
        let value = try #require(
            decoded.value, "\(file): \(decoded.text ?? "no value") \(String(describing: decoded.error))")
        let events = try #require(value["events"]).elements
        let expected = try #require(test["events"]).elements
        #expect(events.count == expected.count, "\(file): \(decoded.text ?? "")")
        for (event, want) in zip(events, expected) {
            #expect(event["event"]?.stringValue == want["type"]?.stringValue, "\(file)")
            #expect((event["id"]?.stringValue ?? "") == want["id"]?.stringValue, "\(file)")
            let data = try #require(want["data"]?.stringValue)
            // Data that is one JSON text is that value (the reader here is not the decoder's), anything else text.
            if let json = try? JSONValue.parse(data) {
                #expect(event["data"] == json && event["text"] == nil, "\(file): \(event)")
            } else {
                #expect(event["text"]?.stringValue == data && event["data"] == nil, "\(file): \(event)")
            }
        }
        if sameComments {
            let comments = (value["comments"]?.elements ?? []).map { $0.stringValue ?? "?" }
            let want = (test["comments"]?.elements ?? []).map { $0.stringValue ?? "?" }
            #expect(comments == want, "\(file)")
        }
        if let retry = test["retry_ms"]?.integerValue { #expect(value["retry"]?.integerValue == retry, "\(file)") }
    }

    static func cases(_ folder: String) throws -> [JSONValue] {
        try String(contentsOf: Corpora.url("sse/\(folder)/cases/cases.jsonl"), encoding: .utf8)
            .split(separator: "\n").map { try JSONValue.parse(String($0)) }
    }

    @Test(
        "LaunchDarkly SSE contract tests: all 54 parsing cases, comments included",
        .enabled(if: Corpora.available, Comment(rawValue: Corpora.skipMessage)))
    func launchDarkly() throws {
        let cases = try Self.cases("launchdarkly-sse-contract-tests")
        #expect(cases.count == 54)
        for test in cases { try Self.check(folder: "launchdarkly-sse-contract-tests", test, sameComments: true) }
    }

    @Test(
        "WPT eventsource format tests: all 9",
        .enabled(if: Corpora.available, Comment(rawValue: Corpora.skipMessage)))
    func wpt() throws {
        let cases = try Self.cases("wpt-eventsource")
        #expect(cases.count == 9)
        for test in cases { try Self.check(folder: "wpt-eventsource", test, sameComments: false) }
        // The body that ends inside an event says so.
        let cut = Decoded(
            SSEBodyDecoder(), try Corpora.bytes("sse/wpt-eventsource/cases/04-format-data-before-final-empty-line.sse"),
            mimeType: Self.type)
        #expect(cut.warnings.contains { $0.contains("discarded") })
    }
}
