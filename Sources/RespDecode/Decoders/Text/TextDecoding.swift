internal import CShims

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
    /// The text was cut at `maxBytes` (at a character boundary); `replacements` counts what was converted (multi-byte
    /// encodings convert up to a few bytes past the cut).
    public var truncated = false
    /// What the resolution has to say: a declared label that names no encoding (ignored).
    public var warnings: [String] = []

    public init(charset: String, source: CharsetSource, replacements: Int) {
        self.charset = charset
        self.source = source
        self.replacements = replacements
    }

    /// The one warning a decoder puts on the line for the replacements, when there were any:
    /// "N invalid byte sequences in CHARSET replaced by U+FFFD" (docs/decoding.md#text-replacements).
    public var replacementWarning: String? {
        switch replacements {
        case 0: nil
        case 1: "1 invalid byte sequence in \(charset) replaced by U+FFFD"
        default: "\(replacements) invalid byte sequences in \(charset) replaced by U+FFFD"
        }
    }
}

/// A body's bytes as UTF-8 text: the charset resolved as the WHATWG Encoding Standard says, converted by iconv.
/// Shared by the text and html decoders (docs/decoding.md#text).
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
    /// as. A count of replaced sequences is put in `warnings` by the caller's decoder (``TextInfo/replacementWarning``),
    /// with ``TextInfo/warnings``.
    public static func withUTF8<R>(
        _ body: UnsafeBufferPointer<UInt8>, declaredCharset: String?, kind: Kind,
        _ work: (UnsafeBufferPointer<UInt8>, TextInfo) throws(RecordError) -> R
    ) throws(RecordError) -> R {
        try withUTF8(body, declaredCharset: declaredCharset, kind: kind, maxBytes: .max, work)
    }

    /// As ``withUTF8(_:declaredCharset:kind:_:)``, with the text cut at `maxBytes` bytes (at a UTF-8 character
    /// boundary; ``TextInfo/truncated`` says so): the rest of the body is not converted, so a large body costs no
    /// more than the text kept.
    public static func withUTF8<R>(
        _ body: UnsafeBufferPointer<UInt8>, declaredCharset: String?, kind: Kind, maxBytes: Int,
        _ work: (UnsafeBufferPointer<UInt8>, TextInfo) throws(RecordError) -> R
    ) throws(RecordError) -> R {
        let resolution = resolve(body, declaredCharset: declaredCharset, kind: kind)
        var info = TextInfo(charset: resolution.encoding.name, source: resolution.source, replacements: 0)
        info.warnings = resolution.warnings
        let content = UnsafeBufferPointer(rebasing: body[resolution.bomLength...])
        let limit = max(maxBytes, 0)

        switch resolution.encoding {
        case .utf8:
            if let validEnd = validUTF8Prefix(content, limit: limit) {
                // Valid: the body itself, cut at a character boundary if need be.
                info.truncated = validEnd < content.count
                return try work(UnsafeBufferPointer(rebasing: content[..<validEnd]), info)
            }
            var output = UTF8Output(capacity: min(content.count, limit) + 16)
            let outcome = repairUTF8(content, into: &output, limit: limit)
            return try finish(&output, outcome: outcome, info: info, limit: limit, work)
        case .replacement:
            // The whole body is one U+FFFD (https://encoding.spec.whatwg.org/#replacement).
            var output = UTF8Output(capacity: 16)
            var outcome = ConversionOutcome()
            if !content.isEmpty {
                output.appendReplacement()
                outcome.replacements = 1
            }
            return try finish(&output, outcome: outcome, info: info, limit: limit, work)
        case .xUserDefined:
            var output = UTF8Output(capacity: min(content.count * 3, limit) + 16)
            let outcome = userDefined(content, into: &output, limit: limit)
            return try finish(&output, outcome: outcome, info: info, limit: limit, work)
        case let encoding where encoding.isSingleByte:
            var output = UTF8Output(capacity: 16)
            let outcome = SingleByteTable.table(for: encoding).convert(content, into: &output, limit: limit)
            return try finish(&output, outcome: outcome, info: info, limit: limit, work)
        case let encoding:
            var output = UTF8Output(capacity: min(content.count * 2, limit, 1 << 20) + 16)
            let outcome = Iconv.convert(content, from: encoding, into: &output, limit: limit)
            return try finish(&output, outcome: outcome, info: info, limit: limit, work)
        }
    }

    /// Cuts the output at `limit` (at a character boundary) and runs `work` on it.
    private static func finish<R>(
        _ output: inout UTF8Output, outcome: ConversionOutcome, info: TextInfo, limit: Int,
        _ work: (UnsafeBufferPointer<UInt8>, TextInfo) throws(RecordError) -> R
    ) throws(RecordError) -> R {
        var info = info
        info.replacements = outcome.replacements
        info.truncated = outcome.truncated
        var count = output.count
        if count > limit {
            count = limit
            while count > 0 && output.base[count] & 0xC0 == 0x80 { count -= 1 }
            info.truncated = true
        }
        return try work(UnsafeBufferPointer(start: output.base, count: count), info)
    }

    // MARK: Resolution

    /// What the body is decoded as, and the length of the byte order mark to skip.
    struct Resolution {
        var encoding: WebEncoding
        var source: CharsetSource
        var bomLength = 0
        var warnings: [String] = []
    }

    /// The encoding of a body, in the order of docs/decoding.md#text: BOM, Content-Type charset, `<meta>` prescan
    /// (html) or XML declaration (xml), detection, default.
    static func resolve(_ body: UnsafeBufferPointer<UInt8>, declaredCharset: String?, kind: Kind) -> Resolution {
        // https://encoding.spec.whatwg.org/#bom-sniff
        if body.count >= 3 && body[0] == 0xEF && body[1] == 0xBB && body[2] == 0xBF {
            return Resolution(encoding: .utf8, source: .bom, bomLength: 3)
        }
        if body.count >= 2 && body[0] == 0xFE && body[1] == 0xFF {
            return Resolution(encoding: .utf16BE, source: .bom, bomLength: 2)
        }
        if body.count >= 2 && body[0] == 0xFF && body[1] == 0xFE {
            return Resolution(encoding: .utf16LE, source: .bom, bomLength: 2)
        }
        var warnings: [String] = []
        if let declaredCharset {
            if let encoding = WebEncoding(label: declaredCharset) {
                return Resolution(encoding: encoding, source: .header)
            }
            warnings.append("unknown charset \"\(printable(declaredCharset))\" in the Content-Type; ignored")
        }
        switch kind {
        case .plain:
            break
        case .html:
            if let encoding = MetaPrescan.encoding(in: body) {
                return Resolution(encoding: encoding, source: .meta, warnings: warnings)
            }
        case .xml:
            if let label = XMLDeclaration.encodingLabel(in: body) {
                if var encoding = WebEncoding(label: label) {
                    // A declaration readable as ASCII is not in UTF-16, whatever it says (as the <meta> rule).
                    if encoding == .utf16BE || encoding == .utf16LE { encoding = .utf8 }
                    return Resolution(encoding: encoding, source: .xml, warnings: warnings)
                }
                warnings.append("unknown encoding \"\(printable(label))\" in the XML declaration; ignored")
            }
        }
        // Detection (docs/decoding.md#text-detection). UTF-16 without a BOM first (its ASCII is valid UTF-8 with
        // zero bytes). Valid UTF-8 is UTF-8 without asking; pure ASCII is no evidence at all, so the default (it
        // decodes the same in every candidate) — unless it holds an escape, which ISO-2022-JP, all 7-bit, starts
        // its shifts with.
        if let encoding = CharsetDetector.utf16WithoutBOM(body) {
            return Resolution(encoding: encoding, source: .detected, warnings: warnings)
        }
        switch asciiOrUTF8(body) {
        case .ascii where !body.contains(0x1B):
            break
        case .utf8:
            return Resolution(encoding: .utf8, source: .detected, warnings: warnings)
        case .ascii, .other:
            if let encoding = CharsetDetector.detect(body) {
                return Resolution(encoding: encoding, source: .detected, warnings: warnings)
            }
        }
        return Resolution(encoding: kind == .xml ? .utf8 : .windows1252, source: .default, warnings: warnings)
    }

    /// A label as it may be quoted in a warning: at most 64 characters, control characters as `?`.
    private static func printable(_ label: String) -> String {
        String(String.UnicodeScalarView(label.unicodeScalars.prefix(64).map { $0.value < 0x20 ? "?" : $0 }))
    }

    // MARK: UTF-8

    enum ASCIIOrUTF8 { case ascii, utf8, other }

    /// Whether the body is all ASCII, valid UTF-8 with something else, or neither.
    static func asciiOrUTF8(_ body: UnsafeBufferPointer<UInt8>) -> ASCIIOrUTF8 {
        // The ASCII scan first: it stops at the first other byte, so no body is read twice in full.
        if firstNonASCII(body, from: 0) == body.count { return .ascii }
        guard let end = validUTF8Prefix(body, limit: .max), end == body.count else { return .other }
        return .utf8
    }

    /// The index of the first byte ≥ 0x80 at or after `from`, or `body.count`; eight bytes at a time.
    @inline(__always)
    static func firstNonASCII(_ body: UnsafeBufferPointer<UInt8>, from: Int) -> Int {
        var i = from
        let n = body.count
        guard let base = body.baseAddress else { return n }
        while i + 8 <= n {
            if UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 != 0 { break }
            i += 8
        }
        while i < n && base[i] < 0x80 { i += 1 }
        return i
    }

    /// When the body is valid UTF-8: where the text ends at `limit` (the body's end, or the last character boundary
    /// at or before `limit`); nil when it is not valid UTF-8 up to there.
    static func validUTF8Prefix(_ body: UnsafeBufferPointer<UInt8>, limit: Int) -> Int? {
        let n = body.count
        // A body within the limit is checked whole, 32 bytes at a time where the CPU can (CShims, jsonescape.c).
        if n <= limit, let base = body.baseAddress {
            switch respdecode_utf8_valid(base, n) {
            case 1: return n
            case 0: return nil
            default: break
            }
        }
        return scalarValidUTF8Prefix(body, limit: limit)
    }

    /// ``validUTF8Prefix(_:limit:)`` a character at a time (after runs of ASCII).
    static func scalarValidUTF8Prefix(_ body: UnsafeBufferPointer<UInt8>, limit: Int) -> Int? {
        var i = 0
        let n = body.count
        while true {
            i = firstNonASCII(body, from: i)
            if i >= n { return n <= limit ? n : boundary(body, at: limit) }
            let length = utf8SequenceLength(body, at: i)
            if length == 0 { return nil }
            if i + length > limit { return boundary(body, at: limit) }
            i += length
        }
    }

    /// The last character boundary at or before `limit` of valid UTF-8.
    private static func boundary(_ body: UnsafeBufferPointer<UInt8>, at limit: Int) -> Int {
        var end = min(limit, body.count)
        while end > 0 && end < body.count && body[end] & 0xC0 == 0x80 { end -= 1 }
        return end
    }

    /// Invalid UTF-8 with each maximal subpart of an invalid sequence replaced by one U+FFFD, as WHATWG's UTF-8
    /// decoder does (https://encoding.spec.whatwg.org/#utf-8-decoder) — Unicode's "U+FFFD substitution of maximal
    /// subparts". Stops before the character that would take the output past `limit`.
    static func repairUTF8(
        _ input: UnsafeBufferPointer<UInt8>, into output: inout UTF8Output, limit: Int
    ) -> ConversionOutcome {
        var outcome = ConversionOutcome()
        var i = 0
        let n = input.count
        while i < n {
            let ascii = firstNonASCII(input, from: i)
            if ascii > i {
                let end = min(ascii, i + (limit - output.count))
                output.append(UnsafeBufferPointer(rebasing: input[i..<end]))
                if end < ascii {
                    outcome.truncated = true
                    break
                }
                i = end
                continue
            }
            let length = utf8SequenceLength(input, at: i)
            if output.count + (length > 0 ? length : 3) > limit {
                outcome.truncated = true
                break
            }
            if length > 0 {
                output.append(UnsafeBufferPointer(rebasing: input[i..<(i + length)]))
                i += length
            } else {
                output.appendReplacement()
                outcome.replacements += 1
                i += maximalSubpart(input, at: i)
            }
        }
        return outcome
    }

    /// The length of the maximal subpart of the invalid sequence at `i`: the lead byte and the continuation bytes that
    /// could still have made a valid sequence (at least 1).
    static func maximalSubpart(_ b: UnsafeBufferPointer<UInt8>, at i: Int) -> Int {
        let lead = b[i]
        let needed: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: needed = 1
        case 0xE0:
            needed = 2
            low = 0xA0
        case 0xED:
            needed = 2
            high = 0x9F
        case 0xE1...0xEC, 0xEE...0xEF: needed = 2
        case 0xF0:
            needed = 3
            low = 0x90
        case 0xF1...0xF3: needed = 3
        case 0xF4:
            needed = 3
            high = 0x8F
        default: return 1
        }
        var length = 1
        while length <= needed && i + length < b.count {
            let c = b[i + length]
            if c < low || c > high { break }
            low = 0x80
            high = 0xBF
            length += 1
        }
        return length
    }

    /// x-user-defined (https://encoding.spec.whatwg.org/#x-user-defined-decoder): ASCII as is, 0x80-0xFF to
    /// U+F780-U+F7FF (a rule, no table).
    static func userDefined(
        _ input: UnsafeBufferPointer<UInt8>, into output: inout UTF8Output, limit: Int
    ) -> ConversionOutcome {
        var outcome = ConversionOutcome()
        var i = 0
        output.reserve(min(input.count * 3, limit) + 4)
        while i < input.count {
            let byte = input[i]
            let length = byte < 0x80 ? 1 : 3
            if output.count + length > limit {
                outcome.truncated = true
                break
            }
            if byte < 0x80 {
                output.reserve(1)
                output.base[output.count] = byte
                output.count += 1
            } else {
                // U+F780 + (byte - 0x80) = U+F780...U+F7FF: EF 9E 80 ... EF 9F BF.
                let scalar = 0xF780 + UInt32(byte) - 0x80
                output.reserve(3)
                output.base[output.count] = 0xEF
                output.base[output.count + 1] = UInt8(0x80 | (scalar >> 6) & 0x3F)
                output.base[output.count + 2] = UInt8(0x80 | scalar & 0x3F)
                output.count += 3
            }
            i += 1
        }
        return outcome
    }
}
