import RespDecode
import Testing

/// The cbor decoder's mapping beyond Appendix A (docs/output.md#cbor): tags, keys, sequences, and its errors.
@Suite("CBOR mapping")
struct CBORMappingTests {
    func decode(_ hex: String, type: String = "application/cbor", limits: Limits = Limits())
        -> Result<String, RecordError>
    {
        decodeBinaryBody(bytes(hex: hex), with: CBORBodyDecoder(), mimeType: type, limits: limits)
    }

    @Test(
        "values",
        arguments: [
            // Unknown tags keep their number.
            ("d9 ff ff 01", #"{"tag":65535,"value":1}"#),
            // One-byte tags 6 to 20 (which libcbor 0.8 refuses): COSE_Sign1 is 18.
            ("d2 80", #"{"tag":18,"value":[]}"#),
            ("c6 01", #"{"tag":6,"value":1}"#),
            // Self-described CBOR: transparent.
            ("d9 d9 f7 a1 61 61 01", #"{"a":1}"#),
            // A tag 0 or 32 on something else than a text string keeps its number.
            ("c0 01", #"{"tag":0,"value":1}"#),
            // Tag 1 out of the years 1…9999 keeps its number.
            ("c1 1b 00 00 00 e8 d4 a5 10 00", #"{"tag":1,"value":1000000000000}"#),
            ("c1 3a 00 00 00 00", #""1969-12-31T23:59:59Z""#),
            // Decimal fractions (RFC 8949 §3.4.4: 273.15) and bigfloats (1.5).
            ("c4 82 21 19 6a b3", "273.15"),
            ("c4 82 22 05", "0.005"),
            ("c4 82 22 24", "-0.005"),
            ("c4 82 02 05", "5e2"),
            ("c4 82 38 63 01", "1e-100"),
            ("c4 82 20 3b ff ff ff ff ff ff ff ff", "-1844674407370955161.6"),
            ("c5 82 20 03", "1.5"),
            ("c5 82 01 03", "6.0"),
            // A bigfloat a double cannot hold exactly keeps its tag.
            ("c5 82 20 1b 00 3f ff ff ff ff ff ff", #"{"tag":5,"value":[-1,18014398509481983]}"#),
            // A decimal fraction with a bignum mantissa keeps its tag.
            ("c4 82 20 c2 41 01", #"{"tag":4,"value":[-1,1]}"#),
            // Bignums: leading zeros, zero, and the negative of 0 (−1).
            ("c2 43 00 00 05", "5"),
            ("c2 40", "0"),
            ("c3 40", "-1"),
            ("c2 51 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00", "340282366920938463463374607431768211456"),
            // Expected encodings: base64url without padding, base64, base16; inherited by what the tag holds.
            ("d5 43 fb ff 00", #""-_8A""#),
            ("d6 43 fb ff 00", #""+/8A""#),
            ("d5 82 41 fb 41 ff", #"["-w","_w"]"#),
            ("d7 82 41 fb d6 41 ff", #"["fb","/w=="]"#),
            // Embedded CBOR that does not parse keeps its tag; the bytes as base64.
            ("d8 18 42 01 02", #"{"tag":24,"value":{"base64":"AQI="}}"#),
            ("d8 18 41 ff", #"{"tag":24,"value":{"base64":"/w=="}}"#),
            // Keys: other types as their JSON text; byte strings as {"base64":…}; tagged ones too.
            ("a3 f5 01 f6 02 41 01 03", #"{"true":1,"null":2,"{\"base64\":\"AQ==\"}":3}"#),
            ("a1 82 01 02 03", #"{"[1,2]":3}"#),
            ("a1 c2 41 05 00", #"{"5":0}"#),
            ("a1 a1 61 6b 01 02", #"{"{\"k\":1}":2}"#),
            ("a1 d8 20 61 75 00", #"{"u":0}"#),
            ("a2 61 31 00 01 01", #"{"1":0,"1":1}"#),
            // An indefinite-length text string as a key is a string.
            ("a1 7f 61 61 61 62 ff 00", #"{"ab":0}"#),
            ("f8 20", #"{"simple":32}"#),
            // Tags looked inside (0, 1, 2, 4, 24) on items libcbor 0.8 refuses — one-byte tags 6–20, simple values
            // 0–19 and 0xF8: the content does not fit the special case, and the tag keeps its number.
            ("c1 e0", #"{"tag":1,"value":{"simple":0}}"#),
            ("c0 d0 61 61", #"{"tag":0,"value":{"tag":16,"value":"a"}}"#),
            ("c2 f8 20", #"{"tag":2,"value":{"simple":32}}"#),
            ("c4 82 c6 01 02", #"{"tag":4,"value":[{"tag":6,"value":1},2]}"#),
            ("c4 82 0a f0", #"{"tag":4,"value":[10,{"simple":16}]}"#),
            ("c5 82 f3 01", #"{"tag":5,"value":[{"simple":19},1]}"#),
            ("d8 18 e0", #"{"tag":24,"value":{"simple":0}}"#),
            // An expected encoding (21–23) applies to the tagged item only, not to its siblings.
            ("82 d5 41 01 41 02", #"["AQ",{"base64":"Ag=="}]"#),
            ("82 d5 81 41 01 41 02", #"[["AQ"],{"base64":"Ag=="}]"#),
            ("82 d5 d9 d9 f7 41 01 41 02", #"["AQ",{"base64":"Ag=="}]"#),
        ])
    func values(hex: String, json: String) {
        #expect(decode(hex) == .success(json))
    }

    @Test("application/cbor-seq is an array of its items")
    func sequence() {
        #expect(decode("01 02 a0 61 61", type: "application/cbor-seq") == .success(#"[1,2,{},"a"]"#))
        #expect(decode("01", type: "application/cbor-seq") == .success("[1]"))
        guard case .failure(let error) = decode("01 82 01", type: "application/cbor-seq") else {
            Issue.record("a truncated item decoded")
            return
        }
        #expect(error.code == .invalidCBOR)
        // A break between items closes nothing of the body's.
        guard case .failure(let stray) = decode("01 ff 02", type: "application/cbor-seq") else {
            Issue.record("a stray break decoded")
            return
        }
        #expect(stray.code == .invalidCBOR)
        #expect(stray.location?.offset == 1)
        #expect(decode("d9 d9 f7 01", type: "application/cbor-seq") == .success("[1]"))
        // A tag must have content (RFC 8949 §3.4), tags that write nothing of their own included.
        for (hex, offset) in [("01 d9 d9 f7", 4), ("01 d5", 2), ("01 d9 d9 f7 d5", 5)] {
            guard case .failure(let error) = decode(hex, type: "application/cbor-seq") else {
                Issue.record("\(hex): a tag without content decoded")
                continue
            }
            #expect(error.code == .invalidCBOR, "\(hex): \(error)")
            #expect(error.location?.offset == Int64(offset), "\(hex): \(error)")
        }
    }

    @Test(
        "malformed bodies are invalidCBOR at their byte",
        arguments: [
            ("01 02", 1), // a second item under application/cbor
            ("82 01", 0), // an array of 2 items with 1 byte left
            ("81 9f", 2), // ends inside the inner array
            ("ff", 0), // a break outside an indefinite-length item
            ("1c", 0), // reserved additional information
            ("5f 61 61 ff", 1), // a text chunk inside an indefinite byte string
            ("7f 7f ff ff", 1), // an indefinite chunk inside an indefinite string
            ("5f 01 ff", 1),
            ("7f f5 ff", 1),
            ("bf 01 ff", 2), // a map ending after a key
            ("f8 18", 0), // a simple value below 32 in two bytes
            ("62 c3 28", 0), // invalid UTF-8
            ("7f 61 c3 61 a9 ff", 1), // a chunk that is not UTF-8 on its own (RFC 8949 §3.2.3)
            ("5b ff ff ff ff ff ff ff ff 00", 10), // a byte string claiming 2^64−1 bytes
            ("7a ff ff ff ff 61", 6), // a text string claiming 4 GiB
            ("9b ff ff ff ff ff ff ff ff 00", 0), // an array claiming 2^64−1 items
            ("bb 7f ff ff ff ff ff ff ff 00", 0), // a map claiming 2^63−1 pairs
            ("9a ff ff ff ff 00", 0),
            ("c2", 1), // a tag without content
            ("d5", 1), // tags that write nothing of their own still need content (RFC 8949 §3.4)
            ("d9 d9 f7", 3),
            ("9f d5 ff", 2), // a break where the tag's content belongs
            ("9f d9 d9 f7 ff", 4),
            ("82 9f d5 ff 42 01 02", 3),
            ("bf 61 61 d6 ff", 4),
            ("c1 f8 18", 1), // a malformed item inside a tag looked into
        ])
    func malformed(hex: String, offset: Int) {
        guard case .failure(let error) = decode(hex) else {
            Issue.record("\(hex) decoded")
            return
        }
        #expect(error.code == .invalidCBOR, "\(hex): \(error)")
        #expect(error.location?.offset == Int64(offset), "\(hex): \(error)")
    }

    @Test("nesting past --max-depth is limitExceeded, tags and indefinite items included")
    func depth() {
        let limits = Limits(maxDepth: 10)
        #expect(
            decode(String(repeating: "81 ", count: 10) + "00", limits: limits)
                == .success(String(repeating: "[", count: 10) + "0" + String(repeating: "]", count: 10)))
        for hex in [
            String(repeating: "81 ", count: 11) + "00", String(repeating: "9f ", count: 11),
            String(repeating: "c6 ", count: 11) + "00", String(repeating: "a1 00 ", count: 11) + "00",
        ] {
            guard case .failure(let error) = decode(hex, limits: limits) else {
                Issue.record("\(hex.prefix(12)) not refused")
                continue
            }
            #expect(error.code == .limitExceeded, "\(hex.prefix(12)): \(error)")
        }
    }

    @Test("a bignum longer than 64 bytes keeps its tag")
    func longBignum() {
        let hex = "c2 58 41 01" + String(repeating: " 00", count: 64)
        guard case .success(let json) = decode(hex) else {
            Issue.record("not decoded")
            return
        }
        #expect(json.hasPrefix(#"{"tag":2,"value":{"base64":"AQAA"#))
    }
}
