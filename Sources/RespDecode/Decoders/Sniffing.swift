/// `--sniff`: a MIME type from a body's first bytes, for records whose Content-Type is missing or
/// `application/octet-stream` (docs/decoding.md#sniffing). The line then says `"sniffed":true`.
///
/// Only signatures that leave little doubt are used, so a sniffed type sends the body to the decoder that can read
/// it, and anything else keeps its type (the raw decoder's, when no decoder takes `application/octet-stream`):
///
///     first non-space byte { or [ (also UTF-16 with a BOM) ........ application/json
///     bplist00 ................................................ application/x-bplist
///     <?xml … then <plist or <!DOCTYPE plist in the first 1 KiB .. application/x-plist   (also <plist at the start)
///     <!DOCTYPE html, <html, <head, <body (any case) ............ text/html            (HTML is not XML: html)
///     <!-- … --> ............................................... what follows the comment
///     <?xml, or < and a name start ............................. application/xml
///     89 PNG, FF D8 FF, GIF87a/GIF89a, RIFF…WEBP, II*␀/MM␀* ..... image/png, jpeg, gif, webp, tiff
///     BM with a known DIB header size; 00 00 01|02 00 with entries  image/bmp, image/x-icon
///     D9 D9 F7 (CBOR's self-described tag 55799) ............... application/cbor
///     1E (RFC 7464's record separator) and a JSON text .......... application/json-seq
///     a balanced JSON object or array alone on its line, then another  application/x-ndjson
///     --boundary line, then a header field line ................. multipart/mixed
///     event:, data:, id:, retry: and : lines, a data line dispatched  text/event-stream
///
/// Leading white space (and a UTF-8 byte order mark) is skipped for the text formats, as mitmproxy's XML view and
/// file(1) do; the binary signatures must be at offset 0.
public enum Sniffing {
    /// The MIME types that are sniffed over (besides a missing one): the generic binary type.
    public static func isSniffable(_ mimeType: String?) -> Bool {
        guard let mimeType else { return true }
        return mimeType == "application/octet-stream"
    }

    /// The sniffed types whose formats only a decoder of their own reads, each with the type to fall back to when no
    /// decoder of the chain accepts it: JSON Lines then reads as JSON (and fails as one, as it did before the ndjson
    /// decoder), the others are not sniffed at all. So `--chain json,xml,plist,image --sniff` gives the lines it gave
    /// before these decoders existed (docs/decoding.md#sniffing).
    public static let typesForTheirDecoders: [String: String?] = [
        "application/x-ndjson": "application/json", "application/json-seq": nil, "multipart/mixed": nil,
        "text/event-stream": nil, "application/cbor": nil,
    ]

    /// The type to give a body sniffed as `type` when `accepted` tells which types a decoder of the chain takes:
    /// `type` itself, or its fallback (``typesForTheirDecoders``), or nil.
    public static func type(_ type: String, accepted: (String) -> Bool) -> String? {
        var type = type
        while case .some(let fallback) = typesForTheirDecoders[type], !accepted(type) {
            guard let fallback else { return nil }
            type = fallback
        }
        return type
    }

    /// The MIME type the body's first bytes show, or `nil` when they show none with confidence.
    public static func mimeType(of body: UnsafeBufferPointer<UInt8>) -> String? {
        let r = ByteReader(body)
        if PNGImage.matches(r) { return "image/png" }
        if JPEGImage.matches(r) { return "image/jpeg" }
        if GIFHeader.matches(r) { return "image/gif" }
        if WebPHeader.matches(r) { return "image/webp" }
        if TIFFHeader.matches(r) { return "image/tiff" }
        if r.matches("bplist00", at: 0) { return "application/x-bplist" }
        if body.count >= 4 && body[0] == 0xD9 && body[1] == 0xD9 && body[2] == 0xF7 { return "application/cbor" }
        if BMPHeader.matches(r), let dibSize = r.u32le(14), [12, 40, 52, 56, 64, 108, 124].contains(dibSize) {
            return "image/bmp"
        }
        // ICO/CUR: reserved 0, type 1 or 2, at least one entry whose reserved byte is 0.
        if ICOHeader.matches(r), let count = r.u16le(4), count > 0, r.u8(9) == 0 { return "image/x-icon" }

        // UTF-16 JSON with its byte order mark (the json decoder reads UTF-16 and UTF-32).
        if body.count >= 4 {
            let open: Set<UInt8> = [UInt8(ascii: "{"), UInt8(ascii: "[")]
            if body[0] == 0xFF && body[1] == 0xFE && open.contains(body[2]) && body[3] == 0 {
                return "application/json"
            }
            if body[0] == 0xFE && body[1] == 0xFF && body[2] == 0 && open.contains(body[3]) {
                return "application/json"
            }
        }
        var i = 0
        if body.count >= 3 && body[0] == 0xEF && body[1] == 0xBB && body[2] == 0xBF { i = 3 }
        while i < body.count, body[i] == 0x20 || body[i] == 0x09 || body[i] == 0x0A || body[i] == 0x0D { i += 1 }
        guard i < body.count else { return nil }
        let text = UnsafeBufferPointer(rebasing: body[i...])
        switch body[i] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            return isJSONLines(text) ? "application/x-ndjson" : "application/json"
        case UInt8(ascii: "<"):
            return markupType(text)
        case 0x1E:
            return isJSONSequence(text) ? "application/json-seq" : nil
        case UInt8(ascii: "-"):
            return isMultipart(text) ? "multipart/mixed" : nil
        default:
            return isEventStream(text) ? "text/event-stream" : nil
        }
    }

    /// How far the line-based signatures look: a first line longer than this decides nothing.
    static let lineWindow = 64 * 1024

    /// Whether `text` (from its first `{` or `[`) is a JSON object or array that closes on its first line, followed
    /// by another line that opens one: JSON Lines. A pretty-printed document's first line never closes its value.
    private static func isJSONLines(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        let window = min(text.count, lineWindow)
        var depth = 0
        var inString = false
        var k = 0
        while k < window {
            let c = text[k]
            k += 1
            if inString {
                if c == UInt8(ascii: "\\") {
                    k += 1
                } else if c == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch c {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth == 0 {
                    // The value is closed: only spaces may follow on its line, then the next value must open.
                    while k < window, text[k] == 0x20 || text[k] == 0x09 || text[k] == 0x0D { k += 1 }
                    guard k < window, text[k] == 0x0A else { return false }
                    while k < window, text[k] == 0x20 || text[k] == 0x09 || text[k] == 0x0D || text[k] == 0x0A {
                        k += 1
                    }
                    return k < window && (text[k] == UInt8(ascii: "{") || text[k] == UInt8(ascii: "["))
                }
            case 0x0A: return false
            default: break
            }
        }
        return false
    }

    /// Whether `text` (from a 0x1E) starts an RFC 7464 JSON text sequence: the separator, optional white space, and
    /// the first byte of a JSON text.
    private static func isJSONSequence(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        var k = 1
        while k < text.count, text[k] == 0x20 || text[k] == 0x09 || text[k] == 0x0A || text[k] == 0x0D { k += 1 }
        guard k < text.count else { return false }
        let c = text[k]
        return c == UInt8(ascii: "{") || c == UInt8(ascii: "[") || c == UInt8(ascii: "\"")
            || (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || c == UInt8(ascii: "-")
            || c == UInt8(ascii: "t") || c == UInt8(ascii: "f") || c == UInt8(ascii: "n")
    }

    /// Whether `text` starts with an RFC 2046 delimiter line (`--`, 1 to 70 boundary characters, optional white
    /// space, a line end) followed by a header field line (`Name:`): a multipart body whose boundary parameter is
    /// lost. The multipart decoder takes the boundary from that first line (docs/decoding.md#multipart).
    private static func isMultipart(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        guard text.count > 2, text[1] == UInt8(ascii: "-") else { return false }
        var k = 2
        while k < text.count, k - 2 < 70, MultipartBodyDecoder.isBoundaryCharacter(text[k]) { k += 1 }
        // The last boundary character may not be a space: trailing spaces are transport padding.
        while k > 2, text[k - 1] == 0x20 { k -= 1 }
        guard k > 2 else { return false }
        while k < text.count, text[k] == 0x20 || text[k] == 0x09 { k += 1 }
        if k < text.count, text[k] == 0x0D { k += 1 }
        guard k < text.count, text[k] == 0x0A else { return false }
        k += 1
        // A field name (RFC 9110 token characters), then a colon.
        let nameStart = k
        while k < text.count, k - nameStart < 256, isTokenCharacter(text[k]) { k += 1 }
        return k > nameStart && k < text.count && text[k] == UInt8(ascii: ":")
    }

    private static func isTokenCharacter(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(c)
        }
    }

    /// Whether `text` is an event stream: every line in the first `lineWindow` bytes (but a last one cut off there) is
    /// blank, a `:` comment, or one of the four fields of the HTML standard's event-stream format (`event`, `data`,
    /// `id`, `retry`) followed by a colon; the first that is not a comment is a field; and a `data` line is followed by
    /// a blank line, which dispatches an event. A YAML or properties file whose first key is `id` is not one; a NUL
    /// byte decides against.
    private static func isEventStream(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        let window = min(text.count, lineWindow)
        let fields = ["event:", "data:", "id:", "retry:"].map { Array($0.utf8) }
        var k = 0
        var dataPending = false
        while k < window {
            var end = k
            while end < window, text[end] != 0x0A, text[end] != 0x0D {
                if text[end] == 0 { return false }
                end += 1
            }
            // A line cut off by the window (or by the body's end, without a line end) is not judged.
            guard end < window else { break }
            if end == k {
                if dataPending { return true }
            } else if text[k] != UInt8(ascii: ":") {
                guard
                    let field = fields.first(where: { f in
                        end - k >= f.count && zip(f, text[k..<(k + f.count)]).allSatisfy { $0 == $1 }
                    })
                else { return false }
                if field[0] == UInt8(ascii: "d") { dataPending = true }
            }
            // One line end: CR LF, LF or CR.
            k = end + 1
            if text[end] == 0x0D, k < window, text[k] == 0x0A { k += 1 }
        }
        return false
    }

    /// The type of text that starts with `<`.
    /// - Parameters:
    ///   - text: the body, from its first `<`.
    ///   - comments: leading comments already skipped (a few are looked past, no more).
    /// - Returns: the MIME type the markup announces, or nil.
    private static func markupType(_ text: UnsafeBufferPointer<UInt8>, comments: Int = 0) -> String? {
        func startsWith(_ prefix: String, at offset: Int = 0) -> Bool {
            let p = Array(prefix.utf8)
            guard text.count - offset >= p.count else { return false }
            for k in 0..<p.count where asciiLower(text[offset + k]) != p[k] { return false }
            return true
        }
        for html in ["<!doctype html", "<html", "<head", "<body"] where startsWith(html) {
            return "text/html"
        }
        // A leading comment says nothing: decide on what follows it.
        if startsWith("<!--") {
            guard comments < 4 else { return nil }
            let window = min(text.count, 1024)
            var k = 4
            while k + 3 <= window,
                !(text[k] == UInt8(ascii: "-") && text[k + 1] == UInt8(ascii: "-")
                    && text[k + 2] == UInt8(ascii: ">"))
            { k += 1 }
            guard k + 3 <= window else { return nil }
            k += 3
            while k < text.count, text[k] == 0x20 || text[k] == 0x09 || text[k] == 0x0A || text[k] == 0x0D { k += 1 }
            guard k < text.count, text[k] == UInt8(ascii: "<") else { return nil }
            return markupType(UnsafeBufferPointer(rebasing: text[k...]), comments: comments + 1)
        }
        if startsWith("<plist") { return "application/x-plist" }
        if startsWith("<?xml") {
            let window = min(text.count, 1024)
            for k in 5..<window where text[k] == UInt8(ascii: "<") {
                if startsWith("<plist", at: k) || startsWith("<!doctype plist", at: k) { return "application/x-plist" }
                if startsWith("<!doctype html", at: k) || startsWith("<html", at: k) { return "text/html" }
            }
            return "application/xml"
        }
        // `<` and a name start (a letter, `_` or `:`; a non-ASCII byte may begin a name too).
        guard text.count > 1 else { return nil }
        let c = text[1]
        let isNameStart =
            (c | 0x20) >= UInt8(ascii: "a") && (c | 0x20) <= UInt8(ascii: "z")
            || c == UInt8(ascii: "_") || c == UInt8(ascii: ":") || c >= 0x80
        return isNameStart ? "application/xml" : nil
    }
}
