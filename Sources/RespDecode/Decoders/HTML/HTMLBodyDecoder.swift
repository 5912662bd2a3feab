import Glibc

/// The html decoder (docs/decoding.md#html): a page's title (and its article headline), language, charset, base and canonical URLs, meta tags,
/// links (WAT-like), headings and visible text (WET-like), from libxml2's HTML parser in SAX mode.
///
/// It never fails on markup: libxml2 recovers from any. A bound gives a value all the same: the text and the links
/// are cut (`truncated` names them), and a document read only in part (nesting, attributes) has `truncated` naming
/// `document` and a warning.
public struct HTMLBodyDecoder: BodyDecoder {
    public let name = "html"

    public let defaultAcceptableTypes: [MediaTypePattern] = ["text/html", "application/xhtml+xml"]
        .compactMap(MediaTypePattern.init)

    public init() {}

    public func decode(
        _ body: UnsafeBufferPointer<UInt8>, context: inout DecodingContext, into output: OutputBuffer
    ) throws(RecordError) -> Bool {
        if Self.isNoContent(body) { return false }
        let options = context.options
        let url = context.url
        let contentLanguage = context.contentLanguage
        var warnings: [String] = []
        // The page is converted up to maxDecodedBodyBytes of UTF-8: a body of invalid bytes would otherwise triple in
        // size as U+FFFD; past it the document is read in part (docs/decoding.md#bounds).
        let maxPageBytes = options.limits.maxDecodedBodyBytes
        // XHTML is XML: its declaration and UTF-8 by default, not HTML's <meta> prescan (docs/decoding.md#text).
        let kind: TextDecoding.Kind = context.mimeType == "application/xhtml+xml" ? .xml : .html
        try TextDecoding.withUTF8(body, declaredCharset: context.charset, kind: kind, maxBytes: maxPageBytes) {
            (decoded, info) throws(RecordError) in
            warnings += info.warnings
            if let replaced = info.replacementWarning { warnings.append(replaced) }
            // libxml2 2.9.14 stops reading at a NUL byte, silently: one NUL in an attribute would hide the rest of
            // the page's text and links. HTML reads a NUL as U+FFFD in names, values, titles and raw text (and drops
            // one in text between tags); here every NUL becomes U+FFFD, and a warning says how many.
            let replaced = Self.replacingNUL(decoded, maxBytes: maxPageBytes)
            if let replaced { warnings.append("\(replaced.count) NUL bytes replaced by U+FFFD") }
            (replaced?.bytes ?? []).withUnsafeBufferPointer { copy in
                let text = replaced == nil ? decoded : copy
                let extractor = HTMLExtractor(
                    wantText: options.htmlText, wantLinks: options.htmlLinks, limits: options.limits, url: url)
                var cut = LibXML2HTML.parse(text, into: extractor, maxDepth: options.limits.maxDepth)
                if info.truncated || replaced?.truncated == true, cut == nil {
                    cut =
                        "the page is larger than \(maxPageBytes) bytes as UTF-8 (maxDecodedBodyBytes): the rest was not read"
                }
                extractor.finish()
                if let cut { warnings.append(cut) }
                var languages: LanguageDetection.Languages?
                if options.detectLanguage {
                    // The whole page, as Common Crawl gives it to CLD2: CLD2 skips tags, scripts and styles itself and
                    // takes `lang` attributes as hints (docs/decoding.md#language).
                    languages = LanguageDetection.detect(
                        text, isPlainText: false,
                        hints: LanguageDetection.Hints(contentLanguage: contentLanguage, url: url))
                }
                Self.write(
                    extractor, info: info, documentCut: cut != nil, languages: languages, options: options, into: output
                )
            }
        }
        context.warnings += warnings
        return true
    }

    /// `text` (valid UTF-8) with each NUL byte replaced by U+FFFD, and how many were; nil when it has none. The copy
    /// stops at the last whole character within `maxBytes` (each NUL grows by two bytes; `truncated` then).
    static func replacingNUL(_ text: UnsafeBufferPointer<UInt8>, maxBytes: Int) -> (
        bytes: [UInt8], count: Int, truncated: Bool
    )? {
        guard let base = text.baseAddress, memchr(base, 0, text.count) != nil else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(min(text.count + 64, maxBytes))
        var count = 0
        for byte in text {
            if byte & 0xC0 != 0x80 {
                let length = byte == 0 ? 3 : byte < 0x80 ? 1 : byte < 0xE0 ? 2 : byte < 0xF0 ? 3 : 4
                if bytes.count + length > maxBytes { return (bytes, count, true) }
            }
            if byte == 0 {
                bytes.append(0xEF)
                bytes.append(0xBF)
                bytes.append(0xBD)
                count += 1
            } else {
                bytes.append(byte)
            }
        }
        return (bytes, count, false)
    }

    /// Writes the value: keys in the order of docs/decoding.md#html, each left out when absent or empty.
    private static func write(
        _ page: HTMLExtractor, info: TextInfo, documentCut: Bool, languages: LanguageDetection.Languages?,
        options: DecoderOptions, into out: OutputBuffer
    ) {
        var first = true
        func key(_ name: StaticString) {
            out.append(UInt8(ascii: first ? "{" : ","))
            first = false
            out.append(UInt8(ascii: "\""))
            out.append(ascii: name)
            out.append(ascii: "\":")
        }
        func string(_ buffer: UnsafeBufferPointer<UInt8>) {
            // The parser's output is UTF-8; validation stays on as a guard (a broken sequence becomes U+FFFD).
            if !out.appendJSONString(utf8: buffer) {
                out.appendJSONString(String(decoding: buffer, as: UTF8.self))
            }
        }
        func string(_ bytes: [UInt8]) {
            bytes.withUnsafeBufferPointer { string($0) }
        }
        if let title = page.title, !title.isEmpty {
            key("title")
            string(title)
        }
        if let headline = page.headline {
            // Only when it differs from `title` (docs/decoding.md#headline): `headline ?? title` is the article's title.
            key("headline")
            string(headline)
        }
        if let lang = page.lang {
            key("lang")
            string(lang)
        }
        key("charset")
        out.appendJSONString(info.charset)
        key("charsetSource")
        out.appendJSONString(info.source.rawValue)
        if let base = page.base, !base.isEmpty {
            key("base")
            string(base)
        }
        if let canonical = page.canonical, !canonical.isEmpty {
            key("canonical")
            string(canonical)
        }
        if !page.meta.isEmpty {
            key("meta")
            for (i, entry) in page.meta.enumerated() {
                out.append(UInt8(ascii: i == 0 ? "{" : ","))
                string(entry.key)
                out.append(UInt8(ascii: ":"))
                string(entry.content)
            }
            out.append(UInt8(ascii: "}"))
        }
        if options.htmlLinks && !page.links.isEmpty {
            key("links")
            page.linkBytes.withUnsafeBufferPointer { bytes in
                for (i, link) in page.links.enumerated() {
                    out.append(ascii: i == 0 ? "[{\"url\":" : ",{\"url\":")
                    string(UnsafeBufferPointer(rebasing: bytes[link.url]))
                    if let href = link.href {
                        out.append(ascii: ",\"href\":")
                        string(UnsafeBufferPointer(rebasing: bytes[href]))
                    }
                    out.append(ascii: ",\"element\":\"")
                    out.append(ascii: link.element.name)
                    out.append(UInt8(ascii: "\""))
                    if let rel = link.rel {
                        out.append(ascii: ",\"rel\":")
                        string(UnsafeBufferPointer(rebasing: bytes[rel]))
                    }
                    if let text = link.text {
                        out.append(ascii: ",\"text\":")
                        string(UnsafeBufferPointer(rebasing: bytes[text]))
                    }
                    out.append(UInt8(ascii: "}"))
                }
            }
            out.append(UInt8(ascii: "]"))
        }
        if options.htmlLinks && page.linksTotal != page.links.count {
            key("linksTotal")
            out.append(decimal: page.linksTotal)
        }
        if !page.headings.isEmpty {
            key("headings")
            for (i, heading) in page.headings.enumerated() {
                out.append(ascii: i == 0 ? "[{\"level\":" : ",{\"level\":")
                out.append(decimal: heading.level)
                out.append(ascii: ",\"text\":")
                string(heading.text)
                out.append(UInt8(ascii: "}"))
            }
            out.append(UInt8(ascii: "]"))
        }
        if options.htmlText && !page.text.bytes.isEmpty {
            key("text")
            string(page.text.bytes)
        }
        // `charset` is always written, so `languages` follows a member.
        if let languages { out.appendLanguages(languages) }
        var truncated: [StaticString] = []
        if page.metaTruncated { truncated.append("meta") }
        if page.linksTruncated { truncated.append("links") }
        if page.headingsTruncated { truncated.append("headings") }
        if page.text.truncated { truncated.append("text") }
        if documentCut { truncated.append("document") }
        if !truncated.isEmpty {
            key("truncated")
            for (i, name) in truncated.enumerated() {
                out.append(ascii: i == 0 ? "[\"" : ",\"")
                out.append(ascii: name)
                out.append(UInt8(ascii: "\""))
            }
            out.append(UInt8(ascii: "]"))
        }
        out.append(UInt8(ascii: "}"))
    }
}
