import Glibc

/// The sse decoder: a `text/event-stream` body interpreted as the HTML standard's event-stream parser does
/// (https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation), every dispatched
/// event written in order (docs/output.md#sse, docs/decoding.md#sse):
///
/// `{"events":[{"event":"message","data":{"delta":"Hi"}},{"event":"message","text":"[DONE]"}],"retry":3000}`
///
/// An event's data that is one JSON text is its value under `data` (through ``JSONTranscoder``, with its null
/// stripping and depth limit); any other data is a string under `text`. Our own code: the interpretation is a page
/// of the standard, and no C library on Debian parses event streams. The parser accepts every body, so the decoder
/// has no parse error.
public struct SSEBodyDecoder: BodyDecoder {
    public let name = "sse"

    public let defaultAcceptableTypes: [MediaTypePattern] = ["text/event-stream"].compactMap(MediaTypePattern.init)

    public init() {}

    public func decode(
        _ body: UnsafeBufferPointer<UInt8>, context: inout DecodingContext, into output: OutputBuffer
    ) throws(RecordError) -> Bool {
        // An empty body, or exactly one space, means "no content" (docs/decoding.md#empty-bodies).
        if Self.isNoContent(body) { return false }
        var parser = SSEParser(body: body, options: context.options, output: output)
        try parser.run()
        context.warnings += parser.warnings
        return true
    }
}

/// One pass over an event stream, writing each event as it is dispatched.
struct SSEParser {
    let body: UnsafeBufferPointer<UInt8>
    let output: OutputBuffer
    let transcoder: JSONTranscoder
    let maxEvents: Int
    let maxValueBytes: Int
    /// Where the value may end (`maxValueBytes` from its start).
    let limit: Int
    let mark: Int

    /// The data buffer: the first data line's value in the body, or (from the second line on) the lines joined.
    var dataLines = 0
    var dataStart = 0
    var dataCount = 0
    var joined: [UInt8] = []
    /// The event type buffer, in the body (empty: none).
    var eventStart = 0
    var eventCount = 0
    /// The last event ID buffer, in the body; it persists across events.
    var idStart = 0
    var idCount = 0
    /// The last event ID's replacements were counted: it is written with every event while it lasts, but decoded once.
    var idCounted = false
    /// The reconnection time's digits, in the body, when a valid `retry` was seen.
    var retry: (start: Int, count: Int)?
    /// Comment lines (what follows the colon), in the body.
    var comments: [(start: Int, count: Int)] = []
    var events = 0
    var replacements = 0
    var deepData = 0
    var warnings: [String] = []

    init(body: UnsafeBufferPointer<UInt8>, options: DecoderOptions, output: OutputBuffer) {
        self.body = body
        self.output = output
        self.transcoder = JSONTranscoder(
            options: .init(stripNulls: options.stripNulls, maxDepth: options.limits.maxDepth))
        self.maxEvents = options.limits.maxEvents
        self.maxValueBytes = options.limits.maxValueBytes
        mark = output.mark
        let (end, overflow) = output.count.addingReportingOverflow(max(options.limits.maxValueBytes, 0))
        limit = overflow ? .max : end
    }

    mutating func run() throws(RecordError) {
        do {
            try parse()
        } catch {
            output.rollback(to: mark)
            throw error
        }
    }

    private mutating func parse() throws(RecordError) {
        let n = body.count
        guard let base = body.baseAddress else { return }
        output.append(ascii: "{\"events\":[")
        // One UTF-8 BOM at the start of the stream is dropped; a later one is data.
        var i = n >= 3 && base[0] == 0xEF && base[1] == 0xBB && base[2] == 0xBF ? 3 : 0
        while i < n {
            // A line ends at CR LF, LF or CR.
            var end = i
            while end < n && base[end] != 0x0A && base[end] != 0x0D { end += 1 }
            if end == n {
                // The stream ends without a line end: the standard discards what is pending.
                if dataLines > 0 || base[i] != UInt8(ascii: ":") { warnIncomplete() }
                return try finish()
            }
            try processLine(start: i, end: end)
            i = base[end] == 0x0D && end + 1 < n && base[end + 1] == 0x0A ? end + 2 : end + 1
        }
        if dataLines > 0 { warnIncomplete() }
        try finish()
    }

    private mutating func warnIncomplete() {
        warnings.append(
            "the stream ends before the blank line that ends its last event: that event is discarded, as the "
                + "HTML standard says")
    }

    private mutating func processLine(start: Int, end: Int) throws(RecordError) {
        let base = body.baseAddress!
        if start == end { return try dispatch() }
        if base[start] == UInt8(ascii: ":") {
            try count(at: start)
            comments.append((start + 1, end - start - 1))
            return
        }
        var colon = start
        while colon < end && base[colon] != UInt8(ascii: ":") { colon += 1 }
        var valueStart = min(colon + 1, end)
        if valueStart < end && base[valueStart] == 0x20 { valueStart += 1 }
        let valueCount = end - valueStart
        switch colon - start {
        case 4 where Self.matches(base + start, "data"):
            dataLines += 1
            if dataLines == 1 {
                dataStart = valueStart
                dataCount = valueCount
            } else {
                if dataLines == 2 {
                    joined.removeAll(keepingCapacity: true)
                    joined.append(contentsOf: UnsafeBufferPointer(start: base + dataStart, count: dataCount))
                }
                joined.append(0x0A)
                joined.append(contentsOf: UnsafeBufferPointer(start: base + valueStart, count: valueCount))
            }
        case 5 where Self.matches(base + start, "event"):
            eventStart = valueStart
            eventCount = valueCount
        case 2 where Self.matches(base + start, "id"):
            // An id holding U+0000 is ignored.
            if !UnsafeBufferPointer(start: base + valueStart, count: valueCount).contains(0) {
                idStart = valueStart
                idCount = valueCount
                idCounted = false
            }
        case 5 where Self.matches(base + start, "retry"):
            // Only ASCII digits set the reconnection time.
            let digits = UnsafeBufferPointer(start: base + valueStart, count: valueCount)
            if valueCount > 0 && digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
                retry = (valueStart, valueCount)
            }
        default:
            break // an unknown field is ignored
        }
    }

    @inline(__always)
    private static func matches(_ pointer: UnsafePointer<UInt8>, _ name: StaticString) -> Bool {
        memcmp(pointer, name.utf8Start, name.utf8CodeUnitCount) == 0
    }

    /// Counts one more event or comment against `maxEvents`.
    private mutating func count(at offset: Int) throws(RecordError) {
        events += 1
        if events > maxEvents {
            throw RecordError(
                .limitExceeded, "more than \(maxEvents) events and comments (maxEvents)",
                location: RecordError.Location(offset: offset))
        }
    }

    /// A blank line: the event in the buffers is written, unless it has no data.
    private mutating func dispatch() throws(RecordError) {
        defer {
            dataLines = 0
            eventCount = 0
        }
        guard dataLines > 0 else { return }
        try count(at: dataStart)
        if events - comments.count > 1 { output.append(UInt8(ascii: ",")) }
        output.append(ascii: "{\"event\":")
        if eventCount == 0 {
            output.append(ascii: "\"message\"")
        } else {
            replacements += try appendString(start: eventStart, count: eventCount)
        }
        if dataLines == 1 {
            try appendData(UnsafeBufferPointer(start: body.baseAddress! + dataStart, count: dataCount))
        } else {
            let joined = joined
            try joined.withUnsafeBufferPointer { data throws(RecordError) in try appendData(data) }
        }
        if idCount > 0 {
            output.append(ascii: ",\"id\":")
            let replaced = try appendString(start: idStart, count: idCount)
            if !idCounted {
                replacements += replaced
                idCounted = true
            }
        }
        output.append(UInt8(ascii: "}"))
        if output.count > limit { throw tooLarge }
    }

    /// `,"data":VALUE` when the data is one JSON text, else `,"text":"…"`. The data is the string the standard reads,
    /// the bytes decoded as UTF-8 with replacement (docs/decoding.md#sse): valid data is tried in place, as it is;
    /// data with invalid sequences fails that try and is tried again through a decoded copy.
    private mutating func appendData(_ data: UnsafeBufferPointer<UInt8>) throws(RecordError) {
        if Self.mayBeJSON(data) {
            var failure = tryJSON(data)
            if failure != nil, TextDecoding.validUTF8Prefix(data, limit: .max) == nil {
                // The copy is bounded by the room left: larger, its text would not fit either (the event is too
                // large); only a JSON value that dropped whitespace and nulls would shrink below the room is lost
                // that way, which is not worth an unbounded copy (docs/decoding.md#sse).
                let room = max(limit - output.count, 0)
                var decoded = UTF8Output(capacity: min(data.count, room) + 16)
                let outcome = TextDecoding.repairUTF8(data, into: &decoded, limit: room)
                if !outcome.truncated {
                    failure = tryJSON(UnsafeBufferPointer(start: decoded.base, count: decoded.count))
                    if failure == nil { replacements += outcome.replacements }
                }
            }
            guard let failure else { return }
            if failure.code == .limitExceeded { deepData += 1 }
        }
        // Text: the same decoding, written as a string (its replacements counted here).
        output.append(ascii: ",\"text\":")
        output.append(UInt8(ascii: "\""))
        guard let replaced = output.appendLossyJSONStringContent(utf8: data, stoppingPast: limit) else {
            throw tooLarge
        }
        replacements += replaced
        output.append(UInt8(ascii: "\""))
    }

    /// Writes `,"data":VALUE` when `text` is one UTF-8 JSON text (nil); else writes nothing and returns the error.
    private func tryJSON(_ text: UnsafeBufferPointer<UInt8>) -> RecordError? {
        // The transcoder would also read UTF-16 and UTF-32 (told by zero bytes, which UTF-8 JSON never has) and drop
        // a BOM, which is data here: only UTF-8 without a BOM is tried.
        let (encoding, bomLength) = JSONInputEncoding.detect(text)
        guard encoding == .utf8 && bomLength == 0 else {
            return RecordError(.invalidJSON, "not UTF-8 without a byte order mark")
        }
        let dataMark = output.mark
        output.append(ascii: ",\"data\":")
        do {
            try transcoder.transcode(text, into: output)
            return nil
        } catch {
            output.rollback(to: dataMark)
            return error
        }
    }

    /// Whether the first byte after JSON whitespace can start a JSON value. What cannot is text whatever its
    /// decoding (a byte that is not UTF-8 there is U+FFFD), so binary data is not decoded twice.
    private static func mayBeJSON(_ data: UnsafeBufferPointer<UInt8>) -> Bool {
        for byte in data {
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D: continue
            case UInt8(ascii: "{"), UInt8(ascii: "["), UInt8(ascii: "\""), UInt8(ascii: "-"), UInt8(ascii: "t"),
                UInt8(ascii: "f"), UInt8(ascii: "n"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            default: return false
            }
        }
        return false
    }

    /// Writes the body's bytes at `start` as a JSON string, decoded with replacement; returns the replacements.
    private func appendString(start: Int, count: Int) throws(RecordError) -> Int {
        output.append(UInt8(ascii: "\""))
        guard
            let replaced = output.appendLossyJSONStringContent(
                utf8: UnsafeBufferPointer(start: body.baseAddress! + start, count: count), stoppingPast: limit)
        else { throw tooLarge }
        output.append(UInt8(ascii: "\""))
        return replaced
    }

    private var tooLarge: RecordError {
        RecordError(.limitExceeded, "the event stream's value is larger than \(maxValueBytes) bytes (maxValueBytes)")
    }

    /// Closes the events and writes `retry` and `comments`.
    private mutating func finish() throws(RecordError) {
        output.append(UInt8(ascii: "]"))
        if let retry {
            output.append(ascii: ",\"retry\":")
            let base = body.baseAddress!
            var first = retry.start
            let end = retry.start + retry.count
            while first < end - 1 && base[first] == UInt8(ascii: "0") { first += 1 }
            output.append(UnsafeBufferPointer(start: base + first, count: end - first))
        }
        if !comments.isEmpty {
            output.append(ascii: ",\"comments\":[")
            for (index, comment) in comments.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                replacements += try appendString(start: comment.start, count: comment.count)
            }
            output.append(UInt8(ascii: "]"))
        }
        output.append(UInt8(ascii: "}"))
        if output.count > limit { throw tooLarge }
        if deepData > 0 {
            warnings.append(
                "\(deepData) events' data nested deeper than \(transcoder.options.maxDepth) levels (maxDepth): "
                    + "kept as text")
        }
        if let warning = utf8ReplacementWarning(replacements) { warnings.append(warning) }
    }
}
