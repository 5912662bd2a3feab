import Foundation
import Testing

@testable import RespDecode

/// What the xml decoder gave for one body: the JSON value text, or the error; and the warnings.
struct XMLOutcome {
    var value: String?
    var error: RecordError?
    var warnings: [String]
}

/// Runs the xml decoder on `body` and checks that a failure leaves the output buffer as it was.
func decodeXML(
    _ body: [UInt8], charset: String? = nil, configure: (inout Configuration) -> Void = { _ in }
) -> XMLOutcome {
    var configuration = Configuration()
    configure(&configuration)
    var context = DecodingContext(
        mimeType: "application/xml", charset: charset, options: configuration.decoding.options)
    let out = OutputBuffer()
    out.append(ascii: "prefix")
    do {
        let wrote = try body.withUnsafeBufferPointer { try XMLBodyDecoder().decode($0, context: &context, into: out) }
        let value = String(decoding: out.bytes[6...], as: UTF8.self)
        #expect(wrote || value.isEmpty)
        return XMLOutcome(value: wrote ? value : nil, error: nil, warnings: context.warnings)
    } catch {
        #expect(out.count == 6, "a failed decode must leave the output as it was")
        #expect(error is RecordError)
        return XMLOutcome(value: nil, error: error as? RecordError, warnings: context.warnings)
    }
}

func decodeXML(_ text: String, charset: String? = nil, configure: (inout Configuration) -> Void = { _ in })
    -> XMLOutcome
{
    decodeXML(Array(text.utf8), charset: charset, configure: configure)
}

@Suite("XML decoder")
struct XMLDecoderTests {
    @Test func afnetworkingDocument() {
        // The body of AFXMLParserResponseSerializerTests and AFXMLDocumentResponseSerializerTests.
        let result = decodeXML(
            #"<?xml version="1.0" encoding="UTF-8"?><foo attr1="1" attr2="2"><bar>someValue</bar></foo>"#)
        #expect(
            result.value
                == #"{"name":"foo","attributes":{"attr1":"1","attr2":"2"},"children":[{"name":"bar","children":["someValue"]}]}"#
        )
        #expect(result.warnings.isEmpty)
    }

    @Test func namespacesKeepPrefixesAndDeclarations() {
        let result = decodeXML(
            #"<s:E xmlns:s="urn:s" xmlns="urn:d"><s:B><a s:x="1" y="2">t</a></s:B><c xmlns=""/></s:E>"#)
        #expect(
            result.value == #"{"name":"s:E","namespace":"urn:s","attributes":{"xmlns:s":"urn:s","xmlns":"urn:d"},"#
                + #""children":[{"name":"s:B","namespace":"urn:s","children":[{"name":"a","namespace":"urn:d","#
                + #""attributes":{"s:x":"1","y":"2"},"children":["t"]}]},{"name":"c","attributes":{"xmlns":""}}]}"#)
    }

    @Test func textCDATAAndEntitiesMergeCommentsAndPIsGo() {
        let result = decodeXML(
            #"<!DOCTYPE r [<!ENTITY e "one &amp; <b>two</b>">]><r>x &e;<![CDATA[<raw>]]>&#65;&lt;<!--c--><?pi d?>y</r>"#
        )
        #expect(result.value == #"{"name":"r","children":["x one & ",{"name":"b","children":["two"]},"<raw>A<y"]}"#)
    }

    @Test func attributeValuesAreNormalizedAndSubstituted() {
        let result = decodeXML("<!DOCTYPE r [<!ENTITY e \"E\">]><r a=\"&e;&#9;\n&quot;\\\"/>")
        // A literal tab and line feed become spaces (XML 1.0 §3.3.3); character references stay as written.
        #expect(result.value == #"{"name":"r","attributes":{"a":"E\t \"\\"}}"#)
    }

    @Test func whitespaceOnlyTextIsDroppedUnlessKept() {
        // Between elements (docs/output.md#the-result-line) white space goes; white space that is an element's whole
        // content stays,
        // whether written plainly, as a character reference or in CDATA.
        let body = "<a>\n  <b> </b>\n  <c>x y</c>\n</a>"
        #expect(
            decodeXML(body).value
                == #"{"name":"a","children":[{"name":"b","children":[" "]},{"name":"c","children":["x y"]}]}"#)
        #expect(
            decodeXML("<r><sep>&#10;</sep>\n<c><![CDATA[  ]]></c> <e></e> x </r>").value
                == #"{"name":"r","children":[{"name":"sep","children":["\n"]},{"name":"c","children":["  "]},{"name":"e"}," x "]}"#
        )
        let kept = decodeXML(body) { $0.decoding.options.xmlKeepWhitespace = true }
        #expect(
            kept.value == #"{"name":"a","children":["\n  ",{"name":"b","children":[" "]},"\n  ","#
                + #"{"name":"c","children":["x y"]},"\n"]}"#)
    }

    @Test func stringsAreEscapedForJSON() {
        let result = decodeXML("<a q='\"\\'>\u{7F}\t\"\\é😀</a>")
        #expect(
            result.value
                == "{\"name\":\"a\",\"attributes\":{\"q\":\"\\\"\\\\\"},\"children\":[\"\u{7F}\\t\\\"\\\\é😀\"]}")
    }

    @Test func declaredEncodingsAreHonoured() {
        let latin1: [UInt8] =
            Array(#"<?xml version="1.0" encoding="ISO-8859-1"?><a>caf"#.utf8) + [0xE9] + Array("</a>".utf8)
        #expect(decodeXML(latin1).value == #"{"name":"a","children":["café"]}"#)
        let utf16 = Array("<a>ü</a>".data(using: .utf16)!) // with a byte order mark
        #expect(decodeXML(utf16).value == #"{"name":"a","children":["ü"]}"#)
        let utf16be = Array(#"<?xml version="1.0" encoding="UTF-16BE"?><a>ü</a>"#.data(using: .utf16BigEndian)!)
        #expect(decodeXML(utf16be).value == #"{"name":"a","children":["ü"]}"#)
    }

    @Test func utf32AndUnmarkedUTF16() {
        let text = #"<?xml version="1.0" encoding="UTF-32"?><a>ü😀</a>"#
        for encoding: String.Encoding in [.utf32, .utf32BigEndian, .utf32LittleEndian] {
            #expect(decodeXML(Array(text.data(using: encoding)!)).value == #"{"name":"a","children":["ü😀"]}"#)
        }
        // `charset=utf-16` names no byte order: it is read from the first character, with or without a declaration.
        let utf16 = Array(#"<?xml version="1.0" encoding="UTF-16"?><r>xxxxxé</r>"#.data(using: .utf16BigEndian)!)
        #expect(decodeXML(utf16, charset: "utf-16").value == #"{"name":"r","children":["xxxxxé"]}"#)
        for encoding: String.Encoding in [.utf16BigEndian, .utf16LittleEndian] {
            let bare = Array("<r>hé</r>".data(using: encoding)!)
            #expect(decodeXML(bare, charset: "utf-16").value == #"{"name":"r","children":["hé"]}"#, "\(encoding)")
        }
    }

    @Test func encodingErrorsSayWhatFailed() throws {
        let error = try #require(
            decodeXML([0x3C, 0x72, 0x3E, 0x81, 0x3C, 0x2F, 0x72, 0x3E], charset: "shift_jis").error)
        #expect(error.code == .invalidXML)
        #expect(error.message.hasPrefix("input conversion failed"), "\(error.message)")
    }

    @Test func errorsInEntityTextPointAtTheReference() throws {
        let error = try #require(decodeXML("<!DOCTYPE r [<!ENTITY e \"<a>\">]>\n\n\n<r>xxxxxxxxxxxxxxxx&e;</r>").error)
        #expect(error.location?.line == 4)
    }

    @Test func charsetParameterOverridesTheDeclaration() {
        // RFC 7303 §3: the charset parameter wins over the encoding declaration, and a byte order mark over both.
        let latin1: [UInt8] = Array("<a>caf".utf8) + [0xE9] + Array("</a>".utf8)
        #expect(decodeXML(latin1, charset: "iso-8859-1").value == #"{"name":"a","children":["café"]}"#)
        #expect(decodeXML(latin1).error?.code == .invalidXML, "without the charset the byte is not UTF-8")
        let declared: [UInt8] =
            Array(#"<?xml version="1.0" encoding="UTF-8"?><a>caf"#.utf8) + [0xE9] + Array("</a>".utf8)
        #expect(decodeXML(declared, charset: "ISO-8859-1").value == #"{"name":"a","children":["café"]}"#)
        let bom = Array("<a>ü</a>".data(using: .utf16)!)
        #expect(decodeXML(bom, charset: "iso-8859-1").value == #"{"name":"a","children":["ü"]}"#)
        let unknown = decodeXML("<a>x</a>", charset: "x-no-such-charset")
        #expect(unknown.value == #"{"name":"a","children":["x"]}"#)
        #expect(unknown.warnings.contains { $0.contains("x-no-such-charset") })
    }

    @Test func errorsCarryLibxml2sMessageLineAndColumn() throws {
        let unterminated = try #require(decodeXML("<foo").error)
        #expect(unterminated.code == .invalidXML)
        #expect(unterminated.message.contains("Start Tag foo"))
        #expect(unterminated.location?.line == 1)
        #expect(unterminated.location?.column == 5)

        let mismatch = try #require(decodeXML("<a>\n<b>\n</a>").error)
        #expect(mismatch.code == .invalidXML)
        #expect(mismatch.message.contains("mismatch"))
        #expect(mismatch.location?.line == 3)

        #expect(decodeXML("not xml").error?.code == .invalidXML)
        #expect(decodeXML("<a/><b/>").error?.code == .invalidXML, "two root elements")
        #expect(decodeXML("<a>&undefined;</a>").error?.code == .invalidXML)
        #expect(decodeXML(#"<a x="1" x="2"/>"#).error?.code == .invalidXML)
        #expect(decodeXML([0x3C, 0x61, 0x3E, 0xFF, 0x3C, 0x2F, 0x61, 0x3E]).error?.code == .invalidXML, "not UTF-8")
    }

    @Test func emptyBodyHasNoValueAndNoError() {
        let empty = decodeXML("")
        #expect(empty.value == nil && empty.error == nil)
        let space = decodeXML(" ")
        #expect(space.value == nil && space.error == nil)
        #expect(decodeXML("  \n").error?.code == .invalidXML)
    }

    @Test func nestingLimit() {
        func nested(_ depth: Int) -> String {
            String(repeating: "<a>", count: depth) + String(repeating: "</a>", count: depth)
        }
        #expect(decodeXML(nested(512)).value != nil)
        #expect(decodeXML(nested(513)).error?.code == .limitExceeded)
        #expect(decodeXML(nested(3)) { $0.limits.maxDepth = 2 }.error?.code == .limitExceeded)
        // Deeper than libxml2's own default cap of 256 works when configured, and 100,000 levels do not crash.
        let deep = nested(100_000)
        #expect(decodeXML(deep).error?.code == .limitExceeded)
        #expect(
            decodeXML(deep) { $0.limits.maxDepth = 1_000_000 }.value?.hasPrefix(#"{"name":"a","children":[{"#) == true)
    }

    @Test func valueBudget() {
        let body = "<a>" + String(repeating: "<b>x</b>", count: 1000) + "</a>"
        #expect(decodeXML(body).value != nil)
        #expect(decodeXML(body) { $0.limits.maxValueBytes = 1000 }.error?.code == .limitExceeded)
    }

    // MARK: Hostile documents (docs/reliability.md#xml), generated here.

    @Test func billionLaughsIsRejected() {
        var dtd = #"<!ENTITY lol0 "lol">"#
        for level in 1...9 {
            dtd += "<!ENTITY lol\(level) \"" + String(repeating: "&lol\(level - 1);", count: 10) + "\">"
        }
        let started = ContinuousClock.now
        let result = decodeXML("<!DOCTYPE r [\(dtd)]><r>&lol9;</r>")
        #expect(result.error != nil)
        #expect(ContinuousClock.now - started < .seconds(1))
    }

    @Test func quadraticBlowupIsCapped() throws {
        let entity = String(repeating: "A", count: 50_000)
        let body = "<!DOCTYPE r [<!ENTITY a \"\(entity)\">]><r>" + String(repeating: "&a;", count: 50_000) + "</r>"
        let started = ContinuousClock.now
        let error = try #require(decodeXML(body).error)
        #expect(error.code == .limitExceeded)
        #expect(ContinuousClock.now - started < .seconds(1))
        // A few references are fine: the cap is 1 MiB plus 10 times the body.
        let few = "<!DOCTYPE r [<!ENTITY a \"\(entity)\">]><r>" + String(repeating: "&a;", count: 20) + "</r>"
        #expect(decodeXML(few).value?.count ?? 0 > 20 * 50_000)
    }

    @Test func defaultAttributesCountAsExpansion() throws {
        // 2,000 defaulted attributes on each of 20,000 empty elements: a 130 KB body that would expand to ~700 MB.
        let attributes = (0..<2000).map { "a\($0) CDATA 'v'" }.joined(separator: " ")
        let body =
            "<!DOCTYPE doc [<!ATTLIST e \(attributes)>]><doc>" + String(repeating: "<e/>", count: 20_000) + "</doc>"
        let started = ContinuousClock.now
        let error = try #require(decodeXML(body).error)
        #expect(error.code == .limitExceeded)
        #expect(ContinuousClock.now - started < .seconds(1))
        // A few defaults are ordinary.
        #expect(
            decodeXML("<!DOCTYPE r [<!ATTLIST r a CDATA 'x'>]><r/>").value == #"{"name":"r","attributes":{"a":"x"}}"#)
    }

    @Test func externalEntitiesAreNeverRead() throws {
        // Every name below exists or would answer; none may be read or connected to.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("respdecode-xxe-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let secret = directory.appendingPathComponent("secret.txt")
        try Data("SECRET-CONTENT".utf8).write(to: secret)

        let file = decodeXML(#"<!DOCTYPE r [<!ENTITY x SYSTEM "\#(secret.absoluteString)">]><r>&x;</r>"#)
        #expect(file.value.map { !$0.contains("SECRET") } ?? true)
        #expect(file.warnings.contains { $0.contains("not loaded") })

        let relative = decodeXML(#"<!DOCTYPE r [<!ENTITY x SYSTEM "\#(secret.path)">]><r>&x;</r>"#)
        #expect(relative.value.map { !$0.contains("SECRET") } ?? true)

        let network = decodeXML(#"<!DOCTYPE r [<!ENTITY x SYSTEM "http://127.0.0.1:9/x">]><r>&x;</r>"#)
        #expect(network.value.map { !$0.contains("x") || $0 == #"{"name":"r"}"# } ?? true)
        #expect(network.warnings.contains { $0.contains("not loaded") })

        let parameter = decodeXML(#"<!DOCTYPE r [<!ENTITY % p SYSTEM "\#(secret.absoluteString)"> %p;]><r/>"#)
        #expect(parameter.value == #"{"name":"r"}"# || parameter.error != nil)

        // An external DTD subset is not loaded either (no DTDLOAD), so its default attributes never appear.
        let dtd = directory.appendingPathComponent("d.dtd")
        try Data(#"<!ATTLIST r leaked CDATA "SECRET-CONTENT">"#.utf8).write(to: dtd)
        let external = decodeXML(#"<!DOCTYPE r SYSTEM "\#(dtd.absoluteString)"><r/>"#)
        #expect(external.value == #"{"name":"r"}"#)
    }

    @Test func attributesPerStartTagAreCapped() {
        func tag(_ n: Int) -> String { "<r " + (0..<n).map { "a\($0)=\"\"" }.joined(separator: " ") + "/>" }
        #expect(decodeXML(tag(10_000)).value != nil)
        #expect(decodeXML(tag(10_001)).error?.code == .limitExceeded)
        // Counted per start tag: many elements with many attributes each are fine.
        let many =
            "<r>" + String(repeating: "<e " + (0..<5000).map { "a\($0)='1'" }.joined(separator: " ") + "/>", count: 3)
            + "</r>"
        #expect(decodeXML(many).value != nil)
        // UTF-16 bodies are scanned by code units.
        #expect(decodeXML(Array(tag(10_001).data(using: .utf16)!)).error?.code == .limitExceeded)
        // `=` that does not sit between a name and a quote is not an attribute's.
        #expect(decodeXML("<r>" + String(repeating: "x = y ==\"", count: 20_000) + "</r>").value != nil)
        // Only start tags count: escaped markup, CDATA, comments and attribute-like text are content.
        let escaped =
            "<rss><description>" + String(repeating: "&lt;span class=\"c\"&gt;x&lt;/span&gt; ", count: 10_001)
            + "</description></rss>"
        #expect(decodeXML(escaped).value != nil)
        #expect(decodeXML("<r><![CDATA[" + String(repeating: "x=\"1\" ", count: 10_001) + "]]></r>").value != nil)
        #expect(decodeXML("<r><!-- c -->" + String(repeating: "a=\"\" ", count: 10_001) + "</r>").value != nil)
        // UTF-16 labelled by charset without a byte order mark, and not starting with `<`.
        let utf16 = Array((" " + tag(10_001)).data(using: .utf16LittleEndian)!)
        #expect(decodeXML(utf16, charset: "utf-16le").error?.code == .limitExceeded)
        // The DTD may declare at most as many attributes.
        let declarations = (0..<10_001).map { "x\($0) CDATA 'v'" }.joined(separator: " ")
        #expect(decodeXML("<!DOCTYPE a [<!ATTLIST a \(declarations)>]><a/>").error?.code == .limitExceeded)
    }

    @Test func longNamesAreRejected() {
        let name = String(repeating: "n", count: 60_000)
        #expect(decodeXML("<\(name)/>").error?.code == .invalidXML)
    }

    @Test func libxml2sOwnSafetyLimitsHold() {
        // A text node of 10 MB+ is fine (no XML_PARSE_HUGE is needed for content in SAX mode) …
        let big = "<a>" + String(repeating: "x", count: 11_000_000) + "</a>"
        #expect(decodeXML(big).value?.count == #"{"name":"a","children":[""]}"#.utf8.count + 11_000_000)
        // … but a CDATA section past libxml2's 10 MB cap is refused, since XML_PARSE_HUGE is never set.
        let cdata = "<a><![CDATA[" + String(repeating: "x", count: 11_000_000) + "]]></a>"
        #expect(decodeXML(cdata).error?.code == .invalidXML)
    }
}
