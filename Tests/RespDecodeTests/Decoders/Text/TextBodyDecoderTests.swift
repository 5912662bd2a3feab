import Testing

@testable import RespDecode

/// The text decoder's value, warnings and accepted types (docs/decoding.md#text).
@Suite("Text decoder")
struct TextBodyDecoderTests {
    static func decode(
        _ body: [UInt8], mimeType: String = "text/plain", charset: String? = nil, maxTextBytes: Int? = nil
    ) throws -> (wrote: Bool, value: String, warnings: [String]) {
        var options = DecoderOptions()
        if let maxTextBytes { options.limits.maxTextBytes = maxTextBytes }
        var context = DecodingContext(mimeType: mimeType, charset: charset, options: options)
        let out = OutputBuffer()
        let wrote = try body.withUnsafeBufferPointer { try TextBodyDecoder().decode($0, context: &context, into: out) }
        return (wrote, String(decoding: out.bytes, as: UTF8.self), context.warnings)
    }

    @Test("the value: text, charset, charsetSource, in that order")
    func value() throws {
        let decoded = try Self.decode(Array("<p>caf".utf8) + [0xE9] + Array("</p>\n\"".utf8), charset: "windows-1252")
        #expect(decoded.wrote)
        #expect(decoded.value == #"{"text":"<p>café</p>\n\"","charset":"windows-1252","charsetSource":"header"}"#)
        #expect(decoded.warnings.isEmpty)
    }

    @Test("text/html takes the <meta> prescan, XML types the declaration")
    func kinds() throws {
        let html = try Self.decode(Array("<meta charset=koi8-r>".utf8) + [0xF0], mimeType: "text/html")
        #expect(html.value.hasSuffix(#"П","charset":"KOI8-R","charsetSource":"meta"}"#))
        let xml = try Self.decode(
            Array("<?xml version='1.0' encoding='koi8-r'?>".utf8) + [0xF0], mimeType: "application/atom+xml")
        #expect(xml.value.hasSuffix(#"П","charset":"KOI8-R","charsetSource":"xml"}"#))
        #expect(TextBodyDecoder.kind(of: "text/csv") == .plain)
    }

    @Test("maxTextBytes cuts the text and says so; replacements make one warning")
    func truncatedAndReplaced() throws {
        let decoded = try Self.decode(Array("aé\u{FFFD}".utf8) + [0xFF, 0xFE, 0x41], charset: "utf-8", maxTextBytes: 8)
        #expect(decoded.value == #"{"text":"aé�","charset":"UTF-8","charsetSource":"header","truncated":["text"]}"#)
        #expect(decoded.warnings.isEmpty)
        let replaced = try Self.decode([0x61, 0xFF, 0xFE, 0x62], charset: "utf-8")
        #expect(replaced.warnings == ["2 invalid byte sequences in UTF-8 replaced by U+FFFD"])
        let unknown = try Self.decode([0x61], charset: "nope")
        #expect(unknown.warnings == ["unknown charset \"nope\" in the Content-Type; ignored"])
    }

    @Test("an empty body, or one space, gives no value")
    func noContent() throws {
        #expect(try !Self.decode([]).wrote)
        #expect(try !Self.decode([0x20]).wrote)
        #expect(try Self.decode([0xEF, 0xBB, 0xBF]).value == #"{"text":"","charset":"UTF-8","charsetSource":"bom"}"#)
    }

    @Test("accepted types: text/* and the text-like application types; last in the default chain")
    func acceptedTypes() throws {
        let entry = ChainEntry(decoder: try #require(DecoderRegistry.decoder(named: "text")))
        for type in [
            "text/plain", "text/html", "text/csv", "application/javascript", "application/x-yaml", "application/toml",
            "application/sql", "application/rtf",
        ] {
            #expect(entry.accepts(type), "\(type)")
        }
        for type in ["application/json", "application/octet-stream", "image/png"] {
            #expect(!entry.accepts(type), "\(type)")
        }
        // Last in the default chain: text/html, text/xml and text/javascript reach their own decoders first.
        #expect(DecoderRegistry.defaultChainNames.last == "text")
    }
}
