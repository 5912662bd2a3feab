/// Where the charset of a text body came from (docs/decoding.md#text), in the WHATWG Encoding Standard's order.
public enum CharsetSource: String, Sendable {
    /// A byte order mark (UTF-8, UTF-16LE, UTF-16BE).
    case bom
    /// The `charset` parameter of the Content-Type.
    case header
    /// HTML's `<meta>` prescan.
    case meta
    /// An XML declaration's `encoding`.
    case xml
    /// Detection (libuchardet), when nothing was declared.
    case detected
    /// Nothing declared or detected: windows-1252 (UTF-8 for XML), as browsers do.
    case `default`
}

/// What a text body was decoded as.
public struct TextInfo: Sendable {
    /// The WHATWG name of the encoding (`UTF-8`, `windows-1252`, `Shift_JIS`, …).
    public var charset: String
    /// Where it came from.
    public var source: CharsetSource
    /// Invalid byte sequences replaced by U+FFFD.
    public var replacements: Int

    public init(charset: String, source: CharsetSource, replacements: Int) {
        self.charset = charset
        self.source = source
        self.replacements = replacements
    }
}

/// A body's bytes as UTF-8 text: the charset resolved as the WHATWG Encoding Standard says, converted by iconv.
/// Shared by the text and html decoders.
public enum TextDecoding {
    /// What the body is, for the charset rules that apply to it.
    public enum Kind: Sendable {
        /// Any text: BOM, Content-Type charset, detection, windows-1252.
        case plain
        /// HTML: as `plain`, with the `<meta>` prescan before detection.
        case html
        /// XML: as `plain`, with the XML declaration before detection, UTF-8 by default.
        case xml
    }

    /// Runs `work` on the body as UTF-8 text (the body itself when it needs no conversion) with what it was decoded
    /// as. A count of replaced sequences is put in `warnings` by the caller's decoder.
    public static func withUTF8<R>(
        _ body: UnsafeBufferPointer<UInt8>, declaredCharset: String?, kind: Kind,
        _ work: (UnsafeBufferPointer<UInt8>, TextInfo) throws(RecordError) -> R
    ) throws(RecordError) -> R {
        // Interface placeholder until the charset resolution lands: UTF-8 only, invalid sequences replaced.
        let text = String(decoding: body, as: UTF8.self)
        var utf8 = Array(text.utf8)
        let replacements = utf8.count == body.count && utf8.elementsEqual(body) ? 0 : 1
        return try utf8.withUnsafeMutableBufferPointer { (buffer) throws(RecordError) -> R in
            try work(
                UnsafeBufferPointer(buffer), TextInfo(charset: "UTF-8", source: .default, replacements: replacements))
        }
    }
}
