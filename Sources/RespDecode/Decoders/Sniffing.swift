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
///
/// Leading white space (and a UTF-8 byte order mark) is skipped for the text formats, as mitmproxy's XML view and
/// file(1) do; the binary signatures must be at offset 0.
public enum Sniffing {
    /// The MIME types that are sniffed over (besides a missing one): the generic binary type.
    public static func isSniffable(_ mimeType: String?) -> Bool {
        guard let mimeType else { return true }
        return mimeType == "application/octet-stream"
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
        switch body[i] {
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            return "application/json"
        case UInt8(ascii: "<"):
            return markupType(UnsafeBufferPointer(rebasing: body[i...]))
        default:
            return nil
        }
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
