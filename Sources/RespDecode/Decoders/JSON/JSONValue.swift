/*
 A small, strict RFC 8259 reader that builds values, for the inputs that arrive as JSON (HAR entries, ndjson lines).

 Why own code: on Linux, Foundation's JSONSerialization is 30–70× slower than this project needs (measured for the
 JSON decoder, docs/contributing.md#json), it accepts `[1,]` and `{"a":1,}`, which RFC 8259 forbids, and it takes a
 whole document at once — the HAR framer reads one entry at a time out of a document of hundreds of MB. The body
 decoder's JSONTranscoder validates and writes JSON text; it builds no values, which the framers need.

 Rules:
 - UTF-8 only (no BOM: the framers strip it), checked strictly (RFC 3629: no overlongs, no encoded surrogates,
   nothing above U+10FFFF); `\u` escapes must not leave a lone surrogate.
 - Exactly one value, whitespace around it; top-level scalars are accepted.
 - Numbers are checked against the grammar and kept as their text (no rounding).
 - Object members keep their input order, duplicates included; `value[key]` finds the last one, as most readers do.
 - Nesting deeper than `maxDepth` is `.tooDeep`. Parsing keeps an explicit stack (no recursion), so depth costs no
   call stack; the limit also bounds the recursion of comparing and freeing a value.
 - Errors give a reason and the byte offset where it was found; `.truncated` when the input ended where more JSON
   was needed (an ndjson line cut short).

 Speed: a long string without escapes (a base64 body of megabytes is one string) is scanned 8 bytes at a time for a
 byte that ends a plain run (`"`, `\`, a control character, non-ASCII) and becomes a String in one go.
 */

/// A JSON value.
enum JSONValue: Sendable, Equatable {
    /// Members in input order, duplicates kept.
    case object([(key: String, value: JSONValue)])
    case array([JSONValue])
    case string(String)
    /// The number's text as written, checked against the RFC 8259 grammar.
    case number(String)
    case bool(Bool)
    case null

    /// Why a text is not JSON, and where (a byte offset into the text given).
    struct ParseError: Error, Sendable, Equatable, CustomStringConvertible {
        enum Kind: Sendable, Equatable {
            /// Not RFC 8259 JSON.
            case syntax
            /// The text ended where more was needed.
            case truncated
            /// Nesting deeper than the limit.
            case tooDeep
        }
        var kind: Kind
        var message: String
        /// Byte offset into the text, 0-based.
        var offset: Int

        var description: String { "\(message) (byte \(offset))" }
    }

    static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.object(let a), .object(let b)):
            guard a.count == b.count else { return false }
            for (x, y) in zip(a, b) where x.key != y.key || x.value != y.value { return false }
            return true
        case (.array(let a), .array(let b)): return a == b
        case (.string(let a), .string(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.bool(let a), .bool(let b)): return a == b
        case (.null, .null): return true
        default: return false
        }
    }

    // MARK: - Access

    /// The value of the last member named `key`, when this is an object that has one.
    subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        return members.last { $0.key == key }?.value
    }

    var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The number as an `Int`, when it is written as an integer (`-?digits`, no fraction or exponent) that fits.
    var integerValue: Int? {
        guard case .number(let text) = self else { return nil }
        let digits = text.utf8.first == UInt8(ascii: "-") ? text.utf8.dropFirst() : text.utf8[...]
        guard !digits.isEmpty, digits.allSatisfy({ $0 &- UInt8(ascii: "0") < 10 }) else { return nil }
        return Int(text)
    }

    /// A short name of the value's type, for messages.
    var typeName: String {
        switch self {
        case .object: "an object"
        case .array: "an array"
        case .string: "a string"
        case .number: "a number"
        case .bool: "a boolean"
        case .null: "null"
        }
    }

    // MARK: - Parsing

    /// The deepest nesting a value may have, whatever `maxDepth` says: Swift frees a nested value recursively, and
    /// about 80,000 levels overflow the stack (found by review with `--max-depth 1000000`). HAR entries and ndjson
    /// records need a handful of levels.
    static let depthCeiling = 10_000

    /// Parses `text` as exactly one JSON value, nested at most `min(maxDepth, depthCeiling)` deep.
    static func parse(_ text: UnsafeBufferPointer<UInt8>, maxDepth: Int = 512) throws(ParseError) -> JSONValue {
        guard let base = text.baseAddress, !text.isEmpty else {
            throw ParseError(kind: .truncated, message: "expected a JSON value, found end of input", offset: 0)
        }
        var reader = JSONReader(base: base, count: text.count, maxDepth: min(maxDepth, depthCeiling))
        return try reader.parse()
    }

    static func parse(_ text: [UInt8], maxDepth: Int = 512) throws(ParseError) -> JSONValue {
        try text.withUnsafeBufferPointer { buffer in
            Result { () throws(ParseError) in try parse(buffer, maxDepth: maxDepth) }
        }.get()
    }

    static func parse(_ text: String, maxDepth: Int = 512) throws(ParseError) -> JSONValue {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }
}

// MARK: - The reader

/// One pass over one UTF-8 text.
private struct JSONReader {
    let base: UnsafePointer<UInt8>
    var p: UnsafePointer<UInt8>
    let end: UnsafePointer<UInt8>
    let maxDepth: Int
    /// Where strings with escapes are put together; reused.
    var scratch: [UInt8] = []

    init(base: UnsafePointer<UInt8>, count: Int, maxDepth: Int) {
        self.base = base
        self.p = base
        self.end = base + count
        self.maxDepth = maxDepth
    }

    /// An open container while its contents are read.
    struct Frame {
        var isObject: Bool
        var elements: [JSONValue] = []
        var members: [(key: String, value: JSONValue)] = []
        var key = ""
    }

    // MARK: Errors

    func describe(_ position: UnsafePointer<UInt8>) -> String {
        guard position < end else { return "end of input" }
        let byte = position.pointee
        if byte >= 0x20 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        let digits = Array("0123456789ABCDEF".utf8)
        return "byte 0x" + String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]], as: UTF8.self)
    }

    /// An error at `position`: `.truncated` when that is the end of the text.
    func failure(_ message: String, at position: UnsafePointer<UInt8>) -> JSONValue.ParseError {
        JSONValue.ParseError(
            kind: position >= end ? .truncated : .syntax, message: "\(message), found \(describe(position))",
            offset: position - base)
    }

    // MARK: Structure

    @inline(__always) mutating func skipWhitespace() {
        let mask: UInt64 = 1 << 0x20 | 1 << 0x0A | 1 << 0x0D | 1 << 0x09
        while p < end {
            let c = p.pointee
            guard c <= 0x20, mask & (1 << UInt64(c)) != 0 else { return }
            p += 1
        }
    }

    mutating func parse() throws(JSONValue.ParseError) -> JSONValue {
        var stack: [Frame] = []
        skipWhitespace()
        value: while true {
            guard p < end else { throw failure("expected a JSON value", at: p) }
            var value: JSONValue
            switch p.pointee {
            case UInt8(ascii: "\""):
                value = .string(try readString())
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let isObject = p.pointee == UInt8(ascii: "{")
                guard stack.count < maxDepth else {
                    throw JSONValue.ParseError(
                        kind: .tooDeep, message: "JSON nesting deeper than the limit of \(max(maxDepth, 0)) levels",
                        offset: p - base)
                }
                p += 1
                skipWhitespace()
                if p < end && p.pointee == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    p += 1
                    value = isObject ? .object([]) : .array([])
                } else {
                    var frame = Frame(isObject: isObject)
                    if isObject { frame.key = try readKey() }
                    stack.append(frame)
                    continue value
                }
            case UInt8(ascii: "t"):
                try literal("true")
                value = .bool(true)
            case UInt8(ascii: "f"):
                try literal("false")
                value = .bool(false)
            case UInt8(ascii: "n"):
                try literal("null")
                value = .null
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                value = .number(try readNumber())
            default:
                throw failure("expected a JSON value", at: p)
            }
            // A value is complete: put it into its container, closing containers until one goes on with a comma.
            while true {
                let top = stack.count - 1
                skipWhitespace()
                guard top >= 0 else {
                    guard p == end else { throw failure("expected end of input after the JSON value", at: p) }
                    return value
                }
                let isObject = stack[top].isObject
                if isObject {
                    stack[top].members.append((key: stack[top].key, value: value))
                } else {
                    stack[top].elements.append(value)
                }
                guard p < end else {
                    throw failure(
                        isObject
                            ? "expected ',' or '}' after object member" : "expected ',' or ']' after array element",
                        at: p)
                }
                let c = p.pointee
                if c == UInt8(ascii: ",") {
                    p += 1
                    skipWhitespace()
                    if isObject { stack[top].key = try readKey() }
                    continue value
                }
                guard c == (isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else {
                    throw failure(
                        isObject
                            ? "expected ',' or '}' after object member" : "expected ',' or ']' after array element",
                        at: p)
                }
                p += 1
                let frame = stack.removeLast()
                value = isObject ? .object(frame.members) : .array(frame.elements)
            }
        }
    }

    /// Reads `"key"`, the colon and the whitespace after it.
    mutating func readKey() throws(JSONValue.ParseError) -> String {
        guard p < end, p.pointee == UInt8(ascii: "\"") else { throw failure("expected a string key", at: p) }
        let key = try readString()
        skipWhitespace()
        guard p < end, p.pointee == UInt8(ascii: ":") else { throw failure("expected ':' after object key", at: p) }
        p += 1
        skipWhitespace()
        return key
    }

    mutating func literal(_ word: StaticString) throws(JSONValue.ParseError) {
        let bytes = word.utf8Start
        for index in 0..<word.utf8CodeUnitCount {
            guard p < end, p.pointee == bytes[index] else {
                throw failure("invalid literal, expected '\(word)'", at: p)
            }
            p += 1
        }
    }

    mutating func readNumber() throws(JSONValue.ParseError) -> String {
        let start = p
        @inline(__always) func isDigit(_ c: UInt8) -> Bool { c &- UInt8(ascii: "0") < 10 }
        if p.pointee == UInt8(ascii: "-") { p += 1 }
        guard p < end, isDigit(p.pointee) else { throw failure("expected a digit in number", at: p) }
        if p.pointee == UInt8(ascii: "0") {
            p += 1
            if p < end && isDigit(p.pointee) { throw failure("leading zeros are not allowed in numbers", at: p) }
        } else {
            while p < end && isDigit(p.pointee) { p += 1 }
        }
        if p < end && p.pointee == UInt8(ascii: ".") {
            p += 1
            guard p < end, isDigit(p.pointee) else { throw failure("expected a digit after '.' in number", at: p) }
            while p < end && isDigit(p.pointee) { p += 1 }
        }
        if p < end && p.pointee | 0x20 == UInt8(ascii: "e") {
            p += 1
            if p < end && (p.pointee == UInt8(ascii: "+") || p.pointee == UInt8(ascii: "-")) { p += 1 }
            guard p < end, isDigit(p.pointee) else { throw failure("expected a digit in the exponent", at: p) }
            while p < end && isDigit(p.pointee) { p += 1 }
        }
        return String(decoding: UnsafeBufferPointer(start: start, count: p - start), as: UTF8.self)
    }

    // MARK: Strings

    /// Reads the string at `p` (at its opening quote).
    mutating func readString() throws(JSONValue.ParseError) -> String {
        var p = self.p + 1
        defer { self.p = p }
        let start = p
        var escaped = false // whether `scratch` holds the string so far, up to `runStart`
        var runStart = p
        while true {
            // A plain run: 8 bytes at a time until a byte that is '"', '\\', a control character or non-ASCII.
            while end - p >= 8 {
                let word = UInt64(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt64.self))
                let flagged = jsonStringStops(word)
                if flagged == 0 {
                    p += 8
                    continue
                }
                p += flagged.trailingZeroBitCount >> 3
                break
            }
            guard p < end else {
                throw JSONValue.ParseError(kind: .truncated, message: "unterminated string", offset: end - base)
            }
            let c = p.pointee
            if c == UInt8(ascii: "\"") {
                let result: String
                if escaped {
                    scratch.append(contentsOf: UnsafeBufferPointer(start: runStart, count: p - runStart))
                    result = String(decoding: scratch, as: UTF8.self)
                } else {
                    result = String(decoding: UnsafeBufferPointer(start: start, count: p - start), as: UTF8.self)
                }
                p += 1
                return result
            } else if c == UInt8(ascii: "\\") {
                if !escaped {
                    escaped = true
                    scratch.removeAll(keepingCapacity: true)
                }
                scratch.append(contentsOf: UnsafeBufferPointer(start: runStart, count: p - runStart))
                try readEscape(&p)
                runStart = p
            } else if c < 0x20 {
                throw failure("unescaped control character in string", at: p)
            } else if c >= 0x80 {
                try skipUTF8(&p)
            } else {
                p += 1
            }
        }
    }

    /// Decodes the escape at `p` (at its backslash) into `scratch`.
    mutating func readEscape(_ p: inout UnsafePointer<UInt8>) throws(JSONValue.ParseError) {
        guard end - p >= 2 else {
            throw JSONValue.ParseError(kind: .truncated, message: "unterminated string", offset: end - base)
        }
        let decoded: UInt8
        switch p[1] {
        case UInt8(ascii: "\""): decoded = 0x22
        case UInt8(ascii: "\\"): decoded = 0x5C
        case UInt8(ascii: "/"): decoded = 0x2F
        case UInt8(ascii: "b"): decoded = 0x08
        case UInt8(ascii: "f"): decoded = 0x0C
        case UInt8(ascii: "n"): decoded = 0x0A
        case UInt8(ascii: "r"): decoded = 0x0D
        case UInt8(ascii: "t"): decoded = 0x09
        case UInt8(ascii: "u"):
            try readUnicodeEscape(&p)
            return
        default:
            throw failure("invalid escape sequence in string", at: p + 1)
        }
        scratch.append(decoded)
        p += 2
    }

    /// Decodes `\uXXXX`, or a surrogate pair of them, as UTF-8 into `scratch`.
    mutating func readUnicodeEscape(_ p: inout UnsafePointer<UInt8>) throws(JSONValue.ParseError) {
        let escapeStart = p
        var scalar = try hex4(p + 2)
        p += 6
        if scalar & 0xF800 == 0xD800 {
            guard scalar < 0xDC00 else { throw loneSurrogate(at: escapeStart, mayContinue: false) }
            let rest = end - p
            guard rest >= 6, p[0] == UInt8(ascii: "\\"), p[1] == UInt8(ascii: "u") else {
                // A high surrogate at the end of a text cut short may yet have been followed by its low one.
                let prefix =
                    rest < 6 && (rest == 0 || p[0] == UInt8(ascii: "\\") && (rest == 1 || p[1] == UInt8(ascii: "u")))
                throw loneSurrogate(at: escapeStart, mayContinue: prefix)
            }
            let low = try hex4(p + 2)
            guard low & 0xFC00 == 0xDC00 else { throw loneSurrogate(at: escapeStart, mayContinue: false) }
            p += 6
            scalar = 0x10000 + ((scalar - 0xD800) << 10 | (low - 0xDC00))
        }
        if scalar < 0x80 {
            scratch.append(UInt8(truncatingIfNeeded: scalar))
        } else if scalar < 0x800 {
            scratch.append(UInt8(truncatingIfNeeded: 0xC0 | scalar >> 6))
            scratch.append(UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F))
        } else if scalar < 0x10000 {
            scratch.append(UInt8(truncatingIfNeeded: 0xE0 | scalar >> 12))
            scratch.append(UInt8(truncatingIfNeeded: 0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F))
        } else {
            scratch.append(UInt8(truncatingIfNeeded: 0xF0 | scalar >> 18))
            scratch.append(UInt8(truncatingIfNeeded: 0x80 | scalar >> 12 & 0x3F))
            scratch.append(UInt8(truncatingIfNeeded: 0x80 | scalar >> 6 & 0x3F))
            scratch.append(UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F))
        }
    }

    func loneSurrogate(at escape: UnsafePointer<UInt8>, mayContinue: Bool) -> JSONValue.ParseError {
        JSONValue.ParseError(
            kind: mayContinue ? .truncated : .syntax,
            message: "lone surrogate in \\u escape (not followed by a low surrogate \\uDC00-\\uDFFF)",
            offset: escape - base)
    }

    func hex4(_ q: UnsafePointer<UInt8>) throws(JSONValue.ParseError) -> UInt32 {
        var value: UInt32 = 0
        for index in 0..<4 {
            guard q + index < end else { throw failure("expected 4 hex digits after \\u", at: end) }
            let c = q[index]
            var digit = c &- UInt8(ascii: "0")
            if digit >= 10 {
                digit = (c | 0x20) &- UInt8(ascii: "a")
                guard digit < 6 else { throw failure("expected 4 hex digits after \\u", at: q + index) }
                digit += 10
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// Steps over the multi-byte UTF-8 sequence at `p`, checking it (RFC 3629).
    func skipUTF8(_ p: inout UnsafePointer<UInt8>) throws(JSONValue.ParseError) {
        let lead = p.pointee
        let available = end - p
        let length: Int
        var low: UInt8 = 0x80
        var high: UInt8 = 0xBF
        switch lead {
        case 0xC2...0xDF: length = 2
        case 0xE0...0xEF:
            length = 3
            if lead == 0xE0 { low = 0xA0 }
            if lead == 0xED { high = 0x9F }
        case 0xF0...0xF4:
            length = 4
            if lead == 0xF0 { low = 0x90 }
            if lead == 0xF4 { high = 0x8F }
        default:
            throw failure("invalid UTF-8 sequence", at: p)
        }
        guard available >= length else {
            // Bytes that are a proper start of a sequence, cut off by the end of the text.
            var index = 1
            while index < available && p[index] >= (index == 1 ? low : 0x80) && p[index] <= (index == 1 ? high : 0xBF) {
                index += 1
            }
            if index == available { throw failure("unterminated string", at: end) }
            throw failure("invalid UTF-8 sequence", at: p)
        }
        guard p[1] >= low, p[1] <= high else { throw failure("invalid UTF-8 sequence", at: p) }
        for index in 2..<length where p[index] & 0xC0 != 0x80 { throw failure("invalid UTF-8 sequence", at: p) }
        p += length
    }
}
