import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// Runs the transcoder on `bytes` into a fresh buffer.
private func transcode(_ bytes: [UInt8], options: JSONTranscoder.Options = .init()) throws(RecordError) -> [UInt8] {
    let output = OutputBuffer(capacity: 16)
    let result = bytes.withUnsafeBufferPointer { input in
        Result { () throws(RecordError) in try JSONTranscoder(options: options).transcode(input, into: output) }
    }
    try result.get()
    return output.array
}

/// The transcoded text of `text`'s UTF-8.
private func transcode(_ text: String, options: JSONTranscoder.Options = .init()) throws(RecordError) -> String {
    String(decoding: try transcode(Array(text.utf8), options: options), as: UTF8.self)
}

/// The error `bytes` give, or nil when they are accepted.
private func failure(_ bytes: [UInt8], options: JSONTranscoder.Options = .init()) -> RecordError? {
    do {
        _ = try transcode(bytes, options: options)
        return nil
    } catch {
        return error
    }
}

private func failure(_ text: String, options: JSONTranscoder.Options = .init()) -> RecordError? {
    failure(Array(text.utf8), options: options)
}

private let keepNulls = JSONTranscoder.Options(stripNulls: false)

@Suite("JSONTranscoder")
struct JSONTranscoderTests {
    // MARK: Options

    @Test func defaultOptions() {
        let options = JSONTranscoder.Options()
        #expect(options.stripNulls)
        #expect(options.maxDepth == 512)
        #expect(JSONTranscoder().options == options)
    }

    // MARK: Minifying

    @Test func minifiesAllFourWhitespaceKinds() throws {
        let input = " \t\r\n{ \"a\" :\t[ 1 ,\r\n 2 ] ,\n \"b\" : { } , \"c\" : [ ] , \"d\" : \"x y\" }\n\t "
        #expect(try transcode(input) == #"{"a":[1,2],"b":{},"c":[],"d":"x y"}"#)
    }

    @Test func keepsMemberOrderAndDuplicateKeys() throws {
        // Duplicate keys are copied through as they are; the reader decides which one wins.
        #expect(try transcode(#"{"b":1,"a":2,"b":3}"#) == #"{"b":1,"a":2,"b":3}"#)
    }

    @Test(arguments: ["0", "-1", "true", "false", "\"text\"", "3.25", "{}", "[]"])
    func acceptsTopLevelValues(text: String) throws {
        #expect(try transcode(" \(text) ") == text)
    }

    @Test(arguments: ["", " ", "\t\n\r ", "\u{FEFF}", "\u{FEFF} "])
    func rejectsEmptyInput(text: String) {
        let error = failure(text)
        #expect(error?.code == .invalidJSON)
        #expect(error?.message.contains("end of input") == true)
    }

    @Test(arguments: ["\u{0C}[1]", "[1]\u{0B}", "[\u{A0}1]", "[1,\u{2028}2]", "\u{3000}1"])
    func rejectsOtherWhitespace(text: String) {
        #expect(failure(text)?.code == .invalidJSON)
    }

    // MARK: Numbers

    @Test(arguments: [
        "12345678901234567890123", "-0.0", "1E400", "-0", "0", "0.0", "1e-7", "1.5E+10", "30000000000.0", "-1.25e-5",
        "9007199254740993", "-9223372036854775809", "123.456e-789", "1E22", "0e1", "0E-0",
    ])
    func keepsNumberTextExactly(text: String) throws {
        #expect(try transcode(text) == text)
        #expect(try transcode("[\(text)]") == "[\(text)]")
        #expect(try transcode("{\"n\": \(text) }") == "{\"n\":\(text)}")
    }

    @Test(arguments: [
        "01", "-01", "00", "+1", ".5", "1.", "1.e5", "1e", "1e+", "1E-", "-", "- 1", "--1", "NaN", "-NaN", "Infinity",
        "-Infinity", "0x10", "1_000", "[01]", "[1.]", "[.5]", "[-]", "[1e]", "1.5e+-3", "2.", "0.e1", "[+1]",
    ])
    func rejectsNonRFCNumbers(text: String) {
        #expect(failure(text)?.code == .invalidJSON, "\(text)")
    }

    @Test func leadingZeroMessage() {
        #expect(failure("[012]")?.message == "leading zeros are not allowed in numbers, found '1'")
    }

    // MARK: Strings

    @Test func reEscapesMinimally() throws {
        #expect(try transcode(#"["\/"]"#) == #"["/"]"#)
        #expect(try transcode(#""a\/b\\c\"d""#) == #""a/b\\c\"d""#)
        #expect(try transcode(#""\b\f\n\r\t""#) == #""\b\f\n\r\t""#)
        #expect(try transcode(#""\u0041\u00e9\u00E9\u20AC""#) == "\"Aéé€\"")
        #expect(try transcode(#""\u0022\u005C\u005c\u002F""#) == #""\"\\\\/""#)
        #expect(try transcode(#""\u007F\u0080\u07FF\u0800\uFFFF""#) == "\"\u{7F}\u{80}\u{7FF}\u{800}\u{FFFF}\"")
    }

    @Test func controlCharactersStayEscaped() throws {
        #expect(try transcode(#""\u0000""#) == #""\u0000""#)
        #expect(try transcode(#""\u001F\u001f\u0001""#) == #""\u001f\u001f\u0001""#)
        // Escaped control characters that have a short form get it.
        #expect(try transcode(#""\u0008\u0009\u000A\u000c\u000D""#) == #""\b\t\n\f\r""#)
    }

    @Test func escapedSurrogatePairBecomesFourByteUTF8() throws {
        let output = try transcode(Array(#""\uD834\uDD1E x \ud83d\ude00""#.utf8))
        #expect(output == [0x22, 0xF0, 0x9D, 0x84, 0x9E, 0x20, 0x78, 0x20, 0xF0, 0x9F, 0x98, 0x80, 0x22])
        #expect(try transcode(#""\uDBFF\uDFFF""#) == "\"\u{10FFFF}\"")
    }

    @Test(arguments: [
        #""\ud800""#, #""\uDBFF""#, #""\udc00""#, #""\uDFFF""#, #""\uD800\u0041""#, #""\uD800x""#,
        #""\uD800\uD800""#, #""\uDD1E\uD834""#, #""\uD800\n""#, #"{"\uDFAA":0}"#, #"["\uD800\"]"#,
    ])
    func rejectsLoneSurrogates(text: String) {
        let error = failure(text)
        #expect(error?.code == .invalidJSON, "\(text)")
        #expect(error?.message.contains("lone surrogate") == true, "\(text)")
    }

    @Test(arguments: [
        #""\x""#, #""\'""#, #""\a""#, #""\U0041""#, #""\u12""#, #""\u12G4""#, #""\u""#, #""\"#, #"["\"]"#,
    ])
    func rejectsBadEscapes(text: String) {
        #expect(failure(text)?.code == .invalidJSON, "\(text)")
    }

    @Test func rejectsRawControlCharacters() {
        for byte in UInt8(0)..<0x20 {
            let error = failure([0x22, 0x61, byte, 0x62, 0x22])
            #expect(error?.code == .invalidJSON, "byte \(byte)")
            #expect(error?.location?.offset == 2)
        }
        // DEL is not a control character for JSON.
        #expect(failure([0x22, 0x7F, 0x22]) == nil)
    }

    @Test func rejectsUnterminatedStrings() {
        #expect(failure("\"abc")?.message == "unterminated string, found end of input")
        #expect(failure("[\"abcdefghijklmnopqrstuvwxyz")?.code == .invalidJSON)
        #expect(failure("\"abc\\")?.code == .invalidJSON)
        #expect(failure("\"")?.code == .invalidJSON)
    }

    /// Every position of every stop byte around the 8-byte boundaries of the word-at-a-time loop.
    @Test func stopBytesAtEveryPosition() throws {
        for length in 0..<24 {
            for position in 0..<length {
                for (stop, expected) in [("\\n", "\\n"), ("\\/", "/"), ("é", "é"), ("\\u0022", "\\\""), ("€", "€")] {
                    let prefix = String(repeating: "a", count: position)
                    let suffix = String(repeating: "a", count: length - position - 1)
                    let text = prefix + stop + suffix
                    let want = prefix + expected + suffix
                    #expect(try transcode("[\"\(text)\",\"\(text)\"]") == "[\"\(want)\",\"\(want)\"]")
                }
                var bytes = Array("\"\(String(repeating: "a", count: length))\"".utf8)
                bytes[position + 1] = 0x01
                #expect(failure(bytes)?.location?.offset == Int64(position + 1))
            }
        }
    }

    // MARK: UTF-8

    @Test func copiesValidUTF8Raw() throws {
        let samples: [[UInt8]] = [
            [0x7F], [0xC2, 0x80], [0xDF, 0xBF], [0xE0, 0xA0, 0x80], [0xED, 0x9F, 0xBF], [0xEE, 0x80, 0x80],
            [0xEF, 0xBF, 0xBF], [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF], Array("東京 данные résumé".utf8),
        ]
        for sample in samples {
            let input = [0x22] + sample + [0x22]
            #expect(try transcode(input) == input)
        }
    }

    @Test func rejectsInvalidUTF8() {
        let samples: [(String, [UInt8])] = [
            ("overlong 2-byte", [0xC0, 0xAF]), ("overlong C1", [0xC1, 0xBF]), ("overlong 3-byte", [0xE0, 0x80, 0xAF]),
            ("overlong 4-byte", [0xF0, 0x8F, 0xBF, 0xBF]), ("UTF-8 surrogate D800", [0xED, 0xA0, 0x80]),
            ("UTF-8 surrogate DFFF", [0xED, 0xBF, 0xBF]), ("above U+10FFFF", [0xF4, 0x90, 0x80, 0x80]),
            ("F5", [0xF5, 0x80, 0x80, 0x80]), ("FF", [0xFF]), ("FE", [0xFE]), ("lone continuation", [0x80]),
            ("truncated 2-byte", [0xC3]), ("truncated 3-byte", [0xE2, 0x82]), ("truncated 4-byte", [0xF0, 0x9F, 0x98]),
            ("bad continuation", [0xE2, 0x28, 0xA1]), ("6-byte form", [0xFC, 0x83, 0xBF, 0xBF, 0xBF, 0xBF]),
            ("Latin-1", [0xE9]),
        ]
        for (name, sample) in samples {
            let error = failure([0x5B, 0x22] + sample + [0x22, 0x5D])
            #expect(error?.code == .invalidJSON, "\(name)")
            #expect(error?.message.hasPrefix("invalid UTF-8") == true, "\(name)")
            #expect(error?.location?.offset == 2, "\(name)")
            // At the very end of the input, so that a truncated sequence cannot read past it.
            #expect(failure([0x22] + sample)?.code == .invalidJSON, "\(name) at end")
        }
        #expect(failure([0xC3, 0xA5])?.code == .invalidJSON) // outside a string
    }

    // MARK: Encodings (RFC 8259 §8.1)

    private static let encodingSample = "{\"a\": \"é€𝄞\", \"n\": null}"
    private static let encodingExpected = "{\"a\":\"é€𝄞\"}"

    private static func utf16(_ text: String, bigEndian: Bool, bom: Bool) -> [UInt8] {
        let units = (bom ? [0xFEFF] : []) + Array(text.utf16)
        return units.flatMap { unit in
            let high = UInt8(unit >> 8)
            let low = UInt8(unit & 0xFF)
            return bigEndian ? [high, low] : [low, high]
        }
    }

    private static func utf32(_ text: String, bigEndian: Bool, bom: Bool) -> [UInt8] {
        let scalars = (bom ? [0xFEFF] : []) + text.unicodeScalars.map(\.value)
        return scalars.flatMap { value in
            let bytes = [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
            return bigEndian ? bytes : bytes.reversed()
        }
    }

    @Test func dropsUTF8ByteOrderMark() throws {
        let withMark = [0xEF, 0xBB, 0xBF] + Array(Self.encodingSample.utf8)
        #expect(try transcode(withMark) == Array(Self.encodingExpected.utf8))
        #expect(try transcode([0xEF, 0xBB, 0xBF, 0x7B, 0x7D]) == [0x7B, 0x7D])
        // Only one mark is a mark; a second one is a stray U+FEFF.
        #expect(failure([0xEF, 0xBB, 0xBF, 0xEF, 0xBB, 0xBF, 0x31])?.code == .invalidJSON)
        // Offsets count the mark.
        #expect(failure([0xEF, 0xBB, 0xBF, 0x5B, 0x2C])?.location?.offset == 4)
    }

    @Test(arguments: [false, true])
    func decodesUTF16And32(bom: Bool) throws {
        for bigEndian in [false, true] {
            let forms = [
                ("UTF-16", Self.utf16(Self.encodingSample, bigEndian: bigEndian, bom: bom)),
                ("UTF-32", Self.utf32(Self.encodingSample, bigEndian: bigEndian, bom: bom)),
            ]
            for (name, bytes) in forms {
                let label = "\(name)\(bigEndian ? "BE" : "LE") bom=\(bom)"
                #expect(String(decoding: try transcode(bytes), as: UTF8.self) == Self.encodingExpected, "\(label)")
            }
        }
    }

    @Test func detectsEncodings() {
        func detect(_ bytes: [UInt8]) -> JSONInputEncoding {
            bytes.withUnsafeBufferPointer { JSONInputEncoding.detect($0).encoding }
        }
        #expect(detect([0x00, 0x00, 0x00, 0x31]) == .utf32BE)
        #expect(detect([0x31, 0x00, 0x00, 0x00]) == .utf32LE)
        #expect(detect([0x00, 0x31]) == .utf16BE)
        #expect(detect([0x31, 0x00]) == .utf16LE)
        #expect(detect([0x5B, 0x00, 0x31, 0x00]) == .utf16LE)
        #expect(detect([0x00, 0x5B, 0x00, 0x31]) == .utf16BE)
        #expect(detect([0x31]) == .utf8)
        #expect(detect([]) == .utf8)
        #expect(detect([0xFF, 0xFE, 0x00, 0x00]) == .utf32LE)
        #expect(detect([0x00, 0x00, 0xFE, 0xFF]) == .utf32BE)
        #expect(detect([0xFF, 0xFE, 0x31, 0x00]) == .utf16LE)
        #expect(detect([0xFE, 0xFF, 0x00, 0x31]) == .utf16BE)
    }

    @Test func decodesShortUTF16AndUTF32WithoutMark() throws {
        #expect(try transcode([0x31, 0x00]) == [0x31])
        #expect(try transcode([0x00, 0x31]) == [0x31])
        #expect(try transcode([0x31, 0x00, 0x00, 0x00]) == [0x31])
        #expect(try transcode([0x00, 0x00, 0x00, 0x31]) == [0x31])
    }

    @Test func rejectsBrokenUTF16AndUTF32() {
        let cases: [(String, [UInt8])] = [
            ("UTF-16LE odd length", [0x5B, 0x00, 0x5D]),
            ("UTF-16LE lone high surrogate", [0x22, 0x00, 0x00, 0xD8, 0x22, 0x00]),
            ("UTF-16LE lone low surrogate", [0x22, 0x00, 0x00, 0xDC, 0x22, 0x00]),
            ("UTF-16BE high then high", [0x00, 0x22, 0xD8, 0x00, 0xD8, 0x00, 0x00, 0x22]),
            ("UTF-16BE mark only", [0xFE, 0xFF]),
            ("UTF-32BE above U+10FFFF", [0x00, 0x00, 0x00, 0x22, 0x00, 0x11, 0x00, 0x00, 0x00, 0x00, 0x00, 0x22]),
            ("UTF-32LE surrogate", [0x22, 0x00, 0x00, 0x00, 0x00, 0xD8, 0x00, 0x00, 0x22, 0x00, 0x00, 0x00]),
            ("UTF-32LE truncated", [0x31, 0x00, 0x00, 0x00, 0x20, 0x00]),
            ("UTF-32 mark only", [0xFF, 0xFE, 0x00, 0x00]),
            ("UTF-16 raw control character", [0x22, 0x00, 0x0A, 0x00, 0x22, 0x00]),
        ]
        for (name, bytes) in cases {
            #expect(failure(bytes)?.code == .invalidJSON, "\(name)")
        }
    }

    @Test func utf16ErrorOffsetsReferToConvertedText() {
        // "[1,]" in UTF-16LE: the ']' is byte 6 of the input but byte 3 of the UTF-8 text.
        let error = failure(Self.utf16("[1,]", bigEndian: false, bom: false))
        #expect(error?.location == RecordError.Location(offset: 3, line: 1, column: 4))
    }

    // MARK: Null stripping

    @Test func stripsNullsRecursively() throws {
        #expect(try transcode(#"{"a":null,"b":[null,{"c":null}]}"#) == #"{"b":[{}]}"#)
        #expect(try transcode(#"[null, 1, null, null, 2, null]"#) == "[1,2]")
        #expect(try transcode(#"[null,null]"#) == "[]")
        #expect(try transcode(#"{"a":null}"#) == "{}")
        #expect(try transcode(#"{"a":null,"b":null,"c":1,"d":null,"e":2}"#) == #"{"c":1,"e":2}"#)
        #expect(try transcode(#"{"a":{},"b":[],"c":[[]],"d":{"e":{}}}"#) == #"{"a":{},"b":[],"c":[[]],"d":{"e":{}}}"#)
        #expect(try transcode(#"[[null],{"x":null},[null,[null]]]"#) == "[[],{},[[]]]")
        #expect(try transcode(#"{"nul":"null","n":[null ,"null"]}"#) == #"{"nul":"null","n":["null"]}"#)
    }

    /// AFNetworking's `AFJSONSerializationTests.testThatJSONRemovesKeysWithNullValues` body and its expected result.
    @Test func afRemovesKeysWithNullValues() throws {
        let body = #"{"key":"value","nullkey":null,"array":[{"subnullkey":null}],"arrayWithNulls":[null]}"#
        #expect(try transcode(body) == #"{"key":"value","array":[{}],"arrayWithNulls":[]}"#)
    }

    @Test func keepsNullsWhenAsked() throws {
        let body = #"{"a":null,"b":[null,{"c":null}], "d" : [ null ] }"#
        #expect(try transcode(body, options: keepNulls) == #"{"a":null,"b":[null,{"c":null}],"d":[null]}"#)
    }

    @Test func topLevelNullStays() throws {
        #expect(try transcode(" null ") == "null")
        #expect(try transcode("null", options: keepNulls) == "null")
    }

    @Test(arguments: ["[nul]", "[nulll]", "{\"a\":nul}", "{\"a\":nulx}", "[Null]", "[null1]", "nul", "nullnull"])
    func rejectsBrokenNulls(text: String) {
        #expect(failure(text)?.code == .invalidJSON, "\(text)")
        #expect(failure(text, options: keepNulls)?.code == .invalidJSON, "\(text)")
    }

    @Test(arguments: ["tru", "True", "falsy", "fals", "[t]", "[truee]", "f", "FALSE", "nil", "undefined"])
    func rejectsBrokenLiterals(text: String) {
        #expect(failure(text)?.code == .invalidJSON, "\(text)")
    }

    // MARK: Structure

    @Test(arguments: [
        "[1,]", "{\"a\":1,}", "[\"\",]", "[,1]", "[,]", "{,}", "[1,,2]", "[1 2]", "{\"a\" 1}", "{\"a\":1 \"b\":2}",
        "{1:2}", "{'a':1}", "['a']", "{a:1}", "[1]]", "[1}", "{\"a\":1]", "{\"a\"}", "{\"a\":}", "[", "{", "]", "}",
        "[1", "{\"a\":1", "/*x*/[1]", "[1]//x", "[1]/*x*/", "# x\n1", "[1] x", "1 2", "\"a\" \"b\"", "{}}", "[]]",
        "[1]\u{0}", "123\u{0}", "[\u{0}]", "{\"a\":1}x", ":", ",", "\"a\":1",
    ])
    func rejectsMalformedStructure(text: String) {
        #expect(failure(text)?.code == .invalidJSON, "\(text)")
        #expect(failure(text, options: keepNulls)?.code == .invalidJSON, "\(text)")
    }

    @Test func errorMessagesSayWhatWasExpected() {
        #expect(failure("[1}")?.message == "expected ',' or ']' after array element, found '}'")
        #expect(failure("{\"a\":1]")?.message == "expected ',' or '}' after object member, found ']'")
        #expect(failure("[1,]")?.message == "expected a value after ',', found ']'")
        #expect(failure("{\"a\":1,}")?.message == "expected a string key after ',' in object, found '}'")
        #expect(failure("{\"a\" 1}")?.message == "expected ':' after object key, found '1'")
        #expect(failure("{x}")?.message == "expected a string key or '}', found 'x'")
        #expect(failure("[1] 2")?.message == "expected end of input after the JSON value, found '2'")
        #expect(failure("")?.message == "expected a JSON value, found end of input")
        #expect(failure("{\"a\":\u{0}}")?.message == "expected a JSON value, found byte 0x00")
        #expect(failure(#""\q""#)?.message == "invalid escape sequence in string, found 'q'")
    }

    @Test func errorLocationHasOffsetLineAndColumn() {
        let input = "{\n  \"a\": 1,\n  \"b\": [1, 2,]\n}"
        let error = failure(input)
        let offset = Array(input.utf8).firstIndex(of: UInt8(ascii: "]"))
        #expect(error?.location == RecordError.Location(offset: offset ?? -1, line: 3, column: 14))
        #expect(failure("[\n\n   x]")?.location == RecordError.Location(offset: 6, line: 3, column: 4))
        #expect(failure("[1,")?.location == RecordError.Location(offset: 3, line: 1, column: 4))
    }

    // MARK: Nesting limit

    private static func nested(_ depth: Int, open: String = "[", close: String = "]", inner: String = "") -> String {
        String(repeating: open, count: depth) + inner + String(repeating: close, count: depth)
    }

    @Test func acceptsNestingUpToTheLimit() throws {
        #expect(try transcode(Self.nested(512)) == Self.nested(512))
        #expect(try transcode(Self.nested(511, inner: "[1]")) == Self.nested(511, inner: "[1]"))
        let objects = Self.nested(512, open: "{\"k\":", close: "}", inner: "1")
        #expect(try transcode(objects) == objects)
    }

    @Test func refusesNestingPastTheLimit() {
        for text in [Self.nested(513), Self.nested(512, inner: "[1]"), Self.nested(512, inner: "{}")] {
            let error = failure(text)
            #expect(error?.code == .limitExceeded)
            #expect(error?.message.contains("512") == true)
            #expect(error?.location?.offset == 512)
        }
        let small = JSONTranscoder.Options(maxDepth: 2)
        #expect(failure("[[1]]", options: small) == nil)
        #expect(failure("[{\"a\":[]}]", options: small)?.code == .limitExceeded)
        #expect(failure("[{\"a\":[]}]", options: small)?.message.contains(" 2 ") == true)
        #expect(failure("1", options: .init(maxDepth: 0)) == nil)
        #expect(failure("[]", options: .init(maxDepth: 0))?.code == .limitExceeded)
        #expect(failure("[]", options: .init(maxDepth: -5))?.code == .limitExceeded)
    }

    @Test func millionOpenBracketsFailFast() {
        let input = [UInt8](repeating: UInt8(ascii: "["), count: 1_000_000)
        let clock = ContinuousClock()
        var error: RecordError?
        let elapsed = clock.measure { error = failure(input) }
        #expect(error?.code == .limitExceeded)
        #expect(elapsed < .seconds(1))
        // Without a practical limit, the explicit stack still needs no call stack: this only runs out of input.
        let unlimited = JSONTranscoder.Options(maxDepth: .max)
        #expect(failure(input, options: unlimited)?.code == .invalidJSON)
        let balanced = Self.nested(200_000)
        #expect(failure(balanced, options: unlimited) == nil)
    }

    /// Past 64 levels the container kinds spill out of one word; mixed objects and arrays must come back right.
    @Test func deepMixedNestingClosesCorrectly() throws {
        var text = ""
        for level in 0..<300 { text += level % 3 == 0 ? "{\"k\":null,\"v\":" : "[null," }
        text += "1"
        for level in (0..<300).reversed() { text += level % 3 == 0 ? "}" : "]" }
        var expected = ""
        for level in 0..<300 { expected += level % 3 == 0 ? "{\"v\":" : "[" }
        expected += "1"
        for level in (0..<300).reversed() { expected += level % 3 == 0 ? "}" : "]" }
        #expect(try transcode(text) == expected)
        // A wrong kind on the way out is caught.
        let wrong = String(text.dropLast(151)) + "]" + String(text.suffix(150))
        #expect(failure(wrong)?.code == .invalidJSON)
    }

    // MARK: Output buffer

    @Test func rollsBackOutputOnError() {
        let output = OutputBuffer(capacity: 16)
        output.append(ascii: "{\"prefix\":")
        let before = output.array
        for text in ["[1,2,{\"a\":\"long enough to grow the buffer\"},]", "\"\\ud800\"", "[[[[", "", "[1] x"] {
            let bytes = Array(text.utf8)
            #expect(Self.fails(bytes, into: output), "\(text)")
            #expect(output.array == before)
        }
        #expect(Self.fails(Self.utf16("[\"x\", 1,]", bigEndian: true, bom: true), into: output))
        #expect(output.array == before)
    }

    private static func fails(_ bytes: [UInt8], into output: OutputBuffer) -> Bool {
        bytes.withUnsafeBufferPointer { input in
            do {
                try JSONTranscoder().transcode(input, into: output)
                return false
            } catch {
                return true
            }
        }
    }

    @Test func appendsAfterExistingContent() throws {
        let output = OutputBuffer(capacity: 16)
        output.append(ascii: "{\"value\":")
        try Array("[ 1, null, \"two\" ]".utf8).withUnsafeBufferPointer { input throws(RecordError) in
            try JSONTranscoder().transcode(input, into: output)
        }
        output.append(ascii: "}")
        #expect(String(decoding: output.array, as: UTF8.self) == "{\"value\":[1,\"two\"]}")
    }

    // MARK: Robustness

    /// Mutated documents never crash; whatever is accepted transcodes to itself (the output is valid and minimal).
    @Test func mutatedInputsNeverCrashAndOutputIsStable() throws {
        let seed = Array(#"{"a": [1, -2.5e3, true, false, null, "x\u00e9\n\/\ud83d\ude00 é"], "b": {"c": {}}}"#.utf8)
        let alphabet: [UInt8] = Array("{}[],:\"\\/ ntfrue0123456789.-+eEu".utf8) + [0x00, 0x1F, 0x80, 0xC3, 0xED, 0xFF]
        var rng = SplitMix64(seed: 42)
        var accepted = 0
        for _ in 0..<20_000 {
            var bytes = seed
            for _ in 0..<(1 + Int(rng.next() % 3)) {
                let index = Int(rng.next() % UInt64(bytes.count))
                switch rng.next() % 3 {
                case 0: bytes[index] = alphabet[Int(rng.next() % UInt64(alphabet.count))]
                case 1: bytes.remove(at: index)
                default: bytes.insert(alphabet[Int(rng.next() % UInt64(alphabet.count))], at: index)
                }
                if bytes.isEmpty { bytes = [0x31] }
            }
            for options in [JSONTranscoder.Options(), keepNulls] {
                guard let output = try? transcode(bytes, options: options) else { continue }
                accepted += 1
                #expect(try transcode(output, options: options) == output)
                let isUTF8 = bytes.withUnsafeBufferPointer { JSONInputEncoding.detect($0).encoding == .utf8 }
                if isUTF8 { #expect(output.count <= bytes.count) }
            }
        }
        #expect(accepted > 0)
    }
}
