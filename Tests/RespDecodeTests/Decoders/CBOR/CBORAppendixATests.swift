import RespDecode
import Testing

/// The examples of RFC 8949 Appendix A (Table 6, "Examples of Encoded CBOR Data Items"), written here from the RFC's table, each
/// with the JSON the cbor decoder gives under the mapping of docs/output.md#cbor. Every example of the table is here:
/// the diagnostic notation of the RFC is in the comment where the JSON differs from it.
@Suite("CBOR RFC 8949 Appendix A")
struct CBORAppendixATests {
    static let examples: [(encoded: String, json: String)] = [
        ("0x00", "0"),
        ("0x01", "1"),
        ("0x0a", "10"),
        ("0x17", "23"),
        ("0x1818", "24"),
        ("0x1819", "25"),
        ("0x1864", "100"),
        ("0x1903e8", "1000"),
        ("0x1a000f4240", "1000000"),
        ("0x1b000000e8d4a51000", "1000000000000"),
        ("0x1bffffffffffffffff", "18446744073709551615"),
        ("0xc249010000000000000000", "18446744073709551616"),
        ("0x3bffffffffffffffff", "-18446744073709551616"),
        ("0xc349010000000000000000", "-18446744073709551617"),
        ("0x20", "-1"),
        ("0x29", "-10"),
        ("0x3863", "-100"),
        ("0x3903e7", "-1000"),
        ("0xf90000", "0.0"),
        ("0xf98000", "-0.0"),
        ("0xf93c00", "1.0"),
        ("0xfb3ff199999999999a", "1.1"),
        ("0xf93e00", "1.5"),
        ("0xf97bff", "65504.0"),
        ("0xfa47c35000", "100000.0"),
        ("0xfa7f7fffff", "3.4028234663852886e+38"),
        ("0xfb7e37e43c8800759c", "1e+300"),
        ("0xf90001", "5.960464477539063e-08"),
        ("0xf90400", "6.103515625e-05"),
        ("0xf9c400", "-4.0"),
        ("0xfbc010666666666666", "-4.1"),
        // Infinity, NaN, -Infinity in half, single and double precision: the strings of the plist mapping.
        ("0xf97c00", #""Infinity""#),
        ("0xf97e00", #""NaN""#),
        ("0xf9fc00", #""-Infinity""#),
        ("0xfa7f800000", #""Infinity""#),
        ("0xfa7fc00000", #""NaN""#),
        ("0xfaff800000", #""-Infinity""#),
        ("0xfb7ff0000000000000", #""Infinity""#),
        ("0xfb7ff8000000000000", #""NaN""#),
        ("0xfbfff0000000000000", #""-Infinity""#),
        ("0xf4", "false"),
        ("0xf5", "true"),
        ("0xf6", "null"),
        // undefined: null (RFC 8949 §6.1); simple(16), simple(255): kept as simple values.
        ("0xf7", "null"),
        ("0xf0", #"{"simple":16}"#),
        ("0xf8ff", #"{"simple":255}"#),
        // 0("2013-03-21T20:04:00Z"), 1(1363896240), 1(1363896240.5): dates.
        ("0xc074323031332d30332d32315432303a30343a30305a", #""2013-03-21T20:04:00Z""#),
        ("0xc11a514b67b0", #""2013-03-21T20:04:00Z""#),
        ("0xc1fb41d452d9ec200000", #""2013-03-21T20:04:00.5Z""#),
        // 23(h'01020304'): expected base16.
        ("0xd74401020304", #""01020304""#),
        // 24(h'6449455446'): the embedded item, "IETF".
        ("0xd818456449455446", #""IETF""#),
        // 32("http://www.example.com"): the URI.
        ("0xd82076687474703a2f2f7777772e6578616d706c652e636f6d", #""http://www.example.com""#),
        ("0x40", #"{"base64":""}"#),
        ("0x4401020304", #"{"base64":"AQIDBA=="}"#),
        ("0x60", #""""#),
        ("0x6161", #""a""#),
        ("0x6449455446", #""IETF""#),
        ("0x62225c", #""\"\\""#),
        ("0x62c3bc", #""ü""#),
        ("0x63e6b0b4", #""水""#),
        ("0x64f0908591", #""𐅑""#),
        ("0x80", "[]"),
        ("0x83010203", "[1,2,3]"),
        ("0x8301820203820405", "[1,[2,3],[4,5]]"),
        (
            "0x98190102030405060708090a0b0c0d0e0f101112131415161718181819",
            "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25]"
        ),
        ("0xa0", "{}"),
        // {1: 2, 3: 4}: integer keys as their JSON text.
        ("0xa201020304", #"{"1":2,"3":4}"#),
        ("0xa26161016162820203", #"{"a":1,"b":[2,3]}"#),
        ("0x826161a161626163", #"["a",{"b":"c"}]"#),
        ("0xa56161614161626142616361436164614461656145", #"{"a":"A","b":"B","c":"C","d":"D","e":"E"}"#),
        // (_ h'0102', h'030405'), (_ "strea", "ming"): indefinite-length strings, joined.
        ("0x5f42010243030405ff", #"{"base64":"AQIDBAU="}"#),
        ("0x7f657374726561646d696e67ff", #""streaming""#),
        ("0x9fff", "[]"),
        ("0x9f018202039f0405ffff", "[1,[2,3],[4,5]]"),
        ("0x9f01820203820405ff", "[1,[2,3],[4,5]]"),
        ("0x83018202039f0405ff", "[1,[2,3],[4,5]]"),
        ("0x83019f0203ff820405", "[1,[2,3],[4,5]]"),
        (
            "0x9f0102030405060708090a0b0c0d0e0f101112131415161718181819ff",
            "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25]"
        ),
        ("0xbf61610161629f0203ffff", #"{"a":1,"b":[2,3]}"#),
        ("0x826161bf61626163ff", #"["a",{"b":"c"}]"#),
        ("0xbf6346756ef563416d7421ff", #"{"Fun":true,"Amt":-2}"#),
    ]

    @Test("each example decodes to its value")
    func examples() {
        for (encoded, json) in Self.examples {
            let result = decodeBinaryBody(bytes(hex: encoded), with: CBORBodyDecoder(), mimeType: "application/cbor")
            #expect(result == .success(json), "\(encoded)")
        }
        // Table 6 of the appendix has 81 rows.
        #expect(Self.examples.count == 81)
    }
}
