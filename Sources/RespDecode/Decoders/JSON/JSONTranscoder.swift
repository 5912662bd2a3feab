/*
 The JSON decoder's core: a validating, minifying, null-stripping copier over bytes.

 Why hand-written: on Linux, Foundation's JSONSerialization parse → strip → re-serialise measured 4–8 MB/s, 30–70×
 slower than RapidJSON/simdjson (docs/contributing.md#json), JSONDecoder is not much better, and JSONSerialization
 accepts `[1,]` and `{"a":1,}`, which RFC 8259 forbids. It also reformats numbers and escapes `/`.

 Design: one forward pass, no tree. The input is checked against the RFC 8259 grammar and copied into the output
 buffer as it is read: whitespace dropped, numbers copied verbatim, strings re-escaped minimally. The output is never
 longer than the UTF-8 input (every rewrite keeps or shrinks the length, and raw control characters, which would grow,
 are errors), so the buffer is reserved once and written through a raw pointer. Nesting is tracked with an explicit
 bit stack instead of recursion, so depth costs no call stack whatever `maxDepth` is. A null object member is dropped
 by moving the write pointer back to where the member started; a null array element is skipped before its comma is
 written. Commas are written only when the byte before is not `{` or `[`, which keeps them right after drops.
 Plain ASCII inside strings is checked and copied 8 bytes at a time (1.65× the byte loop on the benchmark bodies).
 Errors carry a reason and an offset only; the message, line and column are worked out when the error is reported.
 */

/// Validates JSON text and writes it minified, with minimal string escaping and, optionally, without nulls.
///
/// Duplicate object keys are copied through as they are, in input order: the output is the same text minus
/// whitespace (and nulls), and choosing a winner is left to whoever reads it.
public struct JSONTranscoder: Sendable {
    /// What to do besides validating and minifying.
    public struct Options: Sendable, Hashable {
        /// Remove object members whose value is null and null array elements, recursively (AFNetworking 4's
        /// `removesKeysWithNullValues`). A top-level `null` stays. Default: true.
        public var stripNulls: Bool
        /// Maximum nesting of arrays and objects. Default: 512. Deeper input is `RecordError` `.limitExceeded`.
        public var maxDepth: Int

        /// Creates options; the defaults are those of docs/output.md#json.
        public init(stripNulls: Bool = true, maxDepth: Int = 512) {
            self.stripNulls = stripNulls
            self.maxDepth = maxDepth
        }
    }

    /// The options every call uses.
    public var options: Options

    /// Creates a transcoder.
    public init(options: Options = Options()) {
        self.options = options
    }

    /// Validates `input` as exactly one JSON text (RFC 8259, strict) and appends its minified, minimally re-escaped
    /// form to `output`.
    ///
    /// The input may be UTF-8 (a BOM is dropped), UTF-16 or UTF-32, with or without BOM (RFC 8259 §8.1); see
    /// `JSONInputEncoding`. Error locations are byte offsets (0-based) with line and column (1-based, column in
    /// bytes): for UTF-8 input into the input as given (a BOM counts), for UTF-16/32 input into its UTF-8 conversion,
    /// except that conversion errors give the offset of the bad code unit in the input itself.
    ///
    /// - Throws: `.invalidJSON` for anything that is not one well-formed JSON text (including empty input), and
    ///   `.limitExceeded` for nesting deeper than `options.maxDepth`. On throw, `output` is as it was on entry.
    public func transcode(_ input: UnsafeBufferPointer<UInt8>, into output: OutputBuffer) throws(RecordError) {
        let mark = output.mark
        do {
            let (encoding, bomLength) = JSONInputEncoding.detect(input)
            if encoding == .utf8 {
                try transcodeUTF8(input, from: bomLength, into: output)
            } else {
                let converted = try JSONInputEncoding.utf8(from: input, encoding: encoding, bomLength: bomLength)
                try converted.withUnsafeBufferPointer { buffer in
                    Result { () throws(RecordError) in try transcodeUTF8(buffer, from: 0, into: output) }
                }.get()
            }
        } catch {
            output.rollback(to: mark)
            throw error
        }
    }

    /// Transcodes UTF-8 `input[first...]`; offsets in errors count from `input`'s start.
    private func transcodeUTF8(
        _ input: UnsafeBufferPointer<UInt8>, from first: Int, into output: OutputBuffer
    ) throws(RecordError) {
        guard let base = input.baseAddress, first < input.count else {
            throw Self.error(Failure(.expectedValue, at: input.count), in: input, options: options)
        }
        let length = input.count - first
        // Never longer than the input (see the top of the file); the slack lets the 8-byte string loop store a
        // whole word even when it is about to stop.
        output.reserve(length + 16)
        let outputStart = output.end
        var parser = Parser(
            base: UnsafePointer(base), first: first, count: input.count, output: outputStart,
            stripNulls: options.stripNulls, maxDepth: options.maxDepth
        )
        do {
            try parser.run()
        } catch {
            throw Self.error(error, in: input, options: options)
        }
        output.commit(parser.o - outputStart)
    }
}

// MARK: - Failures

extension JSONTranscoder {
    /// Why parsing stopped; turned into words only when reported.
    fileprivate enum Reason: Sendable {
        case expectedValue, expectedKey, expectedColon, expectedCommaOrBrace, expectedCommaOrBracket
        case trailingContent, unterminatedString, controlCharacter, invalidEscape, invalidUnicodeEscape
        case loneSurrogate, invalidUTF8, expectedDigit, leadingZero, invalidLiteral, tooDeep
    }

    /// The error of the hot path: a reason and a byte offset, cheap to throw.
    fileprivate struct Failure: Error {
        var reason: Reason
        var offset: Int
        init(_ reason: Reason, at offset: Int) {
            self.reason = reason
            self.offset = offset
        }
    }

    /// Words, line and column for a failure; only on the error path.
    @inline(never)
    fileprivate static func error(
        _ failure: Failure, in input: UnsafeBufferPointer<UInt8>, options: Options
    ) -> RecordError {
        let offset = min(max(failure.offset, 0), input.count)
        var line = 1
        var lineStart = 0
        for index in 0..<offset where input[index] == UInt8(ascii: "\n") {
            line += 1
            lineStart = index + 1
        }
        let location = RecordError.Location(offset: offset, line: line, column: offset - lineStart + 1)
        let found = offset < input.count ? describe(input[offset]) : "end of input"
        let message: String
        switch failure.reason {
        case .expectedValue:
            let afterComma = previousSignificantByte(before: offset, in: input) == UInt8(ascii: ",")
            message =
                afterComma
                ? "expected a value after ',', found \(found)"
                : "expected a JSON value, found \(found)"
        case .expectedKey:
            let afterComma = previousSignificantByte(before: offset, in: input) == UInt8(ascii: ",")
            message =
                afterComma
                ? "expected a string key after ',' in object, found \(found)"
                : "expected a string key or '}', found \(found)"
        case .expectedColon: message = "expected ':' after object key, found \(found)"
        case .expectedCommaOrBrace: message = "expected ',' or '}' after object member, found \(found)"
        case .expectedCommaOrBracket: message = "expected ',' or ']' after array element, found \(found)"
        case .trailingContent: message = "expected end of input after the JSON value, found \(found)"
        case .unterminatedString: message = "unterminated string, found end of input"
        case .controlCharacter: message = "unescaped control character in string, found \(found)"
        case .invalidEscape: message = "invalid escape sequence in string, found \(found)"
        case .invalidUnicodeEscape: message = "expected 4 hex digits after \\u, found \(found)"
        case .loneSurrogate: message = "lone surrogate in \\u escape (not followed by a low surrogate \\uDC00-\\uDFFF)"
        case .invalidUTF8: message = "invalid UTF-8 sequence, found \(found)"
        case .expectedDigit: message = "expected a digit in number, found \(found)"
        case .leadingZero: message = "leading zeros are not allowed in numbers, found \(found)"
        case .invalidLiteral: message = "invalid literal, expected 'true', 'false' or 'null'"
        case .tooDeep:
            return RecordError(
                .limitExceeded,
                "JSON nesting deeper than the limit of \(max(options.maxDepth, 0)) levels (maxDepth)",
                location: location
            )
        }
        return RecordError(.invalidJSON, message, location: location)
    }

    private static func describe(_ byte: UInt8) -> String {
        if byte >= 0x20 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
        let digits = Array("0123456789ABCDEF".utf8)
        let hex = String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]], as: UTF8.self)
        return "byte 0x\(hex)"
    }

    private static func previousSignificantByte(before offset: Int, in input: UnsafeBufferPointer<UInt8>) -> UInt8? {
        var index = offset
        while index > 0 {
            index -= 1
            let byte = input[index]
            if !(byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09) { return byte }
        }
        return nil
    }
}

// MARK: - The parser

extension JSONTranscoder {
    /// One pass over one UTF-8 text. `p` reads, `o` writes; both only move forward, except that `o` moves back over a
    /// dropped null member.
    fileprivate struct Parser {
        let base: UnsafePointer<UInt8>
        var p: UnsafePointer<UInt8>
        let end: UnsafePointer<UInt8>
        var o: UnsafeMutablePointer<UInt8>
        let stripNulls: Bool
        let maxDepth: Int
        var depth = 0
        /// One bit per open container, innermost in bit 0: 1 = object, 0 = array.
        var kinds: UInt64 = 0
        /// The bits pushed out of `kinds` past 64 levels (rare, so an array is fine).
        var spilled: [Bool] = []

        init(
            base: UnsafePointer<UInt8>, first: Int, count: Int, output: UnsafeMutablePointer<UInt8>,
            stripNulls: Bool, maxDepth: Int
        ) {
            self.base = base
            self.p = base + first
            self.end = base + count
            self.o = output
            self.stripNulls = stripNulls
            self.maxDepth = maxDepth
        }

        @inline(__always) func failure(_ reason: Reason, at position: UnsafePointer<UInt8>) -> Failure {
            Failure(reason, at: position - base)
        }

        @inline(__always) mutating func put(_ byte: UInt8) {
            o.pointee = byte
            o += 1
        }

        @inline(__always) mutating func skipWhitespace() {
            // Bits 9, 10, 13 and 32: HT, LF, CR, SP.
            let mask: UInt64 = 1 << 0x20 | 1 << 0x0A | 1 << 0x0D | 1 << 0x09
            while p < end {
                let c = p.pointee
                guard c <= 0x20, mask & (1 << UInt64(c)) != 0 else { return }
                p += 1
            }
        }

        mutating func run() throws(Failure) {
            skipWhitespace()
            guard p < end else { throw failure(.expectedValue, at: p) }
            value: while true {
                // Here p < end, at the first byte of a value, and any comma before it is written.
                switch p.pointee {
                case UInt8(ascii: "\""):
                    try copyString()
                case UInt8(ascii: "{"):
                    try open(object: true)
                    if p < end && p.pointee == UInt8(ascii: "}") {
                        p += 1
                        put(UInt8(ascii: "}"))
                        close()
                    } else if try member() {
                        continue value
                    }
                case UInt8(ascii: "["):
                    try open(object: false)
                    if p < end && p.pointee == UInt8(ascii: "]") {
                        p += 1
                        put(UInt8(ascii: "]"))
                        close()
                    } else if try element() {
                        continue value
                    }
                case UInt8(ascii: "t"):
                    try copyLiteral(0x6575_7274, length: 4) // "true", little-endian
                case UInt8(ascii: "f"):
                    try copyLiteral(0x65_736C_6166, length: 5) // "false"
                case UInt8(ascii: "n"):
                    try copyLiteral(0x6C6C_756E, length: 4) // "null"
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                    try copyNumber()
                default:
                    throw failure(.expectedValue, at: p)
                }
                // A value is complete: close containers until one continues with a comma.
                while true {
                    skipWhitespace()
                    if depth == 0 {
                        guard p == end else { throw failure(.trailingContent, at: p) }
                        return
                    }
                    let inObject = kinds & 1 != 0
                    guard p < end else {
                        throw failure(inObject ? .expectedCommaOrBrace : .expectedCommaOrBracket, at: p)
                    }
                    let c = p.pointee
                    if c == UInt8(ascii: ",") {
                        p += 1
                        skipWhitespace()
                        if try inObject ? member() : element() { continue value }
                    } else if c == (inObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        p += 1
                        put(c)
                        close()
                    } else {
                        throw failure(inObject ? .expectedCommaOrBrace : .expectedCommaOrBracket, at: p)
                    }
                }
            }
        }

        /// Copies the opening bracket at `p`, enters the container and skips the whitespace after it.
        @inline(__always) mutating func open(object: Bool) throws(Failure) {
            // Counted before the empty case, so `[]` one level too deep is refused too.
            guard depth < maxDepth else { throw failure(.tooDeep, at: p) }
            put(p.pointee)
            p += 1
            if depth >= 64 { spilled.append(kinds >> 63 != 0) }
            kinds = kinds << 1 | (object ? 1 : 0)
            depth += 1
            skipWhitespace()
        }

        @inline(__always) mutating func close() {
            depth -= 1
            kinds >>= 1
            if depth >= 64, spilled.popLast() == true { kinds |= 1 << 63 }
        }

        /// At an array element (whitespace skipped): drops a null, or writes the separating comma.
        /// - Returns: true when a value follows at `p`, false when a null was dropped.
        @inline(__always) mutating func element() throws(Failure) -> Bool {
            guard p < end else { throw failure(.expectedValue, at: p) }
            if stripNulls && p.pointee == UInt8(ascii: "n") {
                try skipLiteral(0x6C6C_756E, length: 4)
                return false
            }
            if o[-1] != UInt8(ascii: "[") { put(UInt8(ascii: ",")) }
            return true
        }

        /// At an object member (whitespace skipped): copies `,"key":`, then drops it again if the value is null.
        /// - Returns: true when a value follows at `p`, false when a null member was dropped.
        @inline(__always) mutating func member() throws(Failure) -> Bool {
            guard p < end, p.pointee == UInt8(ascii: "\"") else { throw failure(.expectedKey, at: p) }
            let memberStart = o
            if o[-1] != UInt8(ascii: "{") { put(UInt8(ascii: ",")) }
            try copyString()
            skipWhitespace()
            guard p < end, p.pointee == UInt8(ascii: ":") else { throw failure(.expectedColon, at: p) }
            p += 1
            put(UInt8(ascii: ":"))
            skipWhitespace()
            guard p < end else { throw failure(.expectedValue, at: p) }
            if stripNulls && p.pointee == UInt8(ascii: "n") {
                try skipLiteral(0x6C6C_756E, length: 4)
                o = memberStart
                return false
            }
            return true
        }

        /// Checks for the literal whose bytes are `word` (little-endian) at `p` and steps over it.
        @inline(__always) mutating func skipLiteral(_ word: UInt64, length: Int) throws(Failure) {
            guard end - p >= length else { throw failure(.invalidLiteral, at: p) }
            var found: UInt64 = UInt64(UInt32(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt32.self)))
            if length == 5 { found |= UInt64(p[4]) << 32 }
            guard found == word else { throw failure(.invalidLiteral, at: p) }
            p += length
        }

        @inline(__always) mutating func copyLiteral(_ word: UInt64, length: Int) throws(Failure) {
            try skipLiteral(word, length: length)
            UnsafeMutableRawPointer(o).storeBytes(of: UInt32(truncatingIfNeeded: word).littleEndian, as: UInt32.self)
            if length == 5 { o[4] = UInt8(truncatingIfNeeded: word >> 32) }
            o += length
        }

        /// Checks the RFC 8259 number grammar and copies the number's text as it is.
        @inline(__always) mutating func copyNumber() throws(Failure) {
            let start = p
            if p.pointee == UInt8(ascii: "-") { p += 1 }
            guard p < end else { throw failure(.expectedDigit, at: p) }
            let lead = p.pointee
            if lead == UInt8(ascii: "0") {
                p += 1
                if p < end && Self.isDigit(p.pointee) { throw failure(.leadingZero, at: p) }
            } else if lead &- UInt8(ascii: "1") < 9 {
                p += 1
                skipDigits()
            } else {
                throw failure(.expectedDigit, at: p)
            }
            if p < end && p.pointee == UInt8(ascii: ".") {
                p += 1
                guard p < end && Self.isDigit(p.pointee) else { throw failure(.expectedDigit, at: p) }
                skipDigits()
            }
            if p < end && p.pointee | 0x20 == UInt8(ascii: "e") {
                p += 1
                if p < end && (p.pointee == UInt8(ascii: "+") || p.pointee == UInt8(ascii: "-")) { p += 1 }
                guard p < end && Self.isDigit(p.pointee) else { throw failure(.expectedDigit, at: p) }
                skipDigits()
            }
            copy(from: start, count: p - start)
        }

        @inline(__always) static func isDigit(_ c: UInt8) -> Bool { c &- UInt8(ascii: "0") < 10 }

        @inline(__always) mutating func skipDigits() {
            while p < end && Self.isDigit(p.pointee) { p += 1 }
        }

        /// Copies input bytes that have already been read (`source + count <= p`).
        @inline(__always) mutating func copy(from source: UnsafePointer<UInt8>, count: Int) {
            // Word stores may run past `count`; they stay within the reservation because the output lags the input.
            if count <= 8 && end - source >= 8 {
                let word = UnsafeRawPointer(source).loadUnaligned(as: UInt64.self)
                UnsafeMutableRawPointer(o).storeBytes(of: word, as: UInt64.self)
            } else {
                o.update(from: source, count: count)
            }
            o += count
        }

        /// Copies the string at `p` (at its opening quote), re-escaping it minimally and validating its UTF-8.
        mutating func copyString() throws(Failure) {
            // Locals, so that the loop keeps them in registers rather than in `self`.
            var p = self.p + 1
            var o = self.o
            defer {
                self.p = p
                self.o = o
            }
            o.pointee = UInt8(ascii: "\"")
            o += 1
            while true {
                // Plain ASCII goes 8 bytes at a time: store the word, then find the first byte that is '"', '\\',
                // a control character or non-ASCII.
                while end - p >= 8 {
                    let word = UInt64(littleEndian: UnsafeRawPointer(p).loadUnaligned(as: UInt64.self))
                    UnsafeMutableRawPointer(o).storeBytes(of: word.littleEndian, as: UInt64.self)
                    let flagged = jsonStringStops(word)
                    if flagged == 0 {
                        p += 8
                        o += 8
                        continue
                    }
                    let plain = flagged.trailingZeroBitCount >> 3
                    p += plain
                    o += plain
                    break
                }
                guard p < end else { throw failure(.unterminatedString, at: p) }
                let c = p.pointee
                if c == UInt8(ascii: "\"") {
                    o.pointee = c
                    p += 1
                    o += 1
                    return
                } else if c == UInt8(ascii: "\\") {
                    try Self.copyEscape(&p, &o, end: end, base: base)
                } else if c < 0x20 {
                    throw failure(.controlCharacter, at: p)
                } else if c >= 0x80 {
                    try Self.copyUTF8(&p, &o, end: end, base: base)
                } else {
                    o.pointee = c
                    p += 1
                    o += 1
                }
            }
        }

        /// Copies one escape sequence at `p` (at its backslash) in its shortest form.
        @inline(__always) static func copyEscape(
            _ p: inout UnsafePointer<UInt8>, _ o: inout UnsafeMutablePointer<UInt8>,
            end: UnsafePointer<UInt8>, base: UnsafePointer<UInt8>
        ) throws(Failure) {
            guard end - p >= 2 else { throw Failure(.unterminatedString, at: end - base) }
            let e = p[1]
            switch e {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "b"), UInt8(ascii: "f"), UInt8(ascii: "n"),
                UInt8(ascii: "r"), UInt8(ascii: "t"):
                o[0] = UInt8(ascii: "\\")
                o[1] = e
                o += 2
                p += 2
            case UInt8(ascii: "/"):
                o.pointee = e
                o += 1
                p += 2
            case UInt8(ascii: "u"):
                try copyUnicodeEscape(&p, &o, end: end, base: base)
            default:
                throw Failure(.invalidEscape, at: p + 1 - base)
            }
        }

        /// Copies `\uXXXX` (or a surrogate pair of them) as raw UTF-8, except what must stay escaped.
        /// Every form written is no longer than the escape read (6 or 12 bytes in, at most 6 or 4 out).
        static func copyUnicodeEscape(
            _ p: inout UnsafePointer<UInt8>, _ o: inout UnsafeMutablePointer<UInt8>,
            end: UnsafePointer<UInt8>, base: UnsafePointer<UInt8>
        ) throws(Failure) {
            let unit = try hex4(p + 2, end: end, base: base)
            let escapeStart = p
            p += 6
            if unit < 0x80 {
                let byte = UInt8(truncatingIfNeeded: unit)
                if byte < 0x20 {
                    writeControl(byte, &o)
                } else if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") {
                    o[0] = UInt8(ascii: "\\")
                    o[1] = byte
                    o += 2
                } else {
                    o.pointee = byte
                    o += 1
                }
            } else if unit < 0x800 {
                o[0] = UInt8(truncatingIfNeeded: 0xC0 | unit >> 6)
                o[1] = UInt8(truncatingIfNeeded: 0x80 | unit & 0x3F)
                o += 2
            } else if unit & 0xF800 != 0xD800 {
                o[0] = UInt8(truncatingIfNeeded: 0xE0 | unit >> 12)
                o[1] = UInt8(truncatingIfNeeded: 0x80 | unit >> 6 & 0x3F)
                o[2] = UInt8(truncatingIfNeeded: 0x80 | unit & 0x3F)
                o += 3
            } else {
                // A surrogate: must be a high one followed at once by an escaped low one, else the output would not
                // be valid UTF-8.
                guard unit < 0xDC00, end - p >= 6, p[0] == UInt8(ascii: "\\"), p[1] == UInt8(ascii: "u") else {
                    throw Failure(.loneSurrogate, at: escapeStart - base)
                }
                let low = try hex4(p + 2, end: end, base: base)
                guard low & 0xFC00 == 0xDC00 else { throw Failure(.loneSurrogate, at: escapeStart - base) }
                p += 6
                let scalar = 0x10000 + ((unit - 0xD800) << 10 | (low - 0xDC00))
                o[0] = UInt8(truncatingIfNeeded: 0xF0 | scalar >> 18)
                o[1] = UInt8(truncatingIfNeeded: 0x80 | scalar >> 12 & 0x3F)
                o[2] = UInt8(truncatingIfNeeded: 0x80 | scalar >> 6 & 0x3F)
                o[3] = UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F)
                o += 4
            }
        }

        /// Writes a control character escaped: the short form when JSON has one, else `\u00xx` in lower case.
        @inline(__always) static func writeControl(_ byte: UInt8, _ o: inout UnsafeMutablePointer<UInt8>) {
            let short: UInt8
            switch byte {
            case 0x08: short = UInt8(ascii: "b")
            case 0x09: short = UInt8(ascii: "t")
            case 0x0A: short = UInt8(ascii: "n")
            case 0x0C: short = UInt8(ascii: "f")
            case 0x0D: short = UInt8(ascii: "r")
            default: short = 0
            }
            o[0] = UInt8(ascii: "\\")
            if short != 0 {
                o[1] = short
                o += 2
                return
            }
            let digits: StaticString = "0123456789abcdef"
            o[1] = UInt8(ascii: "u")
            o[2] = UInt8(ascii: "0")
            o[3] = UInt8(ascii: "0")
            o[4] = digits.utf8Start[Int(byte >> 4)]
            o[5] = digits.utf8Start[Int(byte & 0x0F)]
            o += 6
        }

        /// The value of the 4 hex digits at `q`.
        @inline(__always) static func hex4(
            _ q: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>, base: UnsafePointer<UInt8>
        ) throws(Failure) -> UInt32 {
            var value: UInt32 = 0
            for index in 0..<4 {
                guard q + index < end else { throw Failure(.invalidUnicodeEscape, at: end - base) }
                let c = q[index]
                var digit = c &- UInt8(ascii: "0")
                if digit >= 10 {
                    digit = (c | 0x20) &- UInt8(ascii: "a")
                    guard digit < 6 else { throw Failure(.invalidUnicodeEscape, at: q + index - base) }
                    digit += 10
                }
                value = value << 4 | UInt32(digit)
            }
            return value
        }

        /// Validates and copies the run of multi-byte UTF-8 sequences at `p` (RFC 3629: no overlongs, no encoded
        /// surrogates, nothing above U+10FFFF, no truncation).
        static func copyUTF8(
            _ p: inout UnsafePointer<UInt8>, _ o: inout UnsafeMutablePointer<UInt8>,
            end: UnsafePointer<UInt8>, base: UnsafePointer<UInt8>
        ) throws(Failure) {
            repeat {
                let lead = p.pointee
                let available = end - p
                if lead < 0xE0 {
                    guard lead >= 0xC2, available >= 2, p[1] & 0xC0 == 0x80 else {
                        throw Failure(.invalidUTF8, at: p - base)
                    }
                    o[0] = lead
                    o[1] = p[1]
                    p += 2
                    o += 2
                } else if lead < 0xF0 {
                    guard available >= 3 else { throw Failure(.invalidUTF8, at: p - base) }
                    let second = p[1]
                    let low: UInt8 = lead == 0xE0 ? 0xA0 : 0x80
                    let high: UInt8 = lead == 0xED ? 0x9F : 0xBF
                    guard second >= low, second <= high, p[2] & 0xC0 == 0x80 else {
                        throw Failure(.invalidUTF8, at: p - base)
                    }
                    o[0] = lead
                    o[1] = second
                    o[2] = p[2]
                    p += 3
                    o += 3
                } else {
                    guard lead <= 0xF4, available >= 4 else { throw Failure(.invalidUTF8, at: p - base) }
                    let second = p[1]
                    let low: UInt8 = lead == 0xF0 ? 0x90 : 0x80
                    let high: UInt8 = lead == 0xF4 ? 0x8F : 0xBF
                    guard second >= low, second <= high, p[2] & 0xC0 == 0x80, p[3] & 0xC0 == 0x80 else {
                        throw Failure(.invalidUTF8, at: p - base)
                    }
                    o[0] = lead
                    o[1] = second
                    o[2] = p[2]
                    o[3] = p[3]
                    p += 4
                    o += 4
                }
            } while p < end && p.pointee >= 0x80
        }
    }
}
