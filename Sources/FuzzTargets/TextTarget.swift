import RespDecode

/// The charset resolution and conversion (``TextDecoding``), with each kind and a few declared labels, and the text
/// decoder. The first byte of the input chooses: bits 0-1 the kind, bits 2-5 the declared label, bits 6-7 the byte
/// limit; the rest is the body. Invariants: the text is valid UTF-8, within the limit, and says it was cut only when
/// it was; the decoder's value is valid JSON.
enum TextTarget {
    static let labels: [String?] = [
        nil, "utf-8", "windows-1252", "shift_jis", "gbk", "gb18030", "big5", "euc-jp", "iso-2022-jp", "euc-kr",
        "utf-16le", "utf-16be", "x-user-defined", "iso-2022-kr", "koi8-u", "bogus",
    ]
    static let limits = [Int.max, 0, 7, 4096]

    static func run(_ data: UnsafeBufferPointer<UInt8>) {
        guard let selector = data.first else { return }
        let body = UnsafeBufferPointer(rebasing: data.dropFirst())
        let kind: TextDecoding.Kind = [.plain, .html, .xml, .plain][Int(selector & 3)]
        let label = labels[Int(selector >> 2 & 15)]
        let limit = limits[Int(selector >> 6)]
        do {
            try TextDecoding.withUTF8(body, declaredCharset: label, kind: kind, maxBytes: limit) { text, info in
                if text.count > limit { violated("\(text.count) bytes of text past the limit \(limit)") }
                if !OutputBuffer().appendJSONString(utf8: text) { violated("the text of \(info.charset) is not UTF-8") }
                if info.replacements < 0 { violated("a negative count of replacements") }
            }
        } catch {
            violated("TextDecoding threw \(error.message)")
        }
        let mimeType = ["text/plain", "text/html", "application/xml", "text/csv"][Int(selector & 3)]
        BodyTarget.run(body, decoder: "text", mimeType: mimeType)
    }
}
