/// Parses the pieces of an HTTP/1.x message head: the status line, field lines (RFC 9112 §2–§5) and chunk-size lines
/// (§7.1). Lines end in CRLF or a bare LF; a CR anywhere else is an error (as llhttp in strict mode).
enum HeadParser {
    struct Head {
        var status: Int
        var fields: HeaderFields
        var warnings: [String]
    }

    /// What is wrong, and where (byte offset within the parsed bytes).
    struct Problem: Error {
        var message: String
        var offset: Int
    }

    /// Parses a complete response head: status line, field lines, the empty line.
    static func parseResponseHead(_ bytes: UnsafeBufferPointer<UInt8>) -> Result<Head, Problem> {
        guard let lineEnd = lineEnd(bytes, from: 0) else {
            return .failure(Problem(message: "status line has no line end", offset: bytes.count))
        }
        let status: Int
        switch parseStatusLine(bytes, end: lineEnd.contentEnd) {
        case .failure(let problem): return .failure(problem)
        case .success(let code): status = code
        }
        switch parseFieldLines(bytes, firstLine: lineEnd.next) {
        case .failure(let problem): return .failure(problem)
        case .success(let (fields, warnings)): return .success(Head(status: status, fields: fields, warnings: warnings))
        }
    }

    /// `HTTP/1.<digit> SP 3DIGIT [ SP reason-phrase ]`.
    static func parseStatusLine(_ b: UnsafeBufferPointer<UInt8>, end: Int) -> Result<Int, Problem> {
        guard end >= 12, b[0] == 0x48, b[1] == 0x54, b[2] == 0x54, b[3] == 0x50, b[4] == 0x2F, b[5] == 0x31,
            b[6] == 0x2E
        else {
            return .failure(Problem(message: "status line is not 'HTTP/1.x NNN'", offset: 0))
        }
        guard isDigit(b[7]) else { return .failure(Problem(message: "invalid HTTP minor version", offset: 7)) }
        guard b[8] == 0x20 else {
            return .failure(Problem(message: "expected one space after the HTTP version", offset: 8))
        }
        guard isDigit(b[9]), isDigit(b[10]), isDigit(b[11]) else {
            return .failure(Problem(message: "status code is not three digits", offset: 9))
        }
        let status = Int(b[9] - 0x30) * 100 + Int(b[10] - 0x30) * 10 + Int(b[11] - 0x30)
        // RFC 9110 §15: status codes run from 100. One rule with the HAR and ndjson framings (100-999), so that a
        // record `frame` writes reads back as itself (found by the http fuzz target's frame round trip).
        guard status >= 100 else {
            return .failure(
                Problem(
                    message: "status code \(String(decoding: [b[9], b[10], b[11]], as: UTF8.self)) is below 100",
                    offset: 9))
        }
        if end > 12 {
            guard b[12] == 0x20 else {
                return .failure(Problem(message: "status code is not three digits", offset: 12))
            }
            for i in 13..<end where isControl(b[i]) {
                return .failure(Problem(message: "control character in the reason phrase", offset: i))
            }
        }
        return .success(status)
    }

    /// Field lines from `firstLine` up to and including the empty line that ends the section.
    /// Obsolete line folding is accepted (replaced by one space, RFC 9112 §5.2) with a warning, except on the
    /// framing fields Content-Length and Transfer-Encoding.
    static func parseFieldLines(
        _ b: UnsafeBufferPointer<UInt8>, firstLine: Int
    ) -> Result<(HeaderFields, [String]), Problem> {
        var fields = HeaderFields()
        var warnings: [String] = []
        var start = firstLine
        while start < b.count {
            guard let line = lineEnd(b, from: start) else {
                return .failure(Problem(message: "field line has no line end", offset: b.count))
            }
            let end = line.contentEnd
            if end == start { return .success((fields, warnings)) }
            if let cr = firstCR(b, from: start, to: end) {
                return .failure(Problem(message: "CR not followed by LF", offset: cr))
            }
            if b[start] == 0x20 || b[start] == 0x09 {
                guard let last = fields.fields.last else {
                    return .failure(Problem(message: "continuation line before any field", offset: start))
                }
                if nameEquals(last.name, "Content-Length")
                    || nameEquals(last.name, "Transfer-Encoding")
                {
                    return .failure(Problem(message: "obsolete line folding in \(last.name)", offset: start))
                }
                switch fieldValue(b, from: start, to: end) {
                case .failure(let problem): return .failure(problem)
                case .success(let value):
                    fields.extendLastValue(with: " " + value)
                    warnings.append("obsolete line folding in \(last.name) replaced by a space")
                }
                start = line.next
                continue
            }
            var colon = start
            while colon < end && b[colon] != UInt8(ascii: ":") {
                guard isTokenChar(b[colon]) else {
                    return .failure(Problem(message: "invalid character in field name", offset: colon))
                }
                colon += 1
            }
            guard colon < end else { return .failure(Problem(message: "field line without ':'", offset: start)) }
            guard colon > start else { return .failure(Problem(message: "empty field name", offset: start)) }
            let name = String(decoding: UnsafeBufferPointer(rebasing: b[start..<colon]), as: UTF8.self)
            switch fieldValue(b, from: colon + 1, to: end) {
            case .failure(let problem): return .failure(problem)
            case .success(let value): fields.append(name: name, value: value)
            }
            start = line.next
        }
        return .failure(Problem(message: "field section has no empty line", offset: b.count))
    }

    /// `chunk-size [ chunk-ext ]` without its line end: 1–16 hex digits, then `;name[=token|quoted-string]`*, no
    /// white space (as llhttp, strict).
    static func parseChunkSizeLine(_ line: UnsafeBufferPointer<UInt8>) -> (size: Int?, problem: String?) {
        var end = line.count
        if end > 0 && line[end - 1] == 0x0D { end -= 1 }
        var i = 0
        var size: UInt64 = 0
        while i < end, let digit = line[i].hexDigitValue {
            guard i < 16 else { return (nil, "chunk size has more than 16 hex digits") }
            size = size << 4 | UInt64(digit)
            i += 1
        }
        guard i > 0 else { return (nil, "chunk-size line does not start with a hex digit") }
        guard size <= UInt64(Int.max) else { return (nil, "chunk size too large") }
        while i < end {
            guard line[i] == UInt8(ascii: ";") else { return (nil, "invalid character in chunk size") }
            i += 1
            let nameStart = i
            while i < end && isTokenChar(line[i]) { i += 1 }
            guard i > nameStart else { return (nil, "empty chunk extension name") }
            guard i < end, line[i] == UInt8(ascii: "=") else { continue }
            i += 1
            if i < end && line[i] == UInt8(ascii: "\"") {
                i += 1
                var closed = false
                while i < end {
                    let c = line[i]
                    if c == UInt8(ascii: "\"") {
                        closed = true
                        i += 1
                        break
                    }
                    if c == UInt8(ascii: "\\") {
                        i += 2
                        continue
                    }
                    guard c == 0x09 || c >= 0x20 && c != 0x7F else {
                        return (nil, "control character in chunk extension")
                    }
                    i += 1
                }
                guard closed, i <= end else { return (nil, "unterminated quoted string in chunk extension") }
            } else {
                let valueStart = i
                while i < end && isTokenChar(line[i]) { i += 1 }
                guard i > valueStart else { return (nil, "empty chunk extension value") }
            }
        }
        if let cr = firstCR(line, from: 0, to: end) { return (nil, "CR not followed by LF at byte \(cr)") }
        return (Int(size), nil)
    }

    // MARK: - Pieces

    private static func fieldValue(_ b: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Result<String, Problem> {
        var start = from
        var end = to
        while start < end && (b[start] == 0x20 || b[start] == 0x09) { start += 1 }
        while end > start && (b[end - 1] == 0x20 || b[end - 1] == 0x09) { end -= 1 }
        for i in start..<end where isControl(b[i]) {
            return .failure(Problem(message: "control character in field value", offset: i))
        }
        return .success(String(decoding: UnsafeBufferPointer(rebasing: b[start..<end]), as: UTF8.self))
    }

    /// The end of the line starting at `from`: where its content ends (before CRLF or LF) and where the next begins.
    private static func lineEnd(_ b: UnsafeBufferPointer<UInt8>, from: Int) -> (contentEnd: Int, next: Int)? {
        var i = from
        while i < b.count {
            if b[i] == 0x0A { return (i > from && b[i - 1] == 0x0D ? i - 1 : i, i + 1) }
            i += 1
        }
        return nil
    }

    private static func firstCR(_ b: UnsafeBufferPointer<UInt8>, from: Int, to: Int) -> Int? {
        var i = from
        while i < to {
            if b[i] == 0x0D { return i }
            i += 1
        }
        return nil
    }

    @inline(__always) static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }

    /// Control characters other than horizontal tab (not allowed in field values and reason phrases).
    @inline(__always) static func isControl(_ c: UInt8) -> Bool { (c < 0x20 && c != 0x09) || c == 0x7F }

    /// `tchar` of RFC 9110 §5.6.2.
    static func isTokenChar(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "A")...UInt8(ascii: "Z"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }
}
