/// Reads an OpenStep ("old-style ASCII") property list or a `.strings` table and writes its value as JSON while it
/// parses (docs/decoding.md#openstep-property-lists, docs/output.md#plist).
///
/// Own code, because nothing we may use reads this format: Foundation's `PropertyListSerialization` is avoided on
/// Linux (it crashes and leaks on other plist input, docs/reliability.md#property-lists), libxml2 reads only XML, and no Debian library reads OpenStep
/// text (bookworm's libplist is 2.2, which has no OpenStep parser, and is not on our list of libraries).
///
/// The syntax is Foundation's (CoreFoundation's `CFOldStylePList.c` behaviour, checked against Swift 6.3.1 on Linux):
/// - `{ key = value; … }` dictionaries (keys are strings; `key;` alone means `key = key;`), `( a, b, )` arrays with
///   an optional trailing comma, `"quoted"` strings with the C escapes plus `\UXXXX` and octal `\NNN` (read in the
///   NeXTSTEP encoding, as Foundation does), unquoted strings of `A-Za-z0-9_$/:.-`, `<hex data>` with white space
///   between bytes, `//` and `/* */` comments; every scalar is a string (no numbers, no booleans);
/// - a top-level `key = value;` sequence without braces is a `.strings` table: a dictionary; a body of only white
///   space and comments is an empty one;
/// - UTF-8 (a BOM is skipped), or UTF-16/UTF-32 with a BOM (transcoded first); without a BOM the text is UTF-8;
/// - GNUstep's typed values `<*I…>` integer, `<*R…>` real, `<*BY>`/`<*BN>` boolean, `<*D…>` date and `<[…]>`
///   base64 data, which Foundation rejects and GNUstep writes.
///
/// Stricter than Foundation in two places: an unterminated `/*` comment is an error (Foundation reads it as the end of
/// the text), and a lone surrogate from `\U` escapes becomes U+FFFD (JSON cannot hold it). Containers are parsed with
/// an explicit stack, not recursion, so the depth limit (not the thread's stack) bounds nesting.
struct OpenStepPlistReader {
    struct Limits {
        var maxDepth: Int
        var maxObjects: Int
        var maxValueBytes: Int
        /// Largest UTF-8 text a UTF-16 or UTF-32 body may transcode to (`maxDecodedBodyBytes`).
        var maxTextBytes: Int = .max
    }

    /// Longest text of a GNUstep typed value between `<*X` and `>`: a date is 25 bytes, a real at most a few dozen;
    /// GNUstep itself once overflowed its stack on an 8 KB token (the gnustep-base corpus).
    static let maxTypedValueBytes = 64

    let limits: Limits

    /// Parses `body`; on error throws and leaves `output` as it was.
    func read(_ body: UnsafeBufferPointer<UInt8>, into output: OutputBuffer) throws(RecordError) {
        let mark = output.mark
        do {
            switch try Self.transcoded(body, maxBytes: limits.maxTextBytes) {
            case .some(let utf8):
                try utf8.withUnsafeBufferPointer { (text) throws(RecordError) in
                    var parser = OpenStepParser(text: text, out: output, limits: limits)
                    try parser.parseDocument()
                }
            case .none:
                var text = body
                if body.count >= 3 && body[0] == 0xEF && body[1] == 0xBB && body[2] == 0xBF {
                    text = UnsafeBufferPointer(rebasing: body[3...])
                }
                var parser = OpenStepParser(text: text, out: output, limits: limits)
                try parser.parseDocument()
            }
        } catch {
            output.rollback(to: mark)
            throw error
        }
    }

    /// The body as UTF-8 when it starts with a UTF-16 or UTF-32 byte order mark; `nil` when it has none (UTF-8).
    ///
    /// Two passes: the first checks the code units and counts the UTF-8 bytes, so that a text that would grow past
    /// `maxBytes` (CJK text in UTF-16 grows by half) is refused before anything is allocated, the second writes them.
    static func transcoded(_ body: UnsafeBufferPointer<UInt8>, maxBytes: Int) throws(RecordError) -> [UInt8]? {
        func has(_ prefix: [UInt8]) -> Bool { body.count >= prefix.count && zip(body, prefix).allSatisfy { $0 == $1 } }
        let width: Int
        if has([0x00, 0x00, 0xFE, 0xFF]) || has([0xFF, 0xFE, 0x00, 0x00]) {
            width = 4
        } else if has([0xFE, 0xFF]) || has([0xFF, 0xFE]) {
            width = 2
        } else {
            return nil
        }
        let big = body[0] == 0x00 || body[0] == 0xFE
        guard body.count % width == 0 else {
            throw RecordError(
                .invalidPropertyList, "UTF-\(width * 8) text of \(body.count) bytes, not a multiple of \(width)")
        }
        /// The code point at `i` and the bytes it takes, or nil when the text is not UTF-16/32 there.
        func scalar(at i: Int) -> (UInt32, Int)? {
            if width == 4 {
                let b = (UInt32(body[i]), UInt32(body[i + 1]), UInt32(body[i + 2]), UInt32(body[i + 3]))
                let value = big ? b.0 << 24 | b.1 << 16 | b.2 << 8 | b.3 : b.3 << 24 | b.2 << 16 | b.1 << 8 | b.0
                return value < 0x11_0000 && !(0xD800...0xDFFF).contains(value) ? (value, 4) : nil
            }
            func unit(_ at: Int) -> UInt32 {
                big ? UInt32(body[at]) << 8 | UInt32(body[at + 1]) : UInt32(body[at + 1]) << 8 | UInt32(body[at])
            }
            let first = unit(i)
            if first < 0xD800 || first >= 0xE000 { return (first, 2) }
            guard first < 0xDC00, i + 3 < body.count else { return nil }
            let second = unit(i + 2)
            guard (0xDC00..<0xE000).contains(second) else { return nil }
            return (0x10000 + (first - 0xD800) << 10 + (second - 0xDC00), 4)
        }
        @inline(__always) func utf8Length(_ value: UInt32) -> Int {
            value < 0x80 ? 1 : value < 0x800 ? 2 : value < 0x10000 ? 3 : 4
        }
        var length = 0
        var i = width
        while i < body.count {
            guard let (value, size) = scalar(at: i) else {
                throw RecordError(
                    .invalidPropertyList, "not UTF-\(width * 8) text: a lone surrogate or a code point past U+10FFFF",
                    location: .init(offset: i))
            }
            length += utf8Length(value)
            i += size
        }
        guard length <= maxBytes else {
            throw RecordError(
                .limitExceeded,
                "the text is \(length) bytes as UTF-8, more than the decoded body limit (maxDecodedBodyBytes)")
        }
        return [UInt8](unsafeUninitializedCapacity: length) { out, count in
            var o = 0
            var k = width
            while k < body.count {
                let (value, size) = scalar(at: k)!
                k += size
                switch utf8Length(value) {
                case 1:
                    out[o] = UInt8(value)
                case 2:
                    out[o] = UInt8(0xC0 | value >> 6)
                    out[o + 1] = UInt8(0x80 | value & 0x3F)
                case 3:
                    out[o] = UInt8(0xE0 | value >> 12)
                    out[o + 1] = UInt8(0x80 | value >> 6 & 0x3F)
                    out[o + 2] = UInt8(0x80 | value & 0x3F)
                default:
                    out[o] = UInt8(0xF0 | value >> 18)
                    out[o + 1] = UInt8(0x80 | value >> 12 & 0x3F)
                    out[o + 2] = UInt8(0x80 | value >> 6 & 0x3F)
                    out[o + 3] = UInt8(0x80 | value & 0x3F)
                }
                o += utf8Length(value)
            }
            count = o
        }
    }
}

/// The parser proper: a cursor over UTF-8 text writing JSON to `out`.
private struct OpenStepParser {
    private enum Kind { case array, dict }
    private struct Frame {
        var kind: Kind
        var count = 0
    }

    let text: UnsafeBufferPointer<UInt8>
    let out: OutputBuffer
    let limits: OpenStepPlistReader.Limits
    let valueEnd: Int
    var pos = 0
    var objects = 0
    private var stack: [Frame] = []
    /// Decoded bytes of a string with escapes, or of data.
    private var scratch: [UInt8] = []

    init(text: UnsafeBufferPointer<UInt8>, out: OutputBuffer, limits: OpenStepPlistReader.Limits) {
        self.text = text
        self.out = out
        self.limits = limits
        let (end, overflow) = out.count.addingReportingOverflow(limits.maxValueBytes)
        valueEnd = overflow ? Int.max : end
    }

    // MARK: Document

    mutating func parseDocument() throws(RecordError) {
        try skipSpace()
        // Only white space and comments: an empty strings table, as Foundation reads it.
        guard pos < text.count else {
            out.append(ascii: "{}")
            return
        }
        let start = pos
        let mark = out.mark
        if isStringStart(text[pos]) {
            try parseString()
            try skipSpace()
            guard pos < text.count else { return } // a lone string
            let c = text[pos]
            guard c == UInt8(ascii: "=") || c == UInt8(ascii: ";") else {
                throw fail("text after the property list's value", at: pos)
            }
            // A `.strings` table: `key = value;` entries without braces. Read again from the first key.
            out.rollback(to: mark)
            pos = start
            objects = 0
            try parseStringsTable()
            return
        }
        try parseValue()
        try skipSpace()
        guard pos == text.count else { throw fail("text after the property list's value", at: pos) }
    }

    /// The entries of a `.strings` table up to the end of the text, as one dictionary.
    private mutating func parseStringsTable() throws(RecordError) {
        try count()
        try open(.dict)
        while true {
            guard try dictionaryKey(closing: nil) else { break }
            try parseValue()
            try endOfEntry()
        }
    }

    // MARK: Values

    /// Parses one value at `pos` (after white space), with every container inside it, iteratively.
    private mutating func parseValue() throws(RecordError) {
        let base = stack.count
        value: while true {
            try skipSpace()
            guard pos < text.count else { throw fail("the text ends where a value belongs", at: pos) }
            let c = text[pos]
            switch c {
            case UInt8(ascii: "{"):
                try count()
                pos += 1
                try open(.dict)
                if try dictionaryKey(closing: UInt8(ascii: "}")) { continue value }
            case UInt8(ascii: "("):
                try count()
                pos += 1
                try open(.array)
                try skipSpace()
                if pos < text.count && text[pos] == UInt8(ascii: ")") {
                    pos += 1
                    close()
                } else {
                    continue value
                }
            case UInt8(ascii: "<"):
                try count()
                try parseAngle()
            default:
                guard isStringStart(c) else { throw fail("unexpected character \(describe(c))", at: pos) }
                try count()
                try parseString()
            }
            // After a value: close what ends here, or go on to the next value of the innermost container.
            while stack.count > base {
                try skipSpace()
                let top = stack.count - 1
                guard pos < text.count else {
                    throw fail(
                        stack[top].kind == .array ? "an array has no closing ')'" : "a dictionary has no closing '}'",
                        at: pos)
                }
                if stack[top].kind == .array {
                    let d = text[pos]
                    if d == UInt8(ascii: ")") {
                        pos += 1
                        close()
                        continue
                    }
                    guard d == UInt8(ascii: ",") else { throw fail("expected ',' or ')' in an array", at: pos) }
                    pos += 1
                    try skipSpace()
                    if pos < text.count && text[pos] == UInt8(ascii: ")") { // the trailing comma
                        pos += 1
                        close()
                        continue
                    }
                    out.append(UInt8(ascii: ","))
                    stack[top].count += 1
                    continue value
                }
                try endOfEntry()
                if try dictionaryKey(closing: UInt8(ascii: "}")) { continue value }
            }
            return
        }
    }

    /// Reads the `;` that ends a dictionary entry.
    private mutating func endOfEntry() throws(RecordError) {
        try skipSpace()
        guard pos < text.count, text[pos] == UInt8(ascii: ";") else {
            throw fail("missing ';' after a dictionary value", at: pos)
        }
        pos += 1
    }

    /// Reads the next key of the innermost dictionary and its `=`, writing `"key":`, and returns `true` when its value
    /// is to be read; returns `false` when the dictionary ended (at `closing`, or at the end of the text when `closing`
    /// is `nil`: a strings table). `key;` entries (value = key) are written here, and reading goes on after them.
    private mutating func dictionaryKey(closing: UInt8?) throws(RecordError) -> Bool {
        while true {
            try skipSpace()
            let top = stack.count - 1
            guard pos < text.count else {
                if closing == nil {
                    close()
                    return false
                }
                throw fail("a dictionary has no closing '}'", at: pos)
            }
            let c = text[pos]
            if let closing, c == closing {
                pos += 1
                close()
                return false
            }
            guard isStringStart(c) else {
                throw fail(
                    "expected a key (a string)\(closing == nil ? "" : " or '}'"), found \(describe(c))", at: pos)
            }
            try count()
            if stack[top].count > 0 { out.append(UInt8(ascii: ",")) }
            stack[top].count += 1
            let keyStart = out.mark
            try parseString()
            let keyEnd = out.mark
            out.append(UInt8(ascii: ":"))
            try skipSpace()
            guard pos < text.count else { throw fail("expected '=' or ';' after a key", at: pos) }
            if text[pos] == UInt8(ascii: "=") {
                pos += 1
                return true
            }
            guard text[pos] == UInt8(ascii: ";") else { throw fail("expected '=' or ';' after a key", at: pos) }
            pos += 1
            // `"key";`: the value is the key (a .strings shorthand Foundation takes in any dictionary).
            try count()
            let length = keyEnd - keyStart
            out.reserve(length)
            out.end.update(from: out.base + keyStart, count: length)
            out.commit(length)
            try checkSize()
        }
    }

    private mutating func open(_ kind: Kind) throws(RecordError) {
        guard stack.count < limits.maxDepth else {
            throw RecordError(
                .limitExceeded, "containers nested deeper than \(limits.maxDepth) (maxDepth)",
                location: location(pos))
        }
        out.append(UInt8(ascii: kind == .dict ? "{" : "["))
        stack.append(Frame(kind: kind))
    }

    private mutating func close() {
        let frame = stack.removeLast()
        out.append(UInt8(ascii: frame.kind == .dict ? "}" : "]"))
    }

    /// Counts one object (a value or a key) against `maxPlistObjects`.
    @inline(__always)
    private mutating func count() throws(RecordError) {
        objects += 1
        guard objects <= limits.maxObjects else {
            throw RecordError(
                .limitExceeded, "more than \(limits.maxObjects) objects (maxPlistObjects)", location: location(pos))
        }
    }

    private func checkSize() throws(RecordError) {
        guard out.count <= valueEnd else {
            throw RecordError(
                .limitExceeded, "plist value larger than the value limit (maxValueBytes)", location: location(pos))
        }
    }

    // MARK: Strings

    private func isStringStart(_ c: UInt8) -> Bool { c == UInt8(ascii: "\"") || isUnquoted(c) }

    /// Characters of an unquoted string: `A-Za-z0-9_$/:.-`.
    @inline(__always)
    private func isUnquoted(_ c: UInt8) -> Bool { unquotedCharacters[Int(c)] }

    /// Parses a quoted or unquoted string at `pos` and writes it as a JSON string.
    private mutating func parseString() throws(RecordError) {
        if text[pos] != UInt8(ascii: "\"") {
            let start = pos
            while pos < text.count && isUnquoted(text[pos]) { pos += 1 }
            // Only ASCII letters, digits and `_$/:.-`: nothing to escape.
            out.append(UInt8(ascii: "\""))
            out.append(UnsafeBufferPointer(rebasing: text[start..<pos]))
            out.append(UInt8(ascii: "\""))
            return try checkSize()
        }
        let open = pos
        pos += 1
        let start = pos
        // The common case: no escape before the closing quote, so the bytes are the string.
        while pos < text.count {
            let c = text[pos]
            if c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") { break }
            pos += 1
        }
        guard pos < text.count else { throw fail("a quoted string has no closing '\"'", at: open) }
        if text[pos] == UInt8(ascii: "\"") {
            try writeString(UnsafeBufferPointer(rebasing: text[start..<pos]), at: start)
            pos += 1
            return
        }
        scratch.removeAll(keepingCapacity: true)
        scratch.append(contentsOf: UnsafeBufferPointer(rebasing: text[start..<pos]))
        /// A high surrogate from `\U` waiting for its low half.
        var pendingHigh: UInt32?
        while true {
            guard pos < text.count else { throw fail("a quoted string has no closing '\"'", at: open) }
            let c = text[pos]
            if c == UInt8(ascii: "\"") {
                pos += 1
                break
            }
            if c != UInt8(ascii: "\\") {
                if pendingHigh != nil {
                    pendingHigh = nil
                    putScalar(0xFFFD)
                }
                scratch.append(c)
                pos += 1
                continue
            }
            pos += 1
            guard pos < text.count else { throw fail("a quoted string has no closing '\"'", at: open) }
            let e = text[pos]
            pos += 1
            var scalar: UInt32
            switch e {
            case UInt8(ascii: "0")...UInt8(ascii: "7"):
                // Up to three octal digits, kept to a byte and read in the NeXTSTEP encoding, as Foundation does.
                var value = UInt32(e - UInt8(ascii: "0"))
                var digits = 1
                while digits < 3 && pos < text.count && text[pos] >= UInt8(ascii: "0") && text[pos] <= UInt8(ascii: "7")
                {
                    value = value << 3 | UInt32(text[pos] - UInt8(ascii: "0"))
                    pos += 1
                    digits += 1
                }
                let byte = value & 0xFF
                scalar = byte < 0x80 ? byte : UInt32(nextStepHighHalf[Int(byte - 0x80)])
            case UInt8(ascii: "U"):
                // Up to four hexadecimal digits.
                var value: UInt32 = 0
                var digits = 0
                while digits < 4 && pos < text.count, let digit = text[pos].hexDigitValue {
                    value = value << 4 | UInt32(digit)
                    pos += 1
                    digits += 1
                }
                scalar = value
            case UInt8(ascii: "a"): scalar = 0x07
            case UInt8(ascii: "b"): scalar = 0x08
            case UInt8(ascii: "f"): scalar = 0x0C
            case UInt8(ascii: "n"): scalar = 0x0A
            case UInt8(ascii: "r"): scalar = 0x0D
            case UInt8(ascii: "t"): scalar = 0x09
            case UInt8(ascii: "v"): scalar = 0x0B
            default:
                // Any other escaped character is itself (`\"`, `\\`, `\'`; also `\d` → `d`, as Foundation reads it).
                // A multi-byte character's lead byte is copied as it is; its other bytes follow unescaped.
                guard e < 0x80 else {
                    if pendingHigh != nil {
                        pendingHigh = nil
                        putScalar(0xFFFD)
                    }
                    scratch.append(e)
                    continue
                }
                scalar = UInt32(e)
            }
            if let high = pendingHigh {
                pendingHigh = nil
                if (0xDC00..<0xE000).contains(scalar) {
                    putScalar(0x10000 + (high - 0xD800) << 10 + (scalar - 0xDC00))
                    continue
                }
                putScalar(0xFFFD)
            }
            if (0xD800..<0xDC00).contains(scalar) {
                pendingHigh = scalar
            } else if (0xDC00..<0xE000).contains(scalar) {
                putScalar(0xFFFD)
            } else {
                putScalar(scalar)
            }
            if scratch.count > limits.maxValueBytes {
                throw RecordError(
                    .limitExceeded, "plist value larger than the value limit (maxValueBytes)", location: location(pos))
            }
        }
        if pendingHigh != nil { putScalar(0xFFFD) }
        let local = scratch
        try local.withUnsafeBufferPointer { (bytes) throws(RecordError) in try writeString(bytes, at: start) }
    }

    /// Writes `bytes` (UTF-8, checked) as a JSON string.
    private func writeString(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) throws(RecordError) {
        out.append(UInt8(ascii: "\""))
        switch out.appendJSONStringContent(utf8: bytes, stoppingPast: valueEnd) {
        case .written: break
        case .invalidUTF8: throw fail("a string is not UTF-8", at: start)
        case .pastLimit:
            throw RecordError(
                .limitExceeded, "plist value larger than the value limit (maxValueBytes)", location: location(start))
        }
        out.append(UInt8(ascii: "\""))
        try checkSize()
    }

    /// Appends a code point to `scratch` as UTF-8 (the values come from escapes: at most U+10FFFF, no surrogates).
    private mutating func putScalar(_ scalar: UInt32) {
        if scalar < 0x80 {
            scratch.append(UInt8(scalar))
        } else if scalar < 0x800 {
            scratch.append(UInt8(0xC0 | scalar >> 6))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        } else if scalar < 0x10000 {
            scratch.append(UInt8(0xE0 | scalar >> 12))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        } else {
            scratch.append(UInt8(0xF0 | scalar >> 18))
            scratch.append(UInt8(0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(0x80 | scalar & 0x3F))
        }
    }

    // MARK: Data and GNUstep typed values

    /// Parses `<…>` at `pos`: hex data, GNUstep base64 data `<[…]>`, or a GNUstep typed value `<*X…>`.
    private mutating func parseAngle() throws(RecordError) {
        let open = pos
        pos += 1
        if pos < text.count && text[pos] == UInt8(ascii: "*") { return try parseTyped(open) }
        if pos < text.count && text[pos] == UInt8(ascii: "[") { return try parseBase64(open) }
        scratch.removeAll(keepingCapacity: true)
        while true {
            // White space between bytes only, no comments (`<41/*>` is not data).
            while pos < text.count && isSpace(text[pos]) { pos += 1 }
            guard pos < text.count else { throw fail("data has no closing '>'", at: open) }
            if text[pos] == UInt8(ascii: ">") {
                pos += 1
                break
            }
            guard let high = text[pos].hexDigitValue else {
                throw fail("data holds \(describe(text[pos])), not a hexadecimal digit", at: pos)
            }
            guard pos + 1 < text.count, let low = text[pos + 1].hexDigitValue else {
                throw fail("data has a byte of one hexadecimal digit", at: pos)
            }
            scratch.append(high << 4 | low)
            pos += 2
            if scratch.count > limits.maxValueBytes {
                throw RecordError(
                    .limitExceeded, "plist value larger than the value limit (maxValueBytes)", location: location(pos))
            }
        }
        try writeData()
    }

    private func writeData() throws(RecordError) {
        out.append(ascii: "{\"base64\":\"")
        scratch.withUnsafeBufferPointer { out.appendBase64($0) }
        out.append(ascii: "\"}")
        try checkSize()
    }

    /// GNUstep's `<[base64]>` data (white space allowed, padding optional).
    private mutating func parseBase64(_ open: Int) throws(RecordError) {
        pos += 1
        scratch.removeAll(keepingCapacity: true)
        var quad: UInt32 = 0
        var symbols = 0
        var padding = 0
        while true {
            guard pos < text.count else { throw fail("base64 data has no closing ']>'", at: open) }
            let c = text[pos]
            pos += 1
            if c == UInt8(ascii: "]") {
                guard pos < text.count, text[pos] == UInt8(ascii: ">") else {
                    throw fail("base64 data has no closing ']>'", at: open)
                }
                pos += 1
                break
            }
            if isSpace(c) { continue }
            if c == UInt8(ascii: "=") {
                padding += 1
                continue
            }
            guard padding == 0, let value = base64Value(c) else {
                throw fail("base64 data holds \(describe(c))", at: pos - 1)
            }
            quad = quad << 6 | UInt32(value)
            symbols += 1
            if symbols % 4 == 0 {
                scratch += [
                    UInt8(truncatingIfNeeded: quad >> 16), UInt8(truncatingIfNeeded: quad >> 8),
                    UInt8(truncatingIfNeeded: quad),
                ]
                quad = 0
            }
        }
        switch symbols % 4 {
        case 0: break
        case 2: scratch.append(UInt8(truncatingIfNeeded: quad >> 4))
        case 3: scratch += [UInt8(truncatingIfNeeded: quad >> 10), UInt8(truncatingIfNeeded: quad >> 2)]
        default: throw fail("base64 data of a wrong length", at: open)
        }
        guard padding <= 2 else { throw fail("base64 data with too much padding", at: open) }
        try writeData()
    }

    /// A GNUstep typed value: `<*I…>`, `<*R…>`, `<*B…>` or `<*D…>`.
    private mutating func parseTyped(_ open: Int) throws(RecordError) {
        pos += 1
        guard pos < text.count else { throw fail("a typed value has no closing '>'", at: open) }
        let type = text[pos]
        pos += 1
        let start = pos
        let maxBytes = OpenStepPlistReader.maxTypedValueBytes
        let limit = min(text.count, start + maxBytes + 1)
        while pos < limit && text[pos] != UInt8(ascii: ">") { pos += 1 }
        guard pos - start <= maxBytes else { throw fail("a typed value longer than \(maxBytes) bytes", at: open) }
        guard pos < text.count else { throw fail("a typed value has no closing '>'", at: open) }
        let token = UnsafeBufferPointer(rebasing: text[start..<pos])
        pos += 1
        switch type {
        case UInt8(ascii: "I"):
            guard let value = parsePlistInteger(token) else {
                throw fail("<*I…> is not an integer from -2^63 to 2^64-1", at: open)
            }
            out.appendDecimal(value)
        case UInt8(ascii: "R"):
            guard let value = parsePlistReal(token) else { throw fail("<*R…> is not a number", at: open) }
            out.appendPlistReal(value)
        case UInt8(ascii: "B"):
            guard token.count == 1, token[0] == UInt8(ascii: "Y") || token[0] == UInt8(ascii: "N") else {
                throw fail("<*B…> is not Y or N", at: open)
            }
            out.append(ascii: token[0] == UInt8(ascii: "Y") ? "true" : "false")
        case UInt8(ascii: "D"):
            guard let seconds = parseGNUstepDate(token), out.appendPlistDate(secondsSinceReferenceDate: seconds) else {
                throw fail("<*D…> is not a date like 2001-01-01 00:00:00 +0000", at: open)
            }
        default:
            throw fail("unknown typed value <*\(describe(type))…>", at: open)
        }
    }

    // MARK: White space and comments

    @inline(__always)
    private func isSpace(_ c: UInt8) -> Bool { c == 0x20 || (c >= 0x09 && c <= 0x0D) }

    /// Skips white space (ASCII, and U+2028/U+2029) and comments.
    private mutating func skipSpace() throws(RecordError) {
        let n = text.count
        while pos < n {
            let c = text[pos]
            if isSpace(c) {
                pos += 1
            } else if c == 0xE2 && pos + 2 < n && text[pos + 1] == 0x80
                && (text[pos + 2] == 0xA8 || text[pos + 2] == 0xA9)
            {
                pos += 3
            } else if c == UInt8(ascii: "/") && pos + 1 < n && text[pos + 1] == UInt8(ascii: "/") {
                // To the end of the line (a line feed; Foundation does not end these at a lone CR).
                pos += 2
                while pos < n && text[pos] != 0x0A { pos += 1 }
            } else if c == UInt8(ascii: "/") && pos + 1 < n && text[pos + 1] == UInt8(ascii: "*") {
                let open = pos
                pos += 2
                while true {
                    guard pos + 1 < n else {
                        pos = n
                        throw fail("a /* comment has no closing */", at: open)
                    }
                    if text[pos] == UInt8(ascii: "*") && text[pos + 1] == UInt8(ascii: "/") {
                        pos += 2
                        break
                    }
                    pos += 1
                }
            } else {
                return
            }
        }
    }

    // MARK: Errors

    private func describe(_ c: UInt8) -> String {
        c >= 0x21 && c < 0x7F ? "'\(Character(Unicode.Scalar(c)))'" : "byte 0x\(String(c, radix: 16, uppercase: true))"
    }

    /// The location of byte `offset` of the text: line and column (in bytes) counted here, only on errors.
    private func location(_ offset: Int) -> RecordError.Location {
        var line = 1
        var lineStart = 0
        let end = min(offset, text.count)
        var i = 0
        while i < end {
            if text[i] == 0x0A {
                line += 1
                lineStart = i + 1
            }
            i += 1
        }
        return .init(offset: offset, line: line, column: end - lineStart + 1)
    }

    private func fail(_ message: String, at offset: Int) -> RecordError {
        RecordError(.invalidPropertyList, "not an OpenStep property list: " + message, location: location(offset))
    }
}

/// GNUstep's date text `YYYY-MM-DD HH:MM:SS ±HHMM` as seconds since 2001-01-01T00:00:00Z; `nil` if malformed or out
/// of range.
func parseGNUstepDate(_ token: UnsafeBufferPointer<UInt8>) -> Double? {
    guard token.count == 25 else { return nil }
    func number(_ at: Int, _ width: Int) -> Int? {
        var value = 0
        for k in at..<(at + width) {
            let digit = token[k] &- 0x30
            guard digit < 10 else { return nil }
            value = value * 10 + Int(digit)
        }
        return value
    }
    func at(_ i: Int, _ c: Unicode.Scalar) -> Bool { token[i] == UInt8(ascii: c) }
    guard at(4, "-"), at(7, "-"), at(10, " "), at(13, ":"), at(16, ":"), at(19, " "), at(20, "+") || at(20, "-"),
        let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let hour = number(11, 2),
        let minute = number(14, 2), let second = number(17, 2), let zoneHours = number(21, 2),
        let zoneMinutes = number(23, 2)
    else { return nil }
    guard year >= 1, (1...12).contains(month), day >= 1, day <= PlistCalendar.daysInMonth(month, year: year),
        hour < 24, minute < 60, second < 60, zoneHours < 24, zoneMinutes < 60
    else { return nil }
    let days = PlistCalendar.daysSinceYear1(year: year, month: month, day: day) - PlistCalendar.referenceDays
    let zone = (zoneHours * 3_600 + zoneMinutes * 60) * (at(20, "-") ? -1 : 1)
    return Double(days * 86_400 + hour * 3_600 + minute * 60 + second - zone)
}

private func base64Value(_ c: UInt8) -> UInt8? {
    switch c {
    case 0x41...0x5A: c - 0x41
    case 0x61...0x7A: c - 0x61 + 26
    case 0x30...0x39: c - 0x30 + 52
    case 0x2B: 62
    case 0x2F: 63
    default: nil
    }
}

/// Which bytes may appear in an unquoted string.
private let unquotedCharacters: [Bool] = (0..<256).map { byte in
    switch byte {
    case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: true
    case 0x5F, 0x24, 0x2F, 0x3A, 0x2E, 0x2D: true // _ $ / : . -
    default: false
    }
}

/// The code points of the NeXTSTEP encoding's bytes 0x80…0xFF (0 where it has none): what an octal escape above
/// `\177` means. Generated from Foundation's `String.Encoding.nextstep` decoder.
private let nextStepHighHalf: [UInt16] = [
    0x00A0, 0x00C0, 0x00C1, 0x00C2, 0x00C3, 0x00C4, 0x00C5, 0x00C7, 0x00C8, 0x00C9, 0x00CA, 0x00CB, 0x00CC, 0x00CD,
    0x00CE, 0x00CF, 0x00D0, 0x00D1, 0x00D2, 0x00D3, 0x00D4, 0x00D5, 0x00D6, 0x00D9, 0x00DA, 0x00DB, 0x00DC, 0x00DD,
    0x00DE, 0x00B5, 0x00D7, 0x00F7, 0x00A9, 0x00A1, 0x00A2, 0x00A3, 0x2044, 0x00A5, 0x0192, 0x00A7, 0x00A4, 0x2019,
    0x201C, 0x00AB, 0x2039, 0x203A, 0xFB01, 0xFB02, 0x00AE, 0x2013, 0x2020, 0x2021, 0x00B7, 0x00A6, 0x00B6, 0x2022,
    0x201A, 0x201E, 0x201D, 0x00BB, 0x2026, 0x2030, 0x00AC, 0x00BF, 0x00B9, 0x02CB, 0x00B4, 0x02C6, 0x02DC, 0x00AF,
    0x02D8, 0x02D9, 0x00A8, 0x00B2, 0x02DA, 0x00B8, 0x00B3, 0x02DD, 0x02DB, 0x02C7, 0x2014, 0x00B1, 0x00BC, 0x00BD,
    0x00BE, 0x00E0, 0x00E1, 0x00E2, 0x00E3, 0x00E4, 0x00E5, 0x00E7, 0x00E8, 0x00E9, 0x00EA, 0x00EB, 0x00EC, 0x00C6,
    0x00ED, 0x00AA, 0x00EE, 0x00EF, 0x00F0, 0x00F1, 0x0141, 0x00D8, 0x0152, 0x00BA, 0x00F2, 0x00F3, 0x00F4, 0x00F5,
    0x00F6, 0x00E6, 0x00F9, 0x00FA, 0x00FB, 0x0131, 0x00FC, 0x00FD, 0x0142, 0x00F8, 0x0153, 0x00DF, 0x00FE, 0x00FF,
    0x0000, 0x0000,
]
