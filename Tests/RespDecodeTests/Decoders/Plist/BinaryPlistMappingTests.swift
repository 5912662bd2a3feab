import Testing

@testable import RespDecode

/// One test per object type of the mapping. Expected texts are written from the mapping, by hand.
@Suite struct BinaryPlistMappingTests {
    typealias B = BinaryPlistBuilder

    @Test func nullAndBooleans() {
        #expect(singleOutcome([0x00]) == .json("null"))
        #expect(singleOutcome([0x08]) == .json("false"))
        #expect(singleOutcome([0x09]) == .json("true"))
    }

    @Test func otherSingleByteMarkersAreInvalid() {
        // Fill, the URL and UUID markers of newer CoreFoundation, and the rest of the 0x0_ row.
        for marker: UInt8 in [0x01, 0x02, 0x07, 0x0C, 0x0D, 0x0E, 0x0F] {
            #expect(singleOutcome([marker]) == .failure(.invalidPropertyList), "marker \(marker)")
        }
    }

    @Test func unsignedSmallIntegers() {
        #expect(singleOutcome([0x10, 0x00]) == .json("0"))
        #expect(singleOutcome([0x10, 0xFF]) == .json("255"))
        #expect(singleOutcome([0x11, 0xFF, 0xFF]) == .json("65535"))
        #expect(singleOutcome([0x11, 0x01, 0x00]) == .json("256"))
        #expect(singleOutcome([0x12, 0xFF, 0xFF, 0xFF, 0xFF]) == .json("4294967295"))
        #expect(singleOutcome([0x12, 0x80, 0x00, 0x00, 0x00]) == .json("2147483648"))
    }

    @Test func signedEightByteIntegers() {
        #expect(singleOutcome([0x13] + [UInt8](repeating: 0xFF, count: 8)) == .json("-1"))
        #expect(singleOutcome([0x13, 0x80, 0, 0, 0, 0, 0, 0, 0]) == .json("-9223372036854775808"))
        #expect(singleOutcome([0x13, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]) == .json("9223372036854775807"))
        #expect(singleOutcome([0x13, 0, 0, 0, 0, 0, 0, 0, 42]) == .json("42"))
    }

    @Test func signedSixteenByteIntegers() {
        let zeros = [UInt8](repeating: 0, count: 8)
        let ones = [UInt8](repeating: 0xFF, count: 8)
        let fiveTo18Signed: Int64 = 5_000_000_000_000_000_000
        // 2^64
        #expect(singleOutcome([0x14] + [0, 0, 0, 0, 0, 0, 0, 1] + zeros) == .json("18446744073709551616"))
        // 2^64 - 1 fits the low half but is positive
        #expect(singleOutcome([0x14] + zeros + ones) == .json("18446744073709551615"))
        // -1 and -2^64
        #expect(singleOutcome([0x14] + ones + ones) == .json("-1"))
        #expect(singleOutcome([0x14] + ones + zeros) == .json("-18446744073709551616"))
        // 2^127 - 1 and -2^127
        #expect(
            singleOutcome([0x14, 0x7F] + [UInt8](repeating: 0xFF, count: 15))
                == .json("170141183460469231731687303715884105727"))
        #expect(
            singleOutcome([0x14, 0x80] + [UInt8](repeating: 0, count: 15))
                == .json("-170141183460469231731687303715884105728"))
        // 5 * 10^18 * 2^64 = 92233720368547758080000000000000000000 (zeros padded between the decimal chunks)
        let fiveTo18: UInt64 = 5_000_000_000_000_000_000
        #expect(
            singleOutcome([0x14] + B.bigEndian(fiveTo18, size: 8) + zeros)
                == .json("92233720368547758080000000000000000000"))
        #expect(
            singleOutcome([0x14] + ones + B.bigEndian(UInt64(bitPattern: -fiveTo18Signed), size: 8))
                == .json("-5000000000000000000"))
        // Small values in 16 bytes
        #expect(singleOutcome([0x14] + zeros + [0, 0, 0, 0, 0, 0, 0, 7]) == .json("7"))
    }

    @Test func otherIntegerSizesAreInvalid() {
        for marker: UInt8 in [0x15, 0x16, 0x17, 0x1F] {
            #expect(singleOutcome([marker] + [UInt8](repeating: 1, count: 32)) == .failure(.invalidPropertyList))
        }
    }

    @Test func doubles() {
        func real(_ value: Double) -> ReadOutcome { singleOutcome([0x23] + B.bigEndian(value.bitPattern, size: 8)) }
        #expect(real(1) == .json("1.0"))
        #expect(real(-2.5) == .json("-2.5"))
        #expect(real(0.1) == .json("0.1"))
        #expect(real(0) == .json("0.0"))
        #expect(real(-0.0) == .json("-0.0"))
        #expect(real(1e15) == .json("1000000000000000.0"))
        #expect(real(1e16) == .json("1e+16"))
        #expect(real(1e-5) == .json("1e-05"))
        #expect(real(123456.789) == .json("123456.789"))
        #expect(real(.greatestFiniteMagnitude) == .json("1.7976931348623157e+308"))
        #expect(real(.leastNonzeroMagnitude) == .json("5e-324"))
        #expect(real(.infinity) == .json("\"Infinity\""))
        #expect(real(-.infinity) == .json("\"-Infinity\""))
        #expect(real(.nan) == .json("\"NaN\""))
    }

    @Test func floats() {
        func real(_ value: Float) -> ReadOutcome {
            singleOutcome([0x22] + B.bigEndian(UInt64(value.bitPattern), size: 4))
        }
        #expect(real(0.5) == .json("0.5"))
        #expect(real(3) == .json("3.0"))
        // The float's exact value, printed as the Double it widens to (as plistlib reads it).
        #expect(real(0.1) == .json("0.10000000149011612"))
        #expect(real(.infinity) == .json("\"Infinity\""))
        #expect(real(-.infinity) == .json("\"-Infinity\""))
        #expect(real(.nan) == .json("\"NaN\""))
    }

    @Test func otherRealSizesAreInvalid() {
        #expect(singleOutcome([0x20, 0]) == .failure(.invalidPropertyList))
        #expect(singleOutcome([0x21, 0, 0]) == .failure(.invalidPropertyList))
        #expect(singleOutcome([0x24] + [UInt8](repeating: 0, count: 16)) == .failure(.invalidPropertyList))
    }

    @Test func dates() {
        func date(_ seconds: Double) -> ReadOutcome { singleOutcome([0x33] + B.bigEndian(seconds.bitPattern, size: 8)) }
        #expect(date(0) == .json("\"2001-01-01T00:00:00Z\""))
        #expect(date(5.5) == .json("\"2001-01-01T00:00:05.5Z\""))
        #expect(date(0.25) == .json("\"2001-01-01T00:00:00.25Z\""))
        #expect(date(0.000001) == .json("\"2001-01-01T00:00:00.000001Z\""))
        #expect(date(0.0000001) == .json("\"2001-01-01T00:00:00Z\""))
        #expect(date(-1) == .json("\"2000-12-31T23:59:59Z\""))
        #expect(date(-0.5) == .json("\"2000-12-31T23:59:59.5Z\""))
        #expect(date(3661) == .json("\"2001-01-01T01:01:01Z\""))
        // The Unix epoch: 978307200 s before the reference date.
        #expect(date(-978_307_200) == .json("\"1970-01-01T00:00:00Z\""))
        // Leap day: 2000-02-29 is 307 days before 2001-01-01.
        #expect(date(-307 * 86_400) == .json("\"2000-02-29T00:00:00Z\""))
        // 2100 is not a leap year: 2100-03-01 follows 2100-02-28. 2100-01-01 is 99 * 365 + 24 = 36159 days after
        // 2001-01-01.
        #expect(date(Double(36_159 + 58) * 86_400) == .json("\"2100-02-28T00:00:00Z\""))
        #expect(date(Double(36_159 + 59) * 86_400) == .json("\"2100-03-01T00:00:00Z\""))
        // The ends of the years 1...9999: 730485 days from 0001-01-01 to 2001-01-01; 2921574 days to 10000-01-01.
        #expect(date(-63_113_904_000) == .json("\"0001-01-01T00:00:00Z\""))
        #expect(date(252_423_993_599) == .json("\"9999-12-31T23:59:59Z\""))
        #expect(date(-63_113_904_001) == .failure(.invalidPropertyList))
        #expect(date(252_423_993_600) == .failure(.invalidPropertyList))
        #expect(date(1e300) == .failure(.invalidPropertyList))
        #expect(date(.infinity) == .failure(.invalidPropertyList))
        #expect(date(-.infinity) == .failure(.invalidPropertyList))
        #expect(date(.nan) == .failure(.invalidPropertyList))
    }

    @Test func otherDateMarkersAreInvalid() {
        #expect(singleOutcome([0x30]) == .failure(.invalidPropertyList))
        #expect(singleOutcome([0x32, 0, 0, 0, 0]) == .failure(.invalidPropertyList))
    }

    @Test func data() {
        #expect(singleOutcome([0x40]) == .json("{\"base64\":\"\"}"))
        #expect(singleOutcome([0x43] + Array("abc".utf8)) == .json("{\"base64\":\"YWJj\"}"))
        #expect(singleOutcome([0x44, 0, 1, 2, 3]) == .json("{\"base64\":\"AAECAw==\"}"))
        #expect(singleOutcome([0x45, 0xFF, 0xFE, 0xFD, 0xFC, 0xFB]) == .json("{\"base64\":\"//79/Ps=\"}"))
    }

    @Test func asciiStrings() {
        #expect(singleOutcome([0x50]) == .json("\"\""))
        #expect(singleOutcome([0x55] + Array("hello".utf8)) == .json("\"hello\""))
        // Quote, backslash, newline, tab, U+0001, DEL (not escaped), slash (not escaped).
        #expect(
            singleOutcome([0x57, 0x22, 0x5C, 0x0A, 0x09, 0x01, 0x7F, 0x2F])
                == .json("\"\\\"\\\\\\n\\t\\u0001\u{7F}/\""))
        #expect(singleOutcome([0x53, 0x61, 0x80, 0x62]) == .failure(.invalidPropertyList))
        #expect(singleOutcome([0x51, 0xC3]) == .failure(.invalidPropertyList))
    }

    @Test func utf16Strings() {
        func utf16(_ units: [UInt16]) -> ReadOutcome {
            var b = B()
            let top = b.utf16(units: units)
            return outcome(b.build(top: top))
        }
        #expect(utf16([]) == .json("\"\""))
        #expect(utf16([0x0041, 0x0062]) == .json("\"Ab\""))
        #expect(utf16([0x00E9]) == .json("\"é\""))
        #expect(utf16([0x20AC, 0x0031]) == .json("\"€1\""))
        #expect(utf16([0xD83D, 0xDE00]) == .json("\"😀\""))
        #expect(utf16([0xDBFF, 0xDFFF]) == .json("\"\u{10FFFF}\""))
        #expect(utf16([0x0022, 0x005C, 0x000A, 0x001F, 0x0000]) == .json("\"\\\"\\\\\\n\\u001f\\u0000\""))
        #expect(utf16([0xFEFF, 0xFFFF]) == .json("\"\u{FEFF}\u{FFFF}\""))
        // Longer mixed text exercises the four-unit fast path and its exits.
        let text = "plain ascii text, then \"quoted\" and ümlauts and 😀 and more ascii to finish"
        #expect(
            utf16(Array(text.utf16))
                == .json(#""plain ascii text, then \"quoted\" and ümlauts and 😀 and more ascii to finish""#))
    }

    @Test func unpairedSurrogatesAreInvalid() {
        func utf16(_ units: [UInt16]) -> ReadOutcome {
            var b = B()
            let top = b.utf16(units: units)
            return outcome(b.build(top: top))
        }
        #expect(utf16([0xD83D]) == .failure(.invalidPropertyList))
        #expect(utf16([0xDE00]) == .failure(.invalidPropertyList))
        #expect(utf16([0xD83D, 0x0041]) == .failure(.invalidPropertyList))
        #expect(utf16([0x0041, 0xDE00, 0xD83D]) == .failure(.invalidPropertyList))
        #expect(utf16([0xD83D, 0xD83D, 0xDE00]) == .failure(.invalidPropertyList))
    }

    @Test func oddLengthUTF16IsInvalid() {
        // Two units declared, three bytes before the offset table.
        #expect(singleOutcome([0x62, 0x00, 0x41, 0x00]) == .failure(.invalidPropertyList))
        #expect(singleOutcome([0x61, 0x00]) == .failure(.invalidPropertyList))
    }

    @Test func utf8StringsAndOrderedSetsAreInvalid() {
        #expect(singleOutcome([0x71, 0x41]) == .failure(.invalidPropertyList))
        var b = B()
        let one = b.int(1)
        let ordered = b.raw([0xB1, UInt8(one)])
        #expect(outcome(b.build(top: ordered)) == .failure(.invalidPropertyList))
        for marker: UInt8 in [0x70, 0x90, 0xE0, 0xF0, 0xFF] {
            #expect(singleOutcome([marker]) == .failure(.invalidPropertyList))
        }
    }

    @Test func uids() {
        #expect(singleOutcome([0x80, 0x05]) == .json("{\"CF$UID\":5}"))
        #expect(singleOutcome([0x81, 0x01, 0x00]) == .json("{\"CF$UID\":256}"))
        #expect(singleOutcome([0x83, 0x00, 0x01, 0x00, 0x00]) == .json("{\"CF$UID\":65536}"))
        #expect(
            singleOutcome([0x87] + [UInt8](repeating: 0xFF, count: 8)) == .json("{\"CF$UID\":18446744073709551615}"))
        #expect(singleOutcome([0x8F] + [UInt8](repeating: 0, count: 15) + [9]) == .json("{\"CF$UID\":9}"))
        #expect(singleOutcome([0x88, 0x01] + [UInt8](repeating: 0, count: 8)) == .failure(.invalidPropertyList))
        #expect(singleOutcome([0x83, 0x00, 0x01]) == .failure(.invalidPropertyList))
    }

    @Test func arrays() {
        var b = B()
        let one = b.int(1)
        let a = b.ascii("a")
        let t = b.bool(true)
        let empty = b.array([])
        let top = b.array([one, a, t, empty, one])
        #expect(outcome(b.build(top: top)) == .json("[1,\"a\",true,[],1]"))
        #expect(outcome(b.build(top: empty)) == .json("[]"))
    }

    @Test func sets() {
        // The literal hostile case: a set holding the integer 1, as one object... plus its element.
        var b = B()
        let set = b.raw([0xC1, 0x01])
        _ = b.raw([0x10, 0x01])
        #expect(outcome(b.build(top: set)) == .json("[1]"))
        var c = B()
        let x = c.ascii("x")
        let y = c.real(2)
        let s = c.set([x, y])
        let e = c.set([])
        let top = c.array([s, e])
        #expect(outcome(c.build(top: top)) == .json("[[\"x\",2.0],[]]"))
    }

    @Test func dictionaries() {
        var b = B()
        let ka = b.ascii("a")
        let kb = b.utf16("bé")
        let one = b.int(1)
        let two = b.int(2)
        let list = b.array([two])
        let empty = b.dict([], [])
        // Members in file order (not sorted), duplicate keys kept as they come.
        let top = b.dict([kb, ka, ka, kb], [one, list, empty, two])
        #expect(outcome(b.build(top: top)) == .json("{\"bé\":1,\"a\":[2],\"a\":{},\"bé\":2}"))
        #expect(outcome(b.build(top: empty)) == .json("{}"))
    }

    @Test func dictionaryKeysMustBeStrings() {
        for makeKey in [
            { (b: inout B) in b.int(1) }, { (b: inout B) in b.data([0x61]) },
            { (b: inout B) in b.array([]) }, { (b: inout B) in b.null() },
            { (b: inout B) in b.uid([1]) },
        ] {
            var b = B()
            let key = makeKey(&b)
            let value = b.int(2)
            let top = b.dict([key], [value])
            #expect(outcome(b.build(top: top)) == .failure(.invalidPropertyList))
        }
    }

    @Test func keysEscapeLikeValues() {
        var b = B()
        let key = b.ascii("q\"\\\n")
        let value = b.ascii("v")
        let top = b.dict([key], [value])
        #expect(outcome(b.build(top: top)) == .json("{\"q\\\"\\\\\\n\":\"v\"}"))
    }

    @Test func sharedObjectsAreWrittenOncePerUse() {
        var b = B()
        let s = b.ascii("shared")
        let inner = b.array([s, s])
        let top = b.array([inner, inner, s])
        #expect(outcome(b.build(top: top)) == .json("[[\"shared\",\"shared\"],[\"shared\",\"shared\"],\"shared\"]"))
    }

    @Test func countsInIntegerObjects() {
        // 20 array elements: 0xAF 0x10 0x14.
        var b = B()
        let refs = (0..<20).map { b.int(Int64($0)) }
        let top = b.array(refs)
        let expected = "[" + (0..<20).map(String.init).joined(separator: ",") + "]"
        #expect(outcome(b.build(top: top)) == .json(expected))
        #expect(b.objects[top].prefix(3) == [0xAF, 0x10, 0x14])

        // Short counts in the long form, with 1, 2, 4 and 8-byte count integers.
        for size in [1, 2, 4, 8] {
            let string = B.header(0x5, count: 3, countSize: size) + Array("xyz".utf8)
            #expect(singleOutcome(string) == .json("\"xyz\""), "count size \(size)")
            let data = B.header(0x4, count: 2, countSize: size) + [0xFF, 0xFF]
            #expect(singleOutcome(data) == .json("{\"base64\":\"//8=\"}"), "count size \(size)")
        }
        // A 15-character string needs the long form.
        var c = B()
        let fifteen = c.ascii("abcdefghijklmno")
        #expect(c.objects[fifteen].prefix(3) == [0x5F, 0x10, 0x0F])
        #expect(outcome(c.build(top: fifteen)) == .json("\"abcdefghijklmno\""))
        // UTF-16: the count is in units (15 units = 30 bytes).
        var d = B()
        let wide = d.utf16("ééééééééééééééé")
        #expect(d.objects[wide].prefix(3) == [0x6F, 0x10, 0x0F])
        #expect(outcome(d.build(top: wide)) == .json("\"ééééééééééééééé\""))
        // A dictionary with 16 members.
        var e = B()
        let keys = (0..<16).map { e.ascii("k\($0)") }
        let values = (0..<16).map { e.bool($0 % 2 == 0) }
        let dict = e.dict(keys, values)
        let dictExpected = "{" + (0..<16).map { "\"k\($0)\":\($0 % 2 == 0)" }.joined(separator: ",") + "}"
        #expect(outcome(e.build(top: dict)) == .json(dictExpected))
    }

    @Test func badCountObjects() {
        // The count is not an integer object, is a 16-byte integer, or is negative.
        #expect(singleOutcome([0x5F, 0x23] + [UInt8](repeating: 0, count: 8)) == .failure(.invalidPropertyList))
        #expect(singleOutcome([0x5F, 0x14] + [UInt8](repeating: 0, count: 16)) == .failure(.invalidPropertyList))
        #expect(singleOutcome([0x5F, 0x13] + [UInt8](repeating: 0xFF, count: 8)) == .failure(.invalidPropertyList))
        // The count integer itself is cut off by the offset table.
        #expect(singleOutcome([0x5F, 0x11, 0x00]) == .failure(.invalidPropertyList))
        #expect(singleOutcome([0x5F]) == .failure(.invalidPropertyList))
    }

    @Test(arguments: 1...8, 1...8)
    func offsetAndReferenceSizes(offsetSize: Int, refSize: Int) {
        var b = B(refSize: refSize)
        let k = b.ascii("key")
        let v = b.int(300)
        let s = b.utf16("ü")
        let list = b.array([v, s])
        let top = b.dict([k], [list])
        let file = b.build(top: top, offsetSize: offsetSize)
        #expect(outcome(file) == .json("{\"key\":[300,\"ü\"]}"))
    }

    @Test func topObjectNeedNotBeFirstOrContainer() {
        var b = B()
        _ = b.ascii("unused")
        let s = b.ascii("top")
        _ = b.int(5)
        #expect(outcome(b.build(top: s)) == .json("\"top\""))
    }

    @Test func appendsAfterExistingOutput() throws {
        var b = B()
        let s = b.ascii("x")
        let top = b.array([s])
        let result = readFull(b.build(top: top))
        #expect(try result.get() == Array("[\"x\"]".utf8))
    }

    @Test func realisticDocument() {
        let value = PlistValue.dict([
            ("name", .string("Zoë")),
            ("count", .int(-12)),
            ("ratio", .real(0.75)),
            ("when", .date(86_400 * 366 + 0.125)),
            ("blob", .data([1, 2, 3])),
            ("flags", .array([.bool(true), .bool(false), .null])),
            ("nested", .dict([("name", .string("inner"))])),
        ])
        let expected =
            #"{"name":"Zoë","count":-12,"ratio":0.75,"when":"2002-01-02T00:00:00.125Z","#
            + #""blob":{"base64":"AQID"},"flags":[true,false,null],"nested":{"name":"inner"}}"#
        #expect(outcome(B.file(value)) == .json(expected))
        #expect(outcome(B.file(value, refSize: 1)) == .json(expected))
    }
}
