// The one file that talks to libuchardet (docs/decoding.md#text): detection of a body's charset when nothing declares
// it. Nothing of uchardet's is visible outside this file.
internal import CUchardet

enum CharsetDetector {
    /// Bytes uchardet is given at most: its verdict settles within the first kilobytes of text, and a 60 MB body must
    /// not cost a pass of the detector's state machines over all of it.
    static let maxBytes = 1 << 20

    /// What uchardet calls some encodings, where that is not a WHATWG label.
    private static let aliases: [String: WebEncoding] = [
        "uhc": .eucKR, // CP949, which WHATWG's EUC-KR is
        "mac-cyrillic": .xMacCyrillic,
        "utf-16": .utf16LE, // without a BOM uchardet cannot tell; WHATWG's `utf-16` label is UTF-16LE
    ]

    /// The encoding uchardet detects in the first ``maxBytes`` of `body`, as a WHATWG encoding; nil when it finds
    /// none, or one that WHATWG does not have (IBM852, UTF-32, EUC-TW, …) or never detects (the `replacement` of
    /// ISO-2022-KR, HZ-GB-2312 and ISO-2022-CN).
    static func detect(_ body: UnsafeBufferPointer<UInt8>) -> WebEncoding? {
        guard let base = body.baseAddress, !body.isEmpty, let detector = uchardet_new() else { return nil }
        defer { uchardet_delete(detector) }
        let count = min(body.count, maxBytes)
        let raw = UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self)
        guard uchardet_handle_data(detector, raw, count) == 0 else { return nil }
        uchardet_data_end(detector)
        guard let name = uchardet_get_charset(detector) else { return nil }
        let label = String(cString: name).lowercased()
        guard let encoding = WebEncoding(label: label) ?? aliases[label], encoding != .replacement else { return nil }
        return encoding
    }

    /// Bytes looked at for UTF-16 without a BOM.
    static let utf16SampleBytes = 4096

    /// UTF-16 without a byte order mark, which uchardet 0.0.7 does not detect (measured: none of the eight such files
    /// of the uchardet and chardet corpora; own code for that reason): text in UTF-16 has zero bytes in the high half
    /// of its code units (every ASCII character, and most Latin, Greek, Cyrillic, CJK punctuation and kana have high
    /// bytes 0x00-0x30), and text in any other encoding has none. UTF-16LE when at least 1 in 10 of the odd bytes of
    /// the first ``utf16SampleBytes`` are zero and at most 1 in 100 of the even ones (UTF-16BE the other way round).
    static func utf16WithoutBOM(_ body: UnsafeBufferPointer<UInt8>) -> WebEncoding? {
        let count = min(body.count, utf16SampleBytes) & ~1
        guard count >= 8 else { return nil }
        var evenZeros = 0
        var oddZeros = 0
        var i = 0
        while i < count {
            if body[i] == 0 { evenZeros += 1 }
            if body[i + 1] == 0 { oddZeros += 1 }
            i += 2
        }
        let units = count / 2
        if oddZeros * 10 >= units && evenZeros * 100 <= units { return .utf16LE }
        if evenZeros * 10 >= units && oddZeros * 100 <= units { return .utf16BE }
        return nil
    }
}
