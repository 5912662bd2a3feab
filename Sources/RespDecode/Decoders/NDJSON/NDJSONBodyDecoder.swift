import Glibc

/// The ndjson decoder: a body of JSON texts one per line (NDJSON, JSON Lines), or each after an ASCII record
/// separator (`application/json-seq`, RFC 7464), written as one array of their values, each through
/// ``JSONTranscoder`` with its null stripping and depth limit (docs/output.md#ndjson, docs/decoding.md#ndjson).
///
/// Not the ndjson *framing* (`--input ndjson`, records of respdecode's own), which reads input records: this reads a
/// response body.
public struct NDJSONBodyDecoder: BodyDecoder {
    public let name = "ndjson"

    public let defaultAcceptableTypes: [MediaTypePattern] = [
        "application/x-ndjson", "application/ndjson", "application/jsonl", "application/x-jsonlines",
        "application/json-seq",
    ]
    .compactMap(MediaTypePattern.init)

    public init() {}

    public func decode(
        _ body: UnsafeBufferPointer<UInt8>, context: inout DecodingContext, into output: OutputBuffer
    ) throws(RecordError) -> Bool {
        // An empty body, or exactly one space, means "no content" (docs/decoding.md#empty-bodies).
        if Self.isNoContent(body) { return false }
        let options = context.options
        let transcoder = JSONTranscoder(
            options: .init(stripNulls: options.stripNulls, maxDepth: options.limits.maxDepth))
        let mark = output.mark
        do {
            if context.mimeType == "application/json-seq" {
                context.warnings += try Self.sequence(
                    body, transcoder: transcoder, limits: options.limits, into: output)
            } else {
                try Self.lines(body, transcoder: transcoder, maxValues: options.limits.maxNDJSONValues, into: output)
            }
        } catch {
            output.rollback(to: mark)
            throw error
        }
        return true
    }

    /// NDJSON and JSON Lines: a JSON text on each line (LF; a CR before it is whitespace), blank lines skipped.
    static func lines(
        _ body: UnsafeBufferPointer<UInt8>, transcoder: JSONTranscoder, maxValues: Int, into output: OutputBuffer
    ) throws(RecordError) {
        guard let base = body.baseAddress else { return }
        let n = body.count
        output.append(UInt8(ascii: "["))
        var values = 0
        var line = 1
        var start = 0
        while start <= n {
            let end =
                start == n
                ? n
                : memchr(base + start, 0x0A, n - start).map {
                    UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - base
                } ?? n
            defer {
                start = end + 1
                line += 1
            }
            let text = UnsafeBufferPointer(start: base + start, count: end - start)
            if isBlank(text) { continue }
            values += 1
            if values > maxValues {
                throw RecordError(
                    .limitExceeded, "line \(line): more than \(maxValues) values (maxNDJSONValues)",
                    location: RecordError.Location(offset: start, line: line, column: 1))
            }
            if values > 1 { output.append(UInt8(ascii: ",")) }
            try transcode(text, at: start, line: line, transcoder: transcoder, into: output)
        }
        output.append(UInt8(ascii: "]"))
    }

    /// One JSON text of a line: its errors located in the body and named by line (`invalidNDJSON`).
    private static func transcode(
        _ text: UnsafeBufferPointer<UInt8>, at start: Int, line: Int, transcoder: JSONTranscoder,
        into output: OutputBuffer
    ) throws(RecordError) {
        // NDJSON is UTF-8: a line the transcoder would read as UTF-16 or UTF-32 (told by zero bytes, or their BOMs)
        // is an error here.
        if JSONInputEncoding.detect(text).encoding != .utf8 {
            let index = text.prefix(4).firstIndex { $0 == 0 || $0 >= 0xFE } ?? 0
            throw RecordError(
                .invalidNDJSON,
                "line \(line): invalid UTF-8, found byte 0x\(String(text[index], radix: 16, uppercase: true))",
                location: RecordError.Location(offset: start + index, line: line, column: index + 1))
        }
        do {
            try transcoder.transcode(text, into: output)
        } catch {
            let column = error.location.map { Int($0.offset) + 1 } ?? 1
            throw RecordError(
                error.code == .invalidJSON ? .invalidNDJSON : error.code, "line \(line): \(error.message)",
                location: RecordError.Location(offset: start + column - 1, line: line, column: column))
        }
    }

    /// RFC 7464: each text after one or more RS (0x1E). A text that does not parse is skipped with a warning, as
    /// §2.4 allows, and so is a top-level number or `true`/`false`/`null` without whitespace after it, which may
    /// have been cut (§2.3 says to drop it).
    static func sequence(
        _ body: UnsafeBufferPointer<UInt8>, transcoder: JSONTranscoder, limits: Limits, into output: OutputBuffer
    ) throws(RecordError) -> [String] {
        guard let base = body.baseAddress else { return [] }
        let n = body.count
        var warnings: [String] = []
        var skipped = 0
        var values = 0
        var texts = 0
        var start = 0
        output.append(UInt8(ascii: "["))
        while start <= n {
            let end =
                start == n
                ? n
                : memchr(base + start, 0x1E, n - start).map {
                    UnsafePointer($0.assumingMemoryBound(to: UInt8.self)) - base
                } ?? n
            defer { start = end + 1 }
            let text = UnsafeBufferPointer(start: base + start, count: end - start)
            guard let first = text.firstIndex(where: { !isWhitespace($0) }) else { continue }
            // Skipped texts count too: each costs a parse, so the limit bounds the work as well as the value.
            texts += 1
            if texts > limits.maxNDJSONValues {
                throw RecordError(
                    .limitExceeded, "more than \(limits.maxNDJSONValues) JSON texts (maxNDJSONValues)",
                    location: RecordError.Location(offset: start))
            }
            var problem: String?
            if JSONInputEncoding.detect(text).encoding != .utf8 {
                problem = "not UTF-8"
            } else if isUnDelimited(text[first]) && !isWhitespace(text[text.count - 1]) {
                problem = "a top-level number or literal without whitespace after it may be truncated (RFC 7464 §2.3)"
            }
            if problem == nil {
                values += 1
                let valueMark = output.mark
                if values > 1 { output.append(UInt8(ascii: ",")) }
                do {
                    try transcoder.transcode(text, into: output)
                } catch {
                    if error.code != .invalidJSON { throw error }
                    output.rollback(to: valueMark)
                    values -= 1
                    problem = error.message
                }
            }
            if let problem {
                skipped += 1
                if skipped <= limits.maxWarnings {
                    warnings.append("JSON text \(texts) (byte \(start)) skipped: \(problem)")
                }
            }
        }
        output.append(UInt8(ascii: "]"))
        if skipped > limits.maxWarnings {
            warnings.append("\(skipped - limits.maxWarnings) more JSON texts skipped")
        }
        return warnings
    }

    @inline(__always)
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// Whether a top-level value starting with `byte` is not self-delimiting: a number, `true`, `false`, `null`.
    static func isUnDelimited(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "-") || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
            || byte == UInt8(ascii: "t") || byte == UInt8(ascii: "f") || byte == UInt8(ascii: "n")
    }

    /// A line of nothing but spaces, tabs and a CR.
    @inline(__always)
    static func isBlank(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        for byte in text where !isWhitespace(byte) { return false }
        return true
    }
}
