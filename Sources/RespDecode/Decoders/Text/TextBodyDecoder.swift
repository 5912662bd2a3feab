/// The text decoder: a text body as UTF-8 text, its charset resolved as the WHATWG Encoding Standard says and converted
/// by glibc's iconv (``TextDecoding``). The value is `{"text":…,"charset":…,"charsetSource":…}`, with
/// `"truncated":["text"]` when `maxTextBytes` cut the text (docs/decoding.md#text).
public struct TextBodyDecoder: BodyDecoder {
    public let name = "text"

    /// `text/*` and the application types that are text (docs/decoding.md#text-types).
    public let defaultAcceptableTypes: [MediaTypePattern] = (["text/*"] + Self.textApplicationTypes)
        .compactMap(MediaTypePattern.init)

    /// The application types that are text: scripts, style sheets, data and document formats read as characters.
    static let textApplicationTypes = [
        "application/javascript", "application/ecmascript", "application/x-javascript", "application/x-ecmascript",
        "application/css", "application/x-css", "application/csv", "application/sql", "application/x-sh",
        "application/x-csh", "application/yaml", "application/x-yaml", "application/toml", "application/graphql",
        "application/rtf", "application/x-tex", "application/x-latex", "application/x-httpd-php",
        "application/x-perl", "application/x-python", "application/x-ruby", "application/x-markdown",
        "application/x-subrip",
    ]

    public init() {}

    public func decode(
        _ body: UnsafeBufferPointer<UInt8>, context: inout DecodingContext, into output: OutputBuffer
    ) throws(RecordError) -> Bool {
        // An empty body, or exactly one space, means "no content": no value and no error (docs/decoding.md#empty-bodies).
        if Self.isNoContent(body) { return false }
        let limits = context.options.limits
        let detectLanguage = context.options.detectLanguage
        let contentLanguage = context.contentLanguage
        let url = context.url
        let mark = output.mark
        let warnings = try TextDecoding.withUTF8(
            body, declaredCharset: context.charset, kind: Self.kind(of: context.mimeType),
            maxBytes: limits.maxTextBytes
        ) { (text, info) throws(RecordError) -> [String] in
            let (valueEnd, overflow) = output.count.addingReportingOverflow(limits.maxValueBytes)
            output.append(ascii: "{\"text\":\"")
            if output.appendJSONStringContent(utf8: text, validate: false, stoppingPast: overflow ? .max : valueEnd)
                != .written
            {
                output.rollback(to: mark)
                throw RecordError(
                    .limitExceeded, "the text of the body, as JSON, is larger than \(limits.maxValueBytes) bytes")
            }
            output.append(ascii: "\",\"charset\":")
            output.appendJSONString(info.charset)
            output.append(ascii: ",\"charsetSource\":")
            output.appendJSONString(info.source.rawValue)
            if detectLanguage {
                let hints = LanguageDetection.Hints(contentLanguage: contentLanguage, url: url)
                output.appendLanguages(LanguageDetection.detect(text, isPlainText: true, hints: hints))
            }
            if info.truncated { output.append(ascii: ",\"truncated\":[\"text\"]") }
            output.append(UInt8(ascii: "}"))
            return info.warnings + (info.replacementWarning.map { [$0] } ?? [])
        }
        context.warnings += warnings
        return true
    }

    /// The charset rules a MIME type calls for: HTML's `<meta>` prescan for HTML, the XML declaration for XML.
    static func kind(of mimeType: String?) -> TextDecoding.Kind {
        guard let mimeType else { return .plain }
        if mimeType == "text/html" { return .html }
        if mimeType == "text/xml" || mimeType == "application/xml" || mimeType.hasSuffix("+xml") { return .xml }
        return .plain
    }
}
