internal import CShims

/// Text as a browser lays it out, in UTF-8 (docs/decoding.md#visible-text): runs of white space outside `pre` become
/// one space, blocks start and end lines (a blank line around paragraphs and headings), `<br>` ends a line, no line
/// starts or ends with a space, and there is never more than one blank line. Bounded: past `limit` bytes the text is
/// cut at a character boundary and `truncated` is set.
struct TextBuilder {
    private(set) var bytes: [UInt8] = []
    let limit: Int
    private(set) var truncated = false
    /// White space seen since the last text.
    private var pendingSpace = false
    /// A table cell began since the last text.
    private var pendingTab = false
    /// Line breaks wanted before the next text (1: new line, 2: blank line).
    private var pendingBreaks = 0
    /// Line feeds at the end of `bytes`.
    private var trailingNewlines = 0
    /// A `pre` has just started.
    private var dropLineFeed = false

    init(limit: Int) {
        self.limit = limit
    }

    /// HTML's ASCII white space.
    @inline(__always)
    static func isSpace(_ byte: UInt8) -> Bool {
        // Bits 0x09, 0x0A, 0x0C, 0x0D and 0x20.
        byte <= 0x20 && (0x1_0000_3600 as UInt64) &>> UInt64(byte) & 1 != 0
    }

    /// A block boundary: `count` (1 or 2) line breaks before the next text.
    @inline(__always)
    mutating func breakLine(_ count: Int) {
        if count > pendingBreaks { pendingBreaks = count }
        pendingSpace = false
        pendingTab = false
    }

    /// A table cell: a tab before the next text unless it starts a line.
    mutating func separate() {
        pendingTab = true
    }

    /// `<br>`: ends the line, even an empty one (at most one blank line in a row).
    mutating func lineBreak() {
        guard !bytes.isEmpty, !truncated else { return }
        flushBreaks()
        pendingSpace = false
        pendingTab = false
        if trailingNewlines < 2 { appendRaw(0x0A) }
    }

    /// Text whose white space collapses.
    mutating func appendCollapsing(_ text: UnsafeBufferPointer<UInt8>) {
        guard !truncated, let base = text.baseAddress else { return }
        let n = text.count
        var i = 0
        while i < n {
            if Self.isSpace(base[i]) {
                pendingSpace = true
                i += 1
                while i < n && Self.isSpace(base[i]) { i += 1 }
                if i == n { return }
            }
            // Words separated by single spaces are what collapsing gives already: they are copied as one run.
            let start = i
            i += 1
            while i < n {
                if n - i >= 8 {
                    // Eight bytes at a time up to the first one below 0x21 (white space or a control): the high bit of
                    // each such byte, exact for the lowest (a borrow only runs upwards from a real one).
                    let word = UInt64(littleEndian: UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
                    let low = (word &- 0x2121_2121_2121_2121) & ~word & 0x8080_8080_8080_8080
                    guard low != 0 else {
                        i += 8
                        continue
                    }
                    i += low.trailingZeroBitCount >> 3
                }
                let byte = base[i]
                if !Self.isSpace(byte) {
                    i += 1
                } else if byte == 0x20 && i + 1 < n && !Self.isSpace(base[i + 1]) {
                    i += 2
                } else {
                    break
                }
            }
            flush()
            appendRaw(UnsafeBufferPointer(start: base + start, count: i - start))
            if truncated { return }
        }
    }

    /// A `pre` element starts: a line feed right after its start tag is not content (HTML's parsing rules; libxml2
    /// passes it on).
    mutating func startPreformatted() {
        dropLineFeed = true
    }

    /// Text inside `pre`: kept as written.
    mutating func appendPreformatted(_ text: UnsafeBufferPointer<UInt8>) {
        var text = text
        if dropLineFeed {
            dropLineFeed = false
            if text.first == 0x0A { text = UnsafeBufferPointer(rebasing: text.dropFirst()) }
        }
        guard !truncated, !text.isEmpty else { return }
        flush()
        appendRaw(text)
        var newlines = 0
        for byte in text.reversed() {
            guard byte == 0x0A else { break }
            newlines += 1
        }
        trailingNewlines = newlines == text.count ? trailingNewlines + newlines : newlines
    }

    /// Drops line feeds at the end.
    mutating func finish() {
        while bytes.last == 0x0A { bytes.removeLast() }
        trailingNewlines = 0
    }

    /// Writes what is pending before text: line breaks (none at the start), else a tab or a space within a line.
    @inline(__always)
    private mutating func flush() {
        if bytes.isEmpty {
            pendingBreaks = 0
        } else if pendingBreaks > 0 {
            flushBreaks()
        } else if trailingNewlines == 0 && (pendingTab || pendingSpace) {
            appendRaw(pendingTab ? 0x09 : 0x20)
        }
        pendingSpace = false
        pendingTab = false
        trailingNewlines = 0
    }

    private mutating func flushBreaks() {
        while pendingBreaks > trailingNewlines && !truncated {
            let before = trailingNewlines
            appendRaw(0x0A)
            if trailingNewlines == before { break }
        }
        pendingBreaks = 0
    }

    @inline(__always)
    private mutating func appendRaw(_ byte: UInt8) {
        guard bytes.count < limit else {
            truncated = true
            return
        }
        bytes.append(byte)
        if byte == 0x0A { trailingNewlines += 1 }
    }

    private mutating func appendRaw(_ run: UnsafeBufferPointer<UInt8>) {
        let room = limit - bytes.count
        if run.count <= room {
            bytes.append(contentsOf: run)
            return
        }
        // Cut before the character that does not fit: back off over UTF-8 continuation bytes.
        var cut = max(room, 0)
        while cut > 0 && cut < run.count && run[cut] & 0xC0 == 0x80 { cut -= 1 }
        bytes.append(contentsOf: run[..<cut])
        truncated = true
    }
}

/// A link target as an HTML page writes it, made ready for resolution (docs/decoding.md#links).
///
/// Every link of a page passes here (a hundred and more per page), so the common case, a clean target that needs
/// no escaping, allocates nothing: the same array comes back.
enum URLReference {
    /// The target of an `href`, `src` or `action`, cleaned and escaped; nil when it is no link to follow: empty, a
    /// fragment of this page (`#…`), or a `javascript:`, `vbscript:` or `data:` URL.
    static func linkTarget(_ raw: [UInt8]) -> [UInt8]? {
        // A target without a byte to escape has none to clean either (those are white space and controls): one pass
        // decides both.
        let plain = !containsEscapable(raw)
        let cleaned = plain ? raw : clean(raw)
        guard let first = cleaned.first, first != 0x23 else { return nil }
        let refused = cleaned.withUnsafeBufferPointer { buffer in
            schemeLength(of: buffer).map { isRefused(UnsafeBufferPointer(rebasing: buffer[..<$0])) } ?? false
        }
        if refused { return nil }
        return plain ? cleaned : escaped(cleaned)
    }

    /// Whether ``linkTarget(_:)`` would give a target for this NUL-terminated attribute value, checked in place.
    static func isLinkTarget(_ value: UnsafePointer<UInt8>) -> Bool {
        var i = 0
        while value[i] != 0 && value[i] <= 0x20 { i += 1 }
        let first = value[i]
        guard first != 0, first != 0x23 else { return false }
        guard (first | 0x20) >= 0x61 && (first | 0x20) <= 0x7A else { return true }
        // A scheme, with tabs and line feeds (which the URL parser removes) skipped, matched against the refused
        // ones as it is read (at most 10 bytes).
        var length = 0
        var javascript = true
        var vbscript = true
        var data = true
        while true {
            let byte = value[i]
            if byte == 0x09 || byte == 0x0A || byte == 0x0D {
                i += 1
                continue
            }
            if byte == 0x3A { break }
            let lower = byte | 0x20
            guard
                (lower >= 0x61 && lower <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2B || byte == 0x2D
                    || byte == 0x2E, length < 10
            else { return true }
            let folded = byte >= 0x41 && byte <= 0x5A ? lower : byte
            javascript = javascript && matches(folded, "javascript", at: length)
            vbscript = vbscript && matches(folded, "vbscript", at: length)
            data = data && matches(folded, "data", at: length)
            length += 1
            i += 1
        }
        return !((javascript && length == 10) || (vbscript && length == 8) || (data && length == 4))
    }

    @inline(__always)
    private static func matches(_ byte: UInt8, _ name: StaticString, at index: Int) -> Bool {
        index < name.utf8CodeUnitCount && name.utf8Start[index] == byte
    }

    /// Whether a scheme (without its `:`) is one whose URLs are no links: `javascript`, `vbscript`, `data`, any
    /// case.
    private static func isRefused(_ scheme: UnsafeBufferPointer<UInt8>) -> Bool {
        equalsLowercased(scheme, "javascript") || equalsLowercased(scheme, "vbscript")
            || equalsLowercased(scheme, "data")
    }

    private static func equalsLowercased(_ bytes: UnsafeBufferPointer<UInt8>, _ name: StaticString) -> Bool {
        guard bytes.count == name.utf8CodeUnitCount else { return false }
        for i in 0..<bytes.count where bytes[i] | 0x20 != name.utf8Start[i] { return false }
        return true
    }

    /// The URL parser's first steps: C0 controls and spaces trimmed at both ends, tabs and line feeds removed.
    static func clean(_ raw: [UInt8]) -> [UInt8] {
        // Usually there is nothing to remove: the same array, not a copy.
        let unchanged = raw.withUnsafeBufferPointer { buffer in
            guard let first = buffer.first, let last = buffer.last, first > 0x20, last > 0x20 else { return false }
            for byte in buffer where byte == 0x09 || byte == 0x0A || byte == 0x0D { return false }
            return true
        }
        if unchanged { return raw }
        guard let first = raw.firstIndex(where: { $0 > 0x20 }) else { return [] }
        let last = raw.lastIndex(where: { $0 > 0x20 })!
        var out = Array(raw[first...last])
        if out.contains(where: { $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) {
            out.removeAll { $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        }
        return out
    }

    /// The length of the scheme (without its `:`) when the reference starts with one
    /// (`letter *(letter / digit / + / - / .) :`), else nil.
    static func schemeLength(of reference: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let first = reference.first, (first | 0x20) >= 0x61 && (first | 0x20) <= 0x7A else { return nil }
        for (i, byte) in reference.enumerated() {
            if byte == 0x3A { return i }
            let lower = byte | 0x20
            guard
                (lower >= 0x61 && lower <= 0x7A) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2B || byte == 0x2D
                    || byte == 0x2E
            else { return nil }
        }
        return nil
    }

    static func hasScheme(_ reference: [UInt8]) -> Bool {
        reference.withUnsafeBufferPointer { schemeLength(of: $0) != nil }
    }

    static func hasScheme(_ reference: UnsafeBufferPointer<UInt8>) -> Bool { schemeLength(of: reference) != nil }

    /// Whether `reference` is an absolute path (`/…`, not `//…`) that libxml2's `xmlBuildURI` copies as it is after
    /// the base's scheme and authority: its path has only RFC 3986 path bytes that libxml2 writes back unescaped
    /// (unreserved, sub-delims, `@`, `/`) and no segment starting with `.`; its query, if any, only those and `:`,
    /// `?`; no `%` (libxml2 unescapes and escapes again) and no fragment. The HTML tests check the claim against
    /// `xmlBuildURI` (docs/html-parser.md#cost).
    static func isCopiedAbsolutePath(_ reference: UnsafeBufferPointer<UInt8>) -> Bool {
        guard reference.count >= 1, reference[0] == 0x2F, reference.count == 1 || reference[1] != 0x2F else {
            return false
        }
        var inQuery = false
        var previous: UInt8 = 0
        for byte in reference {
            let bits = copiedBytes[Int(byte)]
            if inQuery {
                if bits & 2 == 0 { return false }
            } else if byte == 0x3F {
                inQuery = true
            } else if bits & 1 == 0 || (byte == 0x2E && previous == 0x2F) {
                return false
            }
            previous = byte
        }
        return true
    }

    /// Bytes ``isCopiedAbsolutePath(_:)`` allows: 1 in the path, 2 in the query.
    private static let copiedBytes: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 256)
        let path = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=@/".utf8)
        for byte in path { table[Int(byte)] = 3 }
        for byte in Array(":?".utf8) { table[Int(byte)] = 2 }
        return table
    }()

    /// Percent-encodes what RFC 3986 does not allow in a URI and browsers encode: controls, space, non-ASCII bytes,
    /// `"`, `<`, `>`, `\`, `^`, `` ` ``, `{`, `|`, `}` (libxml2's resolution refuses them).
    static func escaped(_ reference: [UInt8]) -> [UInt8] {
        guard containsEscapable(reference) else { return reference }
        var out: [UInt8] = []
        out.reserveCapacity(reference.count + 16)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in reference {
            if needsEscape(byte) {
                out += [0x25, hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            } else {
                out.append(byte)
            }
        }
        return out
    }

    /// Whether a byte of `bytes` is one ``escaped(_:)`` encodes.
    private static func containsEscapable(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { !isPlain($0) }
    }

    /// Whether a target needs neither cleaning nor escaping: no byte to escape (white space and controls, which
    /// cleaning removes, are such bytes). ``linkTarget(_:)`` of a plain target that ``isLinkTarget(_:)`` accepts is
    /// the target itself.
    /// 16 bytes at a time (C, SSE2; every link target of a page is tested, docs/html-parser.md#cost).
    static func isPlain(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        return respdecode_url_first_escaped(base, bytes.count) == bytes.count
    }

    /// ``isPlain(_:)`` one byte at a time, with ``escaped(_:)``'s own test (for the tests).
    static func isPlainBytewise(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        for byte in bytes where needsEscape(byte) { return false }
        return true
    }

    /// Bits of the printable ASCII bytes to escape: `"` `<` `>` (0x22, 0x3C, 0x3E) and `\` `^` `` ` `` `{` `|` `}`
    /// (0x5C, 0x5E, 0x60, 0x7B-0x7D), as two 64-bit masks.
    private static let escapeLow: UInt64 = 1 << 0x22 | 1 << 0x3C | 1 << 0x3E
    private static let escapeHigh: UInt64 =
        1 << (0x5C - 64) | 1 << (0x5E - 64) | 1 << (0x60 - 64)
        | 1 << (0x7B - 64) | 1 << (0x7C - 64) | 1 << (0x7D - 64)

    @inline(__always)
    private static func needsEscape(_ byte: UInt8) -> Bool {
        if byte <= 0x20 || byte >= 0x7F { return true }
        return (byte < 64 ? escapeLow &>> UInt64(byte) : escapeHigh &>> UInt64(byte - 64)) & 1 != 0
    }
}
