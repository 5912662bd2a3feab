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
            try appendString(start: eventStart, count: eventCount)
        }
        if dataLines == 1 {
            try appendData(UnsafeBufferPointer(start: body.baseAddress! + dataStart, count: dataCount))
        } else {
            let joined = joined
            try joined.withUnsafeBufferPointer { data throws(RecordError) in try appendData(data) }
        }
        if idCount > 0 {
            output.append(ascii: ",\"id\":")
            try appendString(start: idStart, count: idCount)
        }
        output.append(UInt8(ascii: "}"))
        if output.count > limit { throw tooLarge }
    }

    /// `,"data":VALUE` when the data is one JSON text, else `,"text":"…"`.
    private mutating func appendData(_ data: UnsafeBufferPointer<UInt8>) throws(RecordError) {
        let dataMark = output.mark
        // Only UTF-8 JSON counts: the transcoder would also read UTF-16 and UTF-32 (told by zero bytes, which UTF-8
        // JSON never has) and drop a BOM, which is data here.
        if !data.isEmpty, Self.isUTF8WithoutBOM(data) {
            output.append(ascii: ",\"data\":")
            do {
                try transcoder.transcode(data, into: output)
                return
            } catch {
                output.rollback(to: dataMark)
                if error.code == .limitExceeded { deepData += 1 }
            }
        }
        output.append(ascii: ",\"text\":")
        output.append(UInt8(ascii: "\""))
        guard let replaced = output.appendLossyJSONStringContent(utf8: data, stoppingPast: limit) else {
            throw tooLarge
        }
        replacements += replaced
        output.append(UInt8(ascii: "\""))
    }

    private static func isUTF8WithoutBOM(_ data: UnsafeBufferPointer<UInt8>) -> Bool {
        let (encoding, bomLength) = JSONInputEncoding.detect(data)
        return encoding == .utf8 && bomLength == 0
    }

    private mutating func appendString(start: Int, count: Int) throws(RecordError) {
        output.append(UInt8(ascii: "\""))
        guard
            let replaced = output.appendLossyJSONStringContent(
                utf8: UnsafeBufferPointer(start: body.baseAddress! + start, count: count), stoppingPast: limit)
        else { throw tooLarge }
        replacements += replaced
        output.append(UInt8(ascii: "\""))
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
                try appendString(start: comment.start, count: comment.count)
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
