import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// Each step of the charset resolution, the conversions' replacements and the byte limit (docs/decoding.md#text).
@Suite("TextDecoding")
struct TextDecodingTests {
    struct Decoded {
        var text: String
        var bytes: [UInt8]
        var info: TextInfo
    }

    static func decode(
        _ body: [UInt8], charset: String? = nil, kind: TextDecoding.Kind = .plain, maxBytes: Int = .max
    ) throws -> Decoded {
        try body.withUnsafeBufferPointer { buffer in
            try TextDecoding.withUTF8(buffer, declaredCharset: charset, kind: kind, maxBytes: maxBytes) { text, info in
                Decoded(text: String(decoding: text, as: UTF8.self), bytes: Array(text), info: info)
            }
        }
    }

    static func decode(
        _ body: String, charset: String? = nil, kind: TextDecoding.Kind = .plain, maxBytes: Int = .max
    ) throws -> Decoded {
        try decode(Array(body.utf8), charset: charset, kind: kind, maxBytes: maxBytes)
    }

    static func hex(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var i = text.startIndex
        while i < text.endIndex {
            let next = text.index(i, offsetBy: 2)
            bytes.append(UInt8(text[i..<next], radix: 16)!)
            i = next
        }
        return bytes
    }

    /// "日本語のテキストです。…" (130 bytes) in Shift_JIS.
    static let shiftJIS = hex(
        "93fa967b8cea82cc8365834c8358836782c582b7814295b68e9a8352815b836882f08ea993ae82c594bb92e882b582dc82b7814282b1"
            + "82ea82cd92b782a295b68fcd82cc97e182c582a082e881418c9f8f6f8aed82aa90b382b582ad93ae82ad82a982c782a482a982f0"
            + "8a6d82a982df82e982bd82df82cc82e082cc82c582b78142")

    /// Bodies are given to iconv in windows: a two-byte sequence cut by a window's end is read whole from the next one,
    /// and an incomplete one at the body's end is still one U+FFFD.
    @Test("sequences across iconv's input windows")
    func sequencesAcrossWindows() throws {
        // "a" then 100,000 × "あ" (82 A0): every window boundary (64 KiB, even) falls inside a character.
        let body = [UInt8(ascii: "a")] + Array(repeating: [UInt8]([0x82, 0xA0]), count: 100_000).joined()
        let decoded = try Self.decode(body, charset: "shift_jis")
        #expect(decoded.text == "a" + String(repeating: "あ", count: 100_000))
        #expect(decoded.info.replacements == 0)
        let cut = try Self.decode(body + [0x82], charset: "shift_jis")
        #expect(cut.text == "a" + String(repeating: "あ", count: 100_000) + "\u{FFFD}")
        #expect(cut.info.replacements == 1)
    }

    // MARK: BOM

    @Test("a BOM wins over everything, and is stripped")
    func bom() throws {
        let utf8 = try Self.decode([0xEF, 0xBB, 0xBF] + Array("café".utf8), charset: "koi8-r")
        #expect(utf8.text == "café")
        #expect(utf8.info.charset == "UTF-8" && utf8.info.source == .bom)
        let le = try Self.decode([0xFF, 0xFE, 0x41, 0x00, 0x42, 0x04], charset: "utf-8")
        #expect(le.text == "Aт")
        #expect(le.info.charset == "UTF-16LE" && le.info.source == .bom)
        let be = try Self.decode([0xFE, 0xFF, 0x00, 0x41, 0x04, 0x42], kind: .html)
        #expect(be.text == "Aт")
        #expect(be.info.charset == "UTF-16BE" && be.info.source == .bom)
        let only = try Self.decode([0xEF, 0xBB, 0xBF])
        #expect(only.text == "" && only.info.source == .bom && only.info.replacements == 0)
    }

    // MARK: Content-Type charset

    @Test("the Content-Type charset is resolved through the label table")
    func header() throws {
        let latin1 = try Self.decode([0x63, 0x61, 0x66, 0xE9, 0x80], charset: " Latin1 ")
        #expect(latin1.text == "café€")
        #expect(latin1.info.charset == "windows-1252" && latin1.info.source == .header)
        let koi8 = try Self.decode(Self.hex("f0d2c9d7c5d4"), charset: "KOI8-R")
        #expect(koi8.text == "Привет" && koi8.info.charset == "KOI8-R")
        let sjis = try Self.decode(Self.shiftJIS, charset: "x-sjis")
        #expect(sjis.text.hasPrefix("日本語のテキストです。") && sjis.info.charset == "Shift_JIS")
        #expect(sjis.info.replacements == 0)
        // The header wins over a <meta>.
        let meta = try Self.decode("<meta charset=koi8-r>\u{E9}", charset: "utf-8", kind: .html)
        #expect(meta.info.charset == "UTF-8" && meta.info.source == .header)
    }

    @Test("an unknown label is ignored with a warning, and the next step decides")
    func unknownLabel() throws {
        let decoded = try Self.decode("<meta charset=koi8-r>", charset: "klingon", kind: .html)
        #expect(decoded.info.charset == "KOI8-R" && decoded.info.source == .meta)
        #expect(decoded.info.warnings == ["unknown charset \"klingon\" in the Content-Type; ignored"])
        let plain = try Self.decode("plain", charset: "utf-7")
        #expect(plain.info.charset == "windows-1252" && plain.info.source == .default)
        #expect(plain.info.warnings.count == 1)
    }

    // MARK: <meta> and XML declaration

    @Test("the <meta> prescan for html only; utf-16 becomes UTF-8, x-user-defined windows-1252")
    func meta() throws {
        let html = "<!doctype html><html><head><meta http-equiv=Content-Type content='text/html; charset=koi8-r'>"
        let found = try Self.decode(Array(html.utf8) + Self.hex("f0d2c9d7c5d4"), kind: .html)
        #expect(found.info.charset == "KOI8-R" && found.info.source == .meta)
        #expect(found.text.hasSuffix("Привет"))
        // Plain text does not look at markup.
        let plain = try Self.decode(Array(html.utf8) + Self.hex("f0d2c9d7c5d4"), kind: .plain)
        #expect(plain.info.source != .meta)
        let utf16 = try Self.decode("<meta charset=utf-16le>x", kind: .html)
        #expect(utf16.info.charset == "UTF-8" && utf16.info.source == .meta)
        let userDefined = try Self.decode("<meta charset=x-user-defined>x", kind: .html)
        #expect(userDefined.info.charset == "windows-1252" && userDefined.info.source == .meta)
        // A <meta> inside a comment, and an unknown label, declare nothing.
        let comment = try Self.decode("<!-- <meta charset=koi8-r> --><meta charset=bogus>x", kind: .html)
        #expect(comment.info.source == .default)
    }

    @Test("the XML declaration's encoding for xml only; UTF-8 by default")
    func xmlDeclaration() throws {
        let declared = try Self.decode(
            Array("<?xml version=\"1.0\" encoding='ISO-8859-2'?><a>".utf8) + [0xA1], kind: .xml)
        #expect(declared.info.charset == "ISO-8859-2" && declared.info.source == .xml)
        #expect(declared.text.hasSuffix("<a>Ą"))
        let undeclared = try Self.decode("<?xml version=\"1.0\"?><a/>", kind: .xml)
        #expect(undeclared.info.charset == "UTF-8" && undeclared.info.source == .default)
        let utf16 = try Self.decode("<?xml version=\"1.0\" encoding=\"UTF-16\"?><a/>", kind: .xml)
        #expect(utf16.info.charset == "UTF-8" && utf16.info.source == .xml)
        let unknown = try Self.decode("<?xml version=\"1.0\" encoding=\"nope\"?><a/>", kind: .xml)
        #expect(unknown.info.source == .default && unknown.info.warnings.count == 1)
        let plain = try Self.decode("<?xml version=\"1.0\" encoding='ISO-8859-2'?>", kind: .plain)
        #expect(plain.info.source == .default && plain.info.charset == "windows-1252")
    }

    // MARK: Detection and default

    @Test("detection: valid UTF-8, uchardet, BOM-less UTF-16; pure ASCII is the default")
    func detection() throws {
        let utf8 = try Self.decode("naïve")
        #expect(utf8.info.charset == "UTF-8" && utf8.info.source == .detected)
        let ascii = try Self.decode("plain ASCII")
        #expect(ascii.info.charset == "windows-1252" && ascii.info.source == .default)
        let sjis = try Self.decode(Self.shiftJIS)
        #expect(sjis.info.charset == "Shift_JIS" && sjis.info.source == .detected)
        #expect(sjis.text.hasPrefix("日本語"))
        let utf16 = try Self.decode(
            Array("plain text in UTF-16LE".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }))
        #expect(utf16.info.charset == "UTF-16LE" && utf16.text == "plain text in UTF-16LE")
        let xml = try Self.decode("<a/>", kind: .xml)
        #expect(xml.info.charset == "UTF-8" && xml.info.source == .default)
    }

    // MARK: Replacements

    @Test("invalid UTF-8: one U+FFFD per maximal subpart (the Unicode Standard's example)")
    func utf8Replacements() throws {
        let decoded = try Self.decode(Self.hex("61f18080e180c262806380bf64"), charset: "utf-8")
        #expect(decoded.text == "a\u{FFFD}\u{FFFD}\u{FFFD}b\u{FFFD}c\u{FFFD}\u{FFFD}d")
        #expect(decoded.info.replacements == 6)
        #expect(decoded.info.replacementWarning == "6 invalid byte sequences in UTF-8 replaced by U+FFFD")
        // A surrogate (ED A0 80) and an overlong (C0 AF): no prefix of either can be valid, so one U+FFFD a byte.
        let surrogate = try Self.decode(Self.hex("eda080c0af"), charset: "utf-8")
        #expect(surrogate.text == String(repeating: "\u{FFFD}", count: 5))
    }

    @Test("invalid multi-byte sequences: U+FFFD, an ASCII trail byte read again")
    func multiByteReplacements() throws {
        // 0x81 0x20: a Shift_JIS lead byte with an ASCII trail: U+FFFD, then the space.
        let sjis = try Self.decode([0x41, 0x81, 0x20, 0x42], charset: "shift_jis")
        #expect(sjis.text == "A\u{FFFD} B" && sjis.info.replacements == 1)
        // A lead byte at the end: one U+FFFD.
        let end = try Self.decode([0x41, 0x81], charset: "shift_jis")
        #expect(end.text == "A\u{FFFD}" && end.info.replacements == 1)
        // UTF-16: an odd byte at the end and an unpaired surrogate.
        let odd = try Self.decode([0x41, 0x00, 0x42], charset: "utf-16le")
        #expect(odd.text == "A\u{FFFD}" && odd.info.replacements == 1)
        let surrogate = try Self.decode([0x00, 0xD8, 0x41, 0x00], charset: "utf-16le")
        #expect(surrogate.text == "\u{FFFD}A" && surrogate.info.replacements == 1)
        // A byte the single-byte encoding does not define.
        let greek = try Self.decode([0x41, 0xAA], charset: "windows-1253")
        #expect(
            greek.text == "A\u{FFFD}"
                && greek.info.replacementWarning == "1 invalid byte sequence in windows-1253 replaced by U+FFFD")
    }

    @Test("glibc's converters where WHATWG differs: 0x80 in gb18030 and Shift_JIS, EUC-JP as Windows maps it")
    func whatwgMultiByte() throws {
        #expect(try Self.decode([0x41, 0x80, 0x42], charset: "gbk").text == "A€B")
        #expect(try Self.decode([0x80], charset: "gb18030").info.replacements == 0)
        #expect(try Self.decode([0x41, 0x80], charset: "shift_jis").text == "A\u{80}")
        // 0xA1C1 and 0xA1DD: U+FF5E and U+FF0D as in the Encoding Standard's index jis0208 (glibc's EUC-JP gives
        // U+301C and U+2212); 0xADA1, NEC's ①, is in that index too.
        #expect(try Self.decode([0xA1, 0xC1, 0xA1, 0xDD, 0xAD, 0xA1], charset: "euc-jp").text == "\u{FF5E}\u{FF0D}①")
        #expect(try Self.decode([0x81, 0x60, 0x81, 0x7C], charset: "shift_jis").text == "\u{FF5E}\u{FF0D}")
        // gb18030's four-byte sequences.
        #expect(try Self.decode([0x81, 0x30, 0x81, 0x30], charset: "gb18030").text == "\u{80}")
    }

    @Test("replacement: the whole body is one U+FFFD; x-user-defined is U+F780 + byte - 0x80")
    func ruleEncodings() throws {
        let replacement = try Self.decode("anything at all", charset: "iso-2022-kr")
        #expect(replacement.text == "\u{FFFD}" && replacement.info.charset == "replacement")
        #expect(replacement.info.replacements == 1)
        let userDefined = try Self.decode([0x41, 0x80, 0xFF], charset: "x-user-defined")
        #expect(userDefined.text == "A\u{F780}\u{F7FF}" && userDefined.info.replacements == 0)
    }

    // MARK: Truncation

    @Test("maxBytes cuts the text at a character boundary, in every conversion")
    func truncation() throws {
        let utf8 = try Self.decode("aé€", charset: "utf-8", maxBytes: 5)
        #expect(utf8.text == "aé" && utf8.info.truncated)
        let whole = try Self.decode("aé€", charset: "utf-8", maxBytes: 6)
        #expect(whole.text == "aé€" && !whole.info.truncated)
        let single = try Self.decode([0x61, 0xE9, 0x80, 0x62], charset: "windows-1252", maxBytes: 5)
        #expect(single.text == "aé" && single.info.truncated)
        let sjis = try Self.decode(Self.shiftJIS, charset: "shift_jis", maxBytes: 10)
        #expect(sjis.text == "日本語" && sjis.info.truncated)
        let repaired = try Self.decode([0x61, 0xFF, 0x62, 0xFF], charset: "utf-8", maxBytes: 4)
        #expect(repaired.text == "a\u{FFFD}" && repaired.info.truncated)
        let zero = try Self.decode("abc", charset: "utf-8", maxBytes: 0)
        #expect(zero.text == "" && zero.info.truncated)
    }

    /// The vector check of a whole body (where the CPU has one) and the scalar one agree: on every short sequence
    /// of lead, continuation and edge bytes, and on mutated text of every length around the 32-byte blocks.
    @Test func vectorAndScalarUTF8ChecksAgree() {
        func check(_ bytes: [UInt8]) {
            bytes.withUnsafeBufferPointer { body in
                for limit in [Int.max, bytes.count, max(0, bytes.count - 1), bytes.count / 2] {
                    #expect(
                        TextDecoding.validUTF8Prefix(body, limit: limit)
                            == TextDecoding.scalarValidUTF8Prefix(body, limit: limit), "\(bytes) \(limit)")
                }
            }
        }
        let interesting: [UInt8] = [
            0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5,
            0xFF,
        ]
        for a in interesting {
            for b in interesting {
                for c in interesting { check([a, b, c]) }
                for c in interesting { check([a, b, c, 0x80]) }
            }
        }
        var generator = SplitMix64(seed: 5)
        let text = Array("a é 中 😀 z".utf8)
        for length in 0..<200 {
            var bytes = (0..<length).map { text[$0 % text.count] }
            check(bytes)
            if length > 0 {
                bytes[Int(generator.next() % UInt64(length))] = UInt8(truncatingIfNeeded: generator.next())
                check(bytes)
                check(Array(bytes.dropLast()))
            }
        }
    }
}
