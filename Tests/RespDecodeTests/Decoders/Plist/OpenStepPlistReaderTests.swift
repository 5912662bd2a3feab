import Foundation
import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// The OpenStep reader (docs/decoding.md#openstep-property-lists): Foundation's syntax and verdicts (checked against
/// Swift 6.3.1 Foundation on Linux when these were written), GNUstep's typed values, the limits.
@Suite("OpenStep property lists")
struct OpenStepPlistReaderTests {
    static func value(_ text: String, configure: (inout Configuration) -> Void = { _ in }) -> String? {
        decodePlist(Array(text.utf8), configure: configure).value
    }

    static func error(_ text: String, configure: (inout Configuration) -> Void = { _ in }) -> RecordError? {
        decodePlist(Array(text.utf8), configure: configure).error
    }

    @Test func containersAndStrings() {
        #expect(
            Self.value(#"{ a = b; "c d" = ( 1, "2", ); e = {}; f = (); }"#)
                == #"{"a":"b","c d":["1","2"],"e":{},"f":[]}"#)
        #expect(Self.value("( a$b:c/d.e_f-g )") == #"["a$b:c/d.e_f-g"]"#)
        #expect(Self.value("abc") == #""abc""#, "a lone string")
        #expect(Self.value(#""""#) == #""""#)
        #expect(Self.value("{ a; }") == #"{"a":"a"}"#, "key; means key = key")
        // Every scalar is a string, as Foundation reads them.
        #expect(Self.value("( -1337, 0.25, YES )") == #"["-1337","0.25","YES"]"#)
        #expect(Self.value("{ a = 1; a = 2; }") == #"{"a":"1","a":"2"}"#, "duplicates written as they come")
    }

    @Test func escapes() {
        #expect(Self.value(#"( "\a\b\f\n\r\t\v\"\\\'\?" )"#) == #"["\u0007\b\f\n\r\t\u000b\"\\'?"]"#)
        #expect(Self.value(#"( "key&\102" )"#) == #"["key&B"]"#, "octal")
        #expect(Self.value(#"( "\351\101" )"#) == #"["ØA"]"#, "octal above 127 is NeXTSTEP")
        #expect(Self.value(#"( "\777" )"#) == #"["\u0000"]"#, "kept to a byte; 0xFF has no NeXTSTEP character")
        #expect(Self.value(#"( "\U0042\U00411" )"#) == #"["BA1"]"#, "at most four hex digits")
        #expect(Self.value(#"( "\U41x" )"#) == #"["Ax"]"#)
        #expect(Self.value(#"( "\Ud83d\Ude00" )"#) == #"["😀"]"#, "a surrogate pair")
        #expect(Self.value(#"( "\Ud83dx" )"#) == #"["�x"]"#, "a lone surrogate")
        #expect(Self.value(#"{ "Hello" = "Worl\d"; }"#) == #"{"Hello":"World"}"#, "unknown escape: the character")
        #expect(Self.value("( \"a\\\nb\" )") == #"["a\nb"]"#)
        #expect(Self.value(#"( "\é" )"#) == #"["é"]"#)
    }

    @Test func stringsTables() {
        #expect(Self.value(#"/* c */ "a" = "b"; // x"# + "\n" + #"c = ( x ); "d";"#) == #"{"a":"b","c":["x"],"d":"d"}"#)
        #expect(Self.value("a = { b = c; };") == #"{"a":{"b":"c"}}"#)
        #expect(Self.value("  /* only a comment */ ") == "{}", "an empty table")
        #expect(Self.error(#""a" = "b""#)?.code == .invalidPropertyList, "missing ;")
        #expect(Self.error(#""a" = "b"; c"#)?.code == .invalidPropertyList)
    }

    @Test func dataAndComments() {
        #expect(Self.value("< 41 42 >") == #"{"base64":"QUI="}"#)
        #expect(Self.value("<>") == #"{"base64":""}"#)
        #expect(Self.value("<aBcD>") == #"{"base64":"q80="}"#)
        #expect(Self.value("<[qqq7u8zM]>") == #"{"base64":"qqq7u8zM"}"#, "GNUstep base64")
        #expect(Self.error("<414>")?.code == .invalidPropertyList, "uneven")
        #expect(Self.error("<4 1>")?.code == .invalidPropertyList)
        #expect(Self.error("<41 /* x */ 42>")?.code == .invalidPropertyList, "no comments in data")
        #expect(Self.value("( a /* x */, // y\n b )") == #"["a","b"]"#)
        #expect(Self.error("( a //x\r b )")?.code == .invalidPropertyList, "a CR does not end a // comment")
        #expect(Self.error("( a /* x")?.code == .invalidPropertyList, "unterminated comment")
    }

    @Test func gnustepTypedValues() {
        #expect(
            Self.value("( <*I87>, <*I-9223372036854775808>, <*R3.14159>, <*BY>, <*BN>, <*D2011-11-28 09:21:30 +0000> )")
                == #"[87,-9223372036854775808,3.14159,true,false,"2011-11-28T09:21:30Z"]"#)
        #expect(Self.value("<*D2001-01-01 01:00:00 +0100>") == #""2001-01-01T00:00:00Z""#)
        #expect(Self.error("<*I12x>")?.code == .invalidPropertyList)
        #expect(Self.error("<*BYES>")?.code == .invalidPropertyList)
        #expect(Self.error("<*D2011-13-28 09:21:30 +0000>")?.code == .invalidPropertyList)
        #expect(Self.error("<*X1>")?.code == .invalidPropertyList)
        #expect(Self.error("<*I" + String(repeating: "0", count: 65) + ">")?.code == .invalidPropertyList)
        #expect(Self.value("<*I" + String(repeating: "0", count: 64) + ">") == "0")
    }

    @Test func errorsSayWhere() throws {
        let error = try #require(Self.error("{\n  a = b;\n  c = d\n}"))
        #expect(error.code == .invalidPropertyList)
        #expect(error.location == .init(offset: 19, line: 4, column: 1), "\(error)")
        #expect(Self.error("( a, , )")?.code == .invalidPropertyList)
        #expect(Self.error("( a ) b")?.code == .invalidPropertyList)
        #expect(Self.error("{ = b; }")?.code == .invalidPropertyList)
        #expect(Self.error("{ {a=b} = c; }")?.code == .invalidPropertyList)
        #expect(Self.error("( a+b )")?.code == .invalidPropertyList)
        #expect(Self.error("( クオート )")?.code == .invalidPropertyList, "unquoted strings are ASCII")
        #expect(Self.error("( \"abc")?.code == .invalidPropertyList)
        #expect(Self.error("( a")?.code == .invalidPropertyList)
        #expect(decodePlist([0x28, 0x22, 0xE9, 0x22, 0x29]).error?.code == .invalidPropertyList, "not UTF-8")
    }

    @Test func encodings() {
        let text = "{ a = (\"ü\", b); }"
        let want = #"{"a":["ü","b"]}"#
        #expect(decodePlist([0xEF, 0xBB, 0xBF] + Array(text.utf8)).value == want)
        #expect(decodePlist([0xFE, 0xFF] + Array(text.data(using: .utf16BigEndian)!)).value == want)
        #expect(decodePlist([0xFF, 0xFE] + Array(text.data(using: .utf16LittleEndian)!)).value == want)
        #expect(decodePlist([0, 0, 0xFE, 0xFF] + Array(text.data(using: .utf32BigEndian)!)).value == want)
        #expect(decodePlist([0xFF, 0xFE, 0, 0] + Array(text.data(using: .utf32LittleEndian)!)).value == want)
        #expect(decodePlist([0xFE, 0xFF, 0x00, 0x28, 0xD8, 0x00, 0x00, 0x29]).error?.code == .invalidPropertyList)
        #expect(decodePlist([0xFF, 0xFE, 0x28, 0x00, 0x29]).error?.code == .invalidPropertyList, "odd length")
        // The UTF-8 text of a UTF-16 body counts against the decoded body limit before it is made.
        let wide =
            [0xFF, 0xFE] + Array("( \"\(String(repeating: "中", count: 100))\" )".data(using: .utf16LittleEndian)!)
        #expect(decodePlist(wide) { $0.limits.maxDecodedBodyBytes = 300 }.error?.code == .limitExceeded)
        #expect(decodePlist(wide) { $0.limits.maxDecodedBodyBytes = 306 }.value != nil)
    }

    @Test(.enabled(if: Corpora.available, Corpora.skipComment))
    func ddPlistFilesGiveTheirValues() throws {
        let ascii = try #require(decodePlist(try Corpora.bytes("plist/dd-plist/test-ascii.plist")).value)
        #expect(ascii == #"{"key&B":"value&B==","key2":"strangestring\\\"","key3":"strangestring\\"}"#)
        // The same document in five encodings, rejected (as Foundation rejects it) at its unquoted `クオート無し`: the
        // UTF-8 one has one more line (a `// !$*UTF8*$!` comment).
        for (name, line) in [("utf-8", 7), ("utf-16be", 6), ("utf-16le", 6), ("utf-32be", 6), ("utf-32le", 6)] {
            let error = decodePlist(try Corpora.bytes("plist/dd-plist/test-ascii-\(name).plist")).error
            #expect(error?.code == .invalidPropertyList, "\(name)")
            #expect(
                error?.location?.line == line && error?.location?.column == 19, "\(name): \(String(describing: error))")
        }
        let gnustep = try #require(decodePlist(try Corpora.bytes("plist/dd-plist/test1-ascii-gnustep.plist")).value)
        #expect(
            gnustep
                == #"{"keyA":"valueA","key&B":"value&B","date":"2011-11-28T09:21:30Z","data":{"base64":"AAAABBBBCCCC"},"array":[true,false,87,3.14159]}"#
        )
        let base64 = try #require(
            decodePlist(try Corpora.bytes("plist/dd-plist/test1-ascii-gnustep-base64.plist")).value)
        #expect(base64 == gnustep.replacingOccurrences(of: "AAAABBBBCCCC", with: "qqq7u8zM"))
    }

    @Test func limits() {
        let deep = String(repeating: "(", count: 20) + String(repeating: ")", count: 20)
        #expect(Self.error(deep) { $0.limits.maxDepth = 19 }?.code == .limitExceeded)
        #expect(Self.value(deep) { $0.limits.maxDepth = 20 } != nil)
        let many = "(" + Array(repeating: "a", count: 100).joined(separator: ",") + ")"
        #expect(Self.error(many) { $0.limits.maxPlistObjects = 100 }?.code == .limitExceeded)
        #expect(Self.value(many) { $0.limits.maxPlistObjects = 101 } != nil)
        #expect(Self.error("{ a; b; }") { $0.limits.maxPlistObjects = 4 }?.code == .limitExceeded, "key; is two")
        #expect(
            Self.error(#"( "\#(String(repeating: "x", count: 200))" )"#) { $0.limits.maxValueBytes = 100 }?.code
                == .limitExceeded)
        #expect(
            Self.error(#"( "\n\#(String(repeating: "x", count: 200))" )"#) { $0.limits.maxValueBytes = 100 }?.code
                == .limitExceeded)
        #expect(
            Self.error("<" + String(repeating: "41", count: 200) + ">") { $0.limits.maxValueBytes = 100 }?.code
                == .limitExceeded)
    }
}
