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
}
