import RespDecode
import Testing

/// The msgpack decoder's mapping (docs/output.md#msgpack) and its errors, on hand-made bodies.
@Suite("msgpack mapping")
struct MessagePackMappingTests {
    func decode(_ hex: String, limits: Limits = Limits()) -> Result<String, RecordError> {
        decodeBinaryBody(
            bytes(hex: hex), with: MessagePackBodyDecoder(), mimeType: "application/msgpack", limits: limits)
    }

    @Test(
        "values",
        arguments: [
            ("82 a1 61 c3 a1 62 92 01 02", #"{"a":true,"b":[1,2]}"#),
            ("cf ff ff ff ff ff ff ff ff", "18446744073709551615"),
            ("d3 80 00 00 00 00 00 00 00", "-9223372036854775808"),
            ("cb 3f f1 99 99 99 99 99 9a", "1.1"),
            // A float 32 widened exactly (0.1f is 0.100000001490116…).
            ("ca 3d cc cc cd", "0.10000000149011612"),
            ("cb 7f f8 00 00 00 00 00 00", #""NaN""#),
            ("cb ff f0 00 00 00 00 00 00", #""-Infinity""#),
            ("cb 80 00 00 00 00 00 00 00", "-0.0"),
            ("c4 02 01 02", #"{"base64":"AQI="}"#),
            ("a3 22 5c 0a", #""\"\\\n""#),
            // Non-string keys: their JSON text as the key.
            ("83 01 a1 61 c3 02 c0 03", #"{"1":"a","true":2,"null":3}"#),
            ("81 92 01 02 c0", #"{"[1,2]":null}"#),
            ("81 81 a1 6b 01 c0", #"{"{\"k\":1}":null}"#),
            ("81 c4 01 ff 00", #"{"{\"base64\":\"/w==\"}":0}"#),
            // Duplicate keys and colliding ones are all kept, in order.
            ("83 a1 61 01 a1 61 02 01 03", #"{"a":1,"a":2,"1":3}"#),
            // Timestamps (extension −1) in their three sizes; others as ext objects.
            ("d6 ff 5a 4a f6 a5", #""2018-01-02T03:04:05Z""#),
            ("d7 ff 00 00 00 04 00 00 00 00", #""1970-01-01T00:00:00.000000001Z""#),
            ("c7 0c ff 00 00 00 01 ff ff ff ff ff ff ff fe", #""1969-12-31T23:59:58.000000001Z""#),
            // Nanoseconds of 10^9 or more: not a timestamp, kept as the extension.
            ("d7 ff ee 6b 28 00 00 00 00 00", #"{"ext":-1,"base64":"7msoAAAAAAA="}"#),
            ("d4 01 10", #"{"ext":1,"base64":"EA=="}"#),
            ("c7 00 80", #"{"ext":-128,"base64":""}"#),
            // One space is the integer 32 here, not "no content".
            ("20", "32"),
        ])
    func values(hex: String, json: String) {
        #expect(decode(hex) == .success(json))
    }

    @Test("an empty body has no value")
    func empty() {
        #expect(decode("") == .success(""))
    }

    @Test(
        "malformed bodies are invalidMessagePack at their byte",
        arguments: [
            ("c1", 0), // never used
            ("01 02", 1), // a second value
            ("92 01", 2), // ends inside the array
            ("db ff ff ff ff 61", 6), // a str32 claiming 4 GiB
            ("c6 ff ff ff ff", 5), // a bin32 claiming 4 GiB
            ("dd ff ff ff ff 01", 6), // an array32 claiming 2^32-1 elements
            ("df ff ff ff ff", 5), // a map32 claiming 2^32-1 pairs
        ])
    func malformed(hex: String, offset: Int) {
        guard case .failure(let error) = decode(hex) else {
            Issue.record("\(hex) decoded")
            return
        }
        #expect(error.code == .invalidMessagePack, "\(hex): \(error)")
        #expect(error.location?.offset == Int64(offset), "\(hex): \(error)")
    }

    /// The spec lets a str hold invalid byte sequences, and old-spec "raw" is common: such a str keeps its bytes, as
    /// bin does, and one warning counts them (docs/output.md#msgpack).
    @Test(
        "a str that is not UTF-8 is written as {\"base64\":…}, with one warning",
        arguments: [
            (
                "a2 c3 28", #"{"base64":"wyg="}"#,
                #"msgpack: a str that is not UTF-8 (at byte 1) is written as {"base64":…}"#
            ),
            (
                "92 a1 ff a1 61", #"[{"base64":"/w=="},"a"]"#,
                #"msgpack: a str that is not UTF-8 (at byte 2) is written as {"base64":…}"#
            ),
            (
                "93 a1 ff a1 61 d9 02 ed a0", #"[{"base64":"/w=="},"a",{"base64":"7aA="}]"#,
                #"msgpack: 2 strs that are not UTF-8 (the first at byte 2) are written as {"base64":…}"#
            ),
            // As a key: the JSON text of the object, as a bin key.
            (
                "82 a1 ff 01 a1 61 02", #"{"{\"base64\":\"/w==\"}":1,"a":2}"#,
                #"msgpack: a str that is not UTF-8 (at byte 2) is written as {"base64":…}"#
            ),
        ])
    func invalidUTF8String(hex: String, json: String, warning: String) {
        var warnings: [String] = []
        let result = decodeBinaryBody(
            bytes(hex: hex), with: MessagePackBodyDecoder(), mimeType: "application/msgpack", warnings: &warnings)
        #expect(result == .success(json))
        #expect(warnings == [warning])
    }

    @Test("valid str values give no warning")
    func validStringNoWarning() {
        var warnings: [String] = []
        let result = decodeBinaryBody(
            bytes(hex: "92 a1 61 a2 c3 a9"), with: MessagePackBodyDecoder(), mimeType: "application/msgpack",
            warnings: &warnings)
        #expect(result == .success(#"["a","é"]"#))
        #expect(warnings.isEmpty)
    }

    @Test("nesting past --max-depth is limitExceeded")
    func depth() {
        let deep = String(repeating: "91 ", count: 10) + "c0"
        #expect(
            decode(deep, limits: Limits(maxDepth: 10))
                == .success(String(repeating: "[", count: 10) + "null" + String(repeating: "]", count: 10)))
        guard case .failure(let error) = decode(deep, limits: Limits(maxDepth: 9)) else {
            Issue.record("not refused")
            return
        }
        #expect(error.code == .limitExceeded)
        // Past msgpack-c's parser stack whatever --max-depth says.
        let deeper = String(repeating: "91 ", count: 1100) + "c0"
        guard case .failure(let stack) = decode(deeper, limits: Limits(maxDepth: 5000)) else {
            Issue.record("not refused")
            return
        }
        #expect(stack.code == .limitExceeded)
    }

    @Test("a value past --max-value-bytes is limitExceeded")
    func valueBytes() {
        let array = "dc 00 64 " + String(repeating: "00 ", count: 100)
        guard case .failure(let error) = decode(array, limits: Limits(maxValueBytes: 100)) else {
            Issue.record("not refused")
            return
        }
        #expect(error.code == .limitExceeded)
        #expect((try? decode(array, limits: Limits(maxValueBytes: 201)).get()) != nil)
    }
}

extension MessagePackMappingTests {
    /// msgpack-c's template adds the type byte to an ext 32's length in 32 bits: 2^32 − 1 wraps to 0, which would have
    /// the callback read 4 GiB past the body. With no value limit to stop it first, it must still be refused.
    @Test("an ext 32 of 2^32 − 1 bytes is malformed, whatever the value limit")
    func extensionLengthWrap() {
        let result = decodeBinaryBody(
            bytes(hex: "c9 ff ff ff ff 01 00 00"), with: MessagePackBodyDecoder(), mimeType: "application/msgpack",
            limits: Limits(maxValueBytes: 1 << 50))
        guard case .failure(let error) = result else {
            Issue.record("decoded: \(result)")
            return
        }
        #expect(error.code == .invalidMessagePack)
    }
}
