import Foundation
import Testing

@testable import RespDecode

/// XML property lists through the plist decoder (``XMLPlistReader`` on libxml2), and the decoder's format dispatch.
@Suite("XML property lists")
struct XMLPlistReaderTests {
    static func plist(_ content: String) -> String {
        #"<?xml version="1.0" encoding="UTF-8"?><plist version="1.0">"# + content + "</plist>"
    }

    static func value(_ content: String, configure: (inout Configuration) -> Void = { _ in }) -> String? {
        decodePlist(Array(plist(content).utf8), configure: configure).value
    }

    static func error(_ content: String, configure: (inout Configuration) -> Void = { _ in }) -> RecordError? {
        decodePlist(Array(plist(content).utf8), configure: configure).error
    }

    @Test func everyElementType() {
        let content = """
            <dict>
              <key>s</key><string>a &amp; "b"</string>
              <key>e</key><string/>
              <key>i</key><integer>-42</integer>
              <key>r</key><real>1.5</real>
              <key>t</key><true/>
              <key>f</key><false/>
              <key>d</key><date>2001-01-01T00:00:00Z</date>
              <key>b</key><data>
                AAEC
                /w==
              </data>
              <key>a</key><array><integer>1</integer><array/><dict/></array>
            </dict>
            """
        #expect(
            Self.value(content) == #"{"s":"a & \"b\"","e":"","i":-42,"r":1.5,"t":true,"f":false,"#
                + #""d":"2001-01-01T00:00:00Z","b":{"base64":"AAEC/w=="},"a":[1,[],{}]}"#)
    }

    @Test func rootMayBeBare() {
        #expect(decodePlist(Array("<array><string>x</string></array>".utf8)).value == #"["x"]"#)
        #expect(decodePlist(Array("<string>only</string>".utf8)).value == #""only""#)
    }

    @Test func longStringsAreWrittenAsTheyArrive() {
        // Strings are escaped into the output piece by piece as libxml2 delivers them; multi-byte characters and
        // escapes must survive its chunking, in text, entities and CDATA alike.
        let text = String(repeating: "aé😀\"\\\t", count: 50_000)
        let escaped = String(repeating: #"aé😀\"\\\t"#, count: 50_000)
        #expect(
            Self.value("<string>\(text.replacingOccurrences(of: "\"", with: "&quot;"))</string>") == "\"\(escaped)\"")
        #expect(Self.value("<string><![CDATA[\(text)]]></string>") == "\"\(escaped)\"")
        #expect(
            Self.value("<dict><key>\(text.replacingOccurrences(of: "\"", with: "&#34;"))</key><true/></dict>")
                == "{\"\(escaped)\":true}")
    }

    @Test func integers() {
        #expect(Self.value("<integer>0x73709551615</integer>") == "7932961166869") // libplist's hex.plist
        #expect(Self.value("<integer> 18446744073709551615 </integer>") == "18446744073709551615")
        #expect(Self.value("<integer>-9223372036854775808</integer>") == "-9223372036854775808")
        #expect(Self.value("<integer>+7</integer>") == "7")
        #expect(Self.value("<integer>007</integer>") == "7")
        for bad in [
            "42xy", "", "18446744073709551616", "-9223372036854775809", "1.0", "0x", "- 1", "1e3", "-0x10", "+0x10",
        ] {
            #expect(Self.error("<integer>\(bad)</integer>")?.code == .invalidPropertyList, "\(bad)")
        }
    }

    @Test func reals() {
        #expect(Self.value("<real>0.1</real>") == "0.1")
        #expect(Self.value("<real>-2</real>") == "-2.0")
        #expect(Self.value("<real>1e300</real>") == "1e+300")
        #expect(Self.value("<real>.5</real>") == "0.5")
        // dd-plist's infinity-xml.plist; JSON has no infinities, so they are strings.
        #expect(
            Self.value("<array><real>+infinity</real><real>-inf</real><real>nan</real></array>")
                == #"["Infinity","-Infinity","NaN"]"#)
        for bad in ["", "abc", "0x1p3", "1e", "--1", "1.2.3"] {
            #expect(Self.error("<real>\(bad)</real>")?.code == .invalidPropertyList, "\(bad)")
        }
    }

    @Test func dates() {
        #expect(Self.value("<date>2024-02-29T23:59:59Z</date>") == #""2024-02-29T23:59:59Z""#)

        #expect(Self.value("<date>0001-01-01T00:00:00Z</date>") == #""0001-01-01T00:00:00Z""#)
        for bad in ["2023-02-29T00:00:00Z", "2024-13-01T00:00:00Z", "2024-01-01T24:00:00Z", "2024-01-01", "now"] {
            #expect(Self.error("<date>\(bad)</date>")?.code == .invalidPropertyList, "\(bad)")
        }
    }

    @Test func data() {
        #expect(Self.value("<data></data>") == #"{"base64":""}"#)
        #expect(Self.value("<data>YQ</data>") == #"{"base64":"YQ=="}"#, "missing padding is tolerated")
        for bad in ["Y", "YQ===", "Y*Q=", "YQ==YQ=="] {
            #expect(Self.error("<data>\(bad)</data>")?.code == .invalidPropertyList, "\(bad)")
        }
    }

    @Test func structureErrors() {
        let cases = [
            "<dict><string>no key</string></dict>",
            "<dict><key>a</key></dict>",
            "<dict><key>a</key><key>b</key><true/></dict>",
            "<array><key>a</key></array>",
            "<array>text</array>",
            "<dict>text<key>a</key><true/></dict>",
            "<unknown/>",
            "<true>yes</true>",
            "<string>a<b/>c</string>",
            "<true/><false/>",
            "",
            "<plist><true/></plist>",
        ]
        for content in cases {
            #expect(Self.error(content)?.code == .invalidPropertyList, "\(content)")
        }
        #expect(decodePlist(Array("<plist><key>x</key".utf8)).error?.code == .invalidPropertyList)
        let notXML = decodePlist(Array("<plist><dict></plist>".utf8)).error
        #expect(notXML?.code == .invalidPropertyList && notXML?.location?.line == 1)
    }

    @Test func limits() {
        let deep = String(repeating: "<array>", count: 513) + String(repeating: "</array>", count: 513)
        #expect(Self.error(deep)?.code == .limitExceeded)
        let ok = String(repeating: "<array>", count: 512) + String(repeating: "</array>", count: 512)
        #expect(Self.value(ok) != nil)
        let many = "<array>" + String(repeating: "<true/>", count: 100) + "</array>"
        #expect(Self.error(many) { $0.limits.maxPlistObjects = 100 }?.code == .limitExceeded)
        #expect(Self.value(many) { $0.limits.maxPlistObjects = 101 } != nil)
        #expect(Self.error(many) { $0.limits.maxValueBytes = 100 }?.code == .limitExceeded)
        // The same safety settings as the xml decoder: entity bombs and external entities go nowhere.
        var dtd = #"<!ENTITY l0 "lol">"#
        for level in 1...9 { dtd += "<!ENTITY l\(level) \"" + String(repeating: "&l\(level - 1);", count: 10) + "\">" }
        let bomb = "<!DOCTYPE plist [\(dtd)]><plist><string>&l9;</string></plist>"
        #expect(decodePlist(Array(bomb.utf8)).error != nil)
    }

    @Test func formatDispatch() {
        #expect(decodePlist([]).value == nil && decodePlist([]).error == nil, "empty: no value, no error")
        // OpenStep text goes to OpenStepPlistReader (OpenStepPlistReaderTests), XML to libxml2.
        #expect(decodePlist(Array(#"{ a = b; }"#.utf8)).value == #"{"a":"b"}"#)
        #expect(decodePlist(Array("\u{FEFF}( a, b )".utf8)).value == #"["a","b"]"#)
        #expect(decodePlist(Array("<dict/>".utf8)).value == "{}")
        #expect(decodePlist(Array(" <data>QUI=</data>".utf8)).value == #"{"base64":"QUI="}"#)
        #expect(decodePlist(Array(" <4142>".utf8)).value == #"{"base64":"QUI="}"#)
        #expect(
            decodePlist(Array("bplist15xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx".utf8)).error?.code
                == .invalidPropertyList)
        // The smallest binary plist: one `true` (object 0 at offset 8), an offset table, the trailer.
        var binary = Array("bplist00".utf8) + [0x09, 0x08]
        binary += [0, 0, 0, 0, 0, 0, 1, 1] + [0, 0, 0, 0, 0, 0, 0, 1] + [UInt8](repeating: 0, count: 8)
        binary += [0, 0, 0, 0, 0, 0, 0, 9]
        #expect(decodePlist(binary).value == "true")
    }

    @Test func utf16And32Plists() {
        let text = Self.plist("<string>ü</string>")
        #expect(decodePlist(Array(text.data(using: .utf16)!)).value == #""ü""#)
        let declared = text.replacingOccurrences(of: "UTF-8", with: "UTF-16BE")
        #expect(decodePlist(Array(declared.data(using: .utf16BigEndian)!)).value == #""ü""#)
        // UTF-32, which libxml2 2.9.14 cannot read, with and without a byte order mark, in both orders.
        let utf32 = text.replacingOccurrences(of: "UTF-8", with: "UTF-32")
        #expect(decodePlist(Array(utf32.data(using: .utf32)!)).value == #""ü""#)
        #expect(decodePlist(Array(utf32.data(using: .utf32BigEndian)!)).value == #""ü""#)
        #expect(decodePlist(Array(utf32.data(using: .utf32LittleEndian)!)).value == #""ü""#)
    }
}
