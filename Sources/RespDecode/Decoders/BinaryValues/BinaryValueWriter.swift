/// Writes the values of a binary format (MessagePack, CBOR) as one JSON value, event by event as the format's parser
/// reports them: no tree is built, so memory is the output and one small frame per open container
/// (docs/output.md#msgpack, docs/output.md#cbor).
///
/// What the two formats share and JSON lacks is mapped here, once:
/// - map keys other than text strings are written as the JSON text of the key, as a string (`1` → `"1"`,
///   `[1,2]` → `"[1,2]"`, bytes → `"{\"base64\":\"AQ==\"}"`); keys that end up equal are all kept, in order, as
///   duplicate keys are;
/// - byte strings as `{"base64":"…"}` (or, under CBOR's expected-encoding tags 21–23, as a base64url, base64 or hex
///   string);
/// - floats as the shortest text that reads back the same, infinities and NaN as strings (``PlistText``);
/// - instants as ISO 8601 UTC strings with the fraction of a second to the nanosecond, without trailing zeros.
///
/// Every error leaves the work to the caller's rollback: the writer throws, and the decoder rolls the output back to
/// the mark it was made with.
struct BinaryValueWriter {
    /// How a byte string is written (CBOR tags 21, 22, 23: RFC 8949 §3.4.5.2).
    enum ByteEncoding: UInt8 {
        case object, base64url, base64, base16
    }

    enum Kind: UInt8 {
        case array, map, tag, indefiniteText, indefiniteBytes
    }

    /// An open container, tag or indefinite-length string.
    struct Frame {
        var kind: Kind
        /// How byte strings inside are written.
        var encoding: ByteEncoding
        /// Items expected (a map's keys and values both count); `UInt64.max` for indefinite length.
        var total: UInt64
        var seen: UInt64 = 0
        /// Where the current key's JSON text starts, when the key is not a text string (it becomes a string when
        /// complete); -1 otherwise.
        var keyMark = -1
        /// The container's byte offset in the body, for error locations.
        var offset: Int
    }

    let output: OutputBuffer
    /// Where the value starts in `output`.
    let mark: Int
    let maxDepth: Int
    let maxValueBytes: Int
    /// The error code of malformed input (`invalidMessagePack`, `invalidCBOR`) and the format's name in messages.
    let code: RecordError.Code
    let format: String

    private(set) var frames: [Frame] = []
    /// Whether the value is complete.
    private(set) var done = false
    /// The expected encoding a CBOR tag 21–23 set for the next value (and, when it is a container, what it holds).
    var pendingEncoding: ByteEncoding?
    /// Whether the innermost open item is an indefinite-length string (whose chunks come next).
    private(set) var inChunks = false
    /// The bytes of the indefinite-length byte string being read (its chunks, joined).
    private var chunks: [UInt8] = []
    /// Whether a text string that is not UTF-8 is written as its bytes (MessagePack's str, which may hold invalid
    /// byte sequences: docs/output.md#msgpack) rather than refused (CBOR, where it is invalid: RFC 8949 §3.1).
    var invalidTextAsBytes = false
    /// How many text strings were written as bytes, and the byte offset of the first (``invalidTextAsBytes``).
    private(set) var bytesForText = 0
    private(set) var firstBytesForText: Int?

    init(output: OutputBuffer, maxDepth: Int, maxValueBytes: Int, code: RecordError.Code, format: String) {
        self.output = output
        self.mark = output.mark
        self.maxDepth = maxDepth
        self.maxValueBytes = maxValueBytes
        self.code = code
        self.format = format
        frames.reserveCapacity(min(max(maxDepth, 1), 64))
    }

    var depth: Int { frames.count }
    var top: Frame? { frames.last }

    // MARK: Errors and budget

    func invalid(_ message: String, at offset: Int?) -> RecordError {
        RecordError(code, "\(format): \(message)", location: offset.map { .init(offset: $0) })
    }

    func tooLarge(at offset: Int?) -> RecordError {
        RecordError(
            .limitExceeded, "\(format): JSON text exceeds the limit of \(maxValueBytes) bytes (--max-value-bytes)",
            location: offset.map { .init(offset: $0) })
    }

    /// Bytes of JSON written for this value so far.
    @inline(__always) var written: Int { output.count &- mark }

    /// Throws unless `additional` more bytes still fit the value budget.
    @inline(__always) func checkRoom(_ additional: Int, at offset: Int?) throws(RecordError) {
        if additional > maxValueBytes &- written { throw tooLarge(at: offset) }
    }

    // MARK: Structure

    /// Starts a value: writes the separator its place needs and, for a map key that is not a text string, marks
    /// where its text starts. Returns the encoding for byte strings in it.
    @inline(__always)
    mutating func beginValue(isString: Bool) -> ByteEncoding {
        let encoding = pendingEncoding ?? frames.last?.encoding ?? .object
        pendingEncoding = nil
        guard !frames.isEmpty else { return encoding }
        let i = frames.count &- 1
        switch frames[i].kind {
        case .array:
            if frames[i].seen != 0 { output.append(UInt8(ascii: ",")) }
        case .map:
            if frames[i].seen & 1 == 0 {
                if frames[i].seen != 0 { output.append(UInt8(ascii: ",")) }
                if !isString { frames[i].keyMark = output.count }
            }
        case .tag, .indefiniteText, .indefiniteBytes:
            break
        }
        return encoding
    }

    /// Ends a value: after a map key, its `:`; a container whose last item this was is closed, and so on up.
    @inline(__always)
    mutating func endValue(at offset: Int?) throws(RecordError) {
        if written > maxValueBytes { throw tooLarge(at: offset) }
        while !frames.isEmpty {
            let i = frames.count &- 1
            frames[i].seen &+= 1
            if case .map = frames[i].kind, frames[i].seen & 1 == 1 {
                if frames[i].keyMark >= 0 {
                    try quoteKey(from: frames[i].keyMark, at: offset)
                    frames[i].keyMark = -1
                }
                output.append(UInt8(ascii: ":"))
                return
            }
            guard frames[i].seen == frames[i].total else { return }
            let closed = frames.removeLast()
            switch closed.kind {
            case .array: output.append(UInt8(ascii: "]"))
            case .map: output.append(UInt8(ascii: "}"))
            case .tag: output.append(UInt8(ascii: "}"))
            case .indefiniteText, .indefiniteBytes: break
            }
        }
        done = true
    }

    /// Rewrites the JSON text from `start` to the end as a JSON string: a map key that is not a text string.
    private mutating func quoteKey(from start: Int, at offset: Int?) throws(RecordError) {
        let length = output.count &- start
        // JSON text has no raw control characters: only `"` and `\` grow, to two bytes.
        try checkRoom(length &+ 2, at: offset)
        let text = [UInt8](UnsafeBufferPointer(start: output.base + start, count: length))
        output.rollback(to: start)
        text.withUnsafeBufferPointer { _ = output.appendJSONString(utf8: $0, validate: false) }
    }

    private mutating func push(_ kind: Kind, total: UInt64, encoding: ByteEncoding, at offset: Int?)
        throws(RecordError)
    {
        guard frames.count < maxDepth else {
            throw RecordError(
                .limitExceeded, "\(format): nesting deeper than \(maxDepth) (--max-depth)",
                location: offset.map { .init(offset: $0) })
        }
        frames.append(Frame(kind: kind, encoding: encoding, total: total, offset: offset ?? -1))
    }

    /// Opens an array (`isMap` false) or map of `count` items (pairs for a map), or of indefinite length (nil).
    mutating func open(isMap: Bool, count: UInt64?, at offset: Int?) throws(RecordError) {
        let encoding = beginValue(isString: false)
        if count == 0 {
            output.append(ascii: isMap ? "{}" : "[]")
            try endValue(at: offset)
            return
        }
        var total = UInt64.max
        if let count {
            let (doubled, overflow) = count.multipliedReportingOverflow(by: 2)
            guard !isMap || !overflow, count != .max else {
                throw invalid("a map of \(count) pairs cannot fit the body", at: offset)
            }
            total = isMap ? doubled : count
        }
        try push(isMap ? .map : .array, total: total, encoding: encoding, at: offset)
        output.append(isMap ? UInt8(ascii: "{") : UInt8(ascii: "["))
    }

    /// Opens a tag that keeps its number: `{"tag":n,"value":…}`.
    mutating func openTag(_ tag: UInt64, at offset: Int) throws(RecordError) {
        let encoding = beginValue(isString: false)
        try push(.tag, total: 1, encoding: encoding, at: offset)
        output.append(ascii: "{\"tag\":")
        output.appendDecimal(tag)
        output.append(ascii: ",\"value\":")
    }

    /// Opens an indefinite-length text or byte string, whose definite-length chunks follow.
    mutating func openChunks(text: Bool, at offset: Int) throws(RecordError) {
        let encoding = beginValue(isString: text)
        try push(text ? .indefiniteText : .indefiniteBytes, total: .max, encoding: encoding, at: offset)
        inChunks = true
        if text { output.append(UInt8(ascii: "\"")) } else { chunks.removeAll(keepingCapacity: true) }
    }

    /// Adds a chunk to the open indefinite-length string.
    mutating func appendChunk(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int) throws(RecordError) {
        if case .indefiniteText = frames.last?.kind {
            switch output.appendJSONStringContent(utf8: bytes, validate: true, stoppingPast: mark &+ maxValueBytes) {
            case .written: break
            case .invalidUTF8: throw invalid("text string chunk is not valid UTF-8", at: offset)
            case .pastLimit: throw tooLarge(at: offset)
            }
        } else {
            try checkRoom((chunks.count &+ bytes.count) / 3 &* 4 &+ 20, at: offset)
            chunks.append(contentsOf: bytes)
        }
    }

    /// Closes the open indefinite-length item (CBOR's break).
    mutating func closeIndefinite(at offset: Int) throws(RecordError) {
        guard let frame = frames.last, frame.total == .max else {
            throw invalid("break (0xFF) outside an indefinite-length item", at: offset)
        }
        switch frame.kind {
        case .array:
            output.append(UInt8(ascii: "]"))
        case .map:
            guard frame.seen & 1 == 0 else { throw invalid("map ends after a key, without its value", at: offset) }
            output.append(UInt8(ascii: "}"))
        case .indefiniteText:
            output.append(UInt8(ascii: "\""))
        case .indefiniteBytes:
            let joined = chunks
            chunks.removeAll(keepingCapacity: false)
            joined.withUnsafeBufferPointer { writeBytesText($0, encoding: frame.encoding) }
        case .tag:
            throw invalid("break (0xFF) where a tag's content belongs", at: offset)
        }
        frames.removeLast()
        inChunks = false
        try endValue(at: offset)
    }

    // MARK: Scalars

    mutating func writeNull(at offset: Int?) throws(RecordError) {
        _ = beginValue(isString: false)
        output.append(ascii: "null")
        try endValue(at: offset)
    }

    mutating func writeBool(_ value: Bool, at offset: Int?) throws(RecordError) {
        _ = beginValue(isString: false)
        output.append(ascii: value ? "true" : "false")
        try endValue(at: offset)
    }

    mutating func writeUnsigned(_ value: UInt64, at offset: Int?) throws(RecordError) {
        _ = beginValue(isString: false)
        if value < 10 {
            output.append(UInt8(truncatingIfNeeded: value) &+ 0x30)
        } else {
            output.appendDecimal(value)
        }
        try endValue(at: offset)
    }

    mutating func writeSigned(_ value: Int64, at offset: Int?) throws(RecordError) {
        _ = beginValue(isString: false)
        output.append(decimal: value)
        try endValue(at: offset)
    }

    /// Writes −1 − `n` (CBOR's negative integers, down to −2^64).
    mutating func writeNegative(_ n: UInt64, at offset: Int?) throws(RecordError) {
        _ = beginValue(isString: false)
        output.appendDecimal(high: -1, low: ~n)
        try endValue(at: offset)
    }

    mutating func writeDouble(_ value: Double, at offset: Int?) throws(RecordError) {
        _ = beginValue(isString: false)
        output.appendPlistReal(value)
        try endValue(at: offset)
    }

    /// Writes a text string, which must be valid UTF-8 unless ``invalidTextAsBytes``.
    mutating func writeString(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int?) throws(RecordError) {
        _ = beginValue(isString: true)
        let start = output.count
        output.append(UInt8(ascii: "\""))
        switch output.appendJSONStringContent(utf8: bytes, validate: true, stoppingPast: mark &+ maxValueBytes) {
        case .written: break
        case .invalidUTF8:
            guard invalidTextAsBytes else { throw invalid("text string is not valid UTF-8", at: offset) }
            try writeTextAsBytes(bytes, from: start, at: offset)
            return
        case .pastLimit: throw tooLarge(at: offset)
        }
        output.append(UInt8(ascii: "\""))
        try endValue(at: offset)
    }

    /// Writes a text string that is not UTF-8 as `{"base64":"…"}` from `start`, where its opening quote was; as a map
    /// key, that object's JSON text becomes the key, as a byte string key's does.
    private mutating func writeTextAsBytes(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int, at offset: Int?)
        throws(RecordError)
    {
        output.rollback(to: start)
        if let i = frames.indices.last, case .map = frames[i].kind, frames[i].seen & 1 == 0 {
            frames[i].keyMark = start
        }
        try checkRoom(bytes.count / 3 &* 4 &+ 20, at: offset)
        writeBytesText(bytes, encoding: .object)
        bytesForText &+= 1
        if firstBytesForText == nil { firstBytesForText = offset }
        try endValue(at: offset)
    }

    /// Writes a byte string as its encoding says: `{"base64":"…"}` unless a CBOR tag 21–23 applies.
    mutating func writeBytes(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int?) throws(RecordError) {
        let encoding = beginValue(isString: false)
        try checkRoom(bytes.count / 3 &* 4 &+ bytes.count &+ 20, at: offset)
        writeBytesText(bytes, encoding: encoding)
        try endValue(at: offset)
    }

    private func writeBytesText(_ bytes: UnsafeBufferPointer<UInt8>, encoding: ByteEncoding) {
        switch encoding {
        case .object:
            output.append(ascii: "{\"base64\":\"")
            output.appendBase64(bytes)
            output.append(ascii: "\"}")
        case .base64:
            output.append(UInt8(ascii: "\""))
            output.appendBase64(bytes)
            output.append(UInt8(ascii: "\""))
        case .base64url:
            output.append(UInt8(ascii: "\""))
            let start = output.count
            output.appendBase64(bytes)
            // The URL- and filename-safe alphabet, without padding (RFC 4648 §5; RFC 8949 §3.4.5.2).
            var end = output.count
            while end > start && output.base[end &- 1] == UInt8(ascii: "=") { end &-= 1 }
            for i in start..<end {
                if output.base[i] == UInt8(ascii: "+") {
                    output.base[i] = UInt8(ascii: "-")
                } else if output.base[i] == UInt8(ascii: "/") {
                    output.base[i] = UInt8(ascii: "_")
                }
            }
            output.rollback(to: end)
            output.append(UInt8(ascii: "\""))
        case .base16:
            output.reserve(bytes.count &* 2 &+ 2)
            let out = output.end
            out[0] = UInt8(ascii: "\"")
            let digits: StaticString = "0123456789abcdef"
            for (k, byte) in bytes.enumerated() {
                out[1 &+ 2 &* k] = digits.utf8Start[Int(byte >> 4)]
                out[2 &+ 2 &* k] = digits.utf8Start[Int(byte & 0xF)]
            }
            out[1 &+ 2 &* bytes.count] = UInt8(ascii: "\"")
            output.commit(bytes.count &* 2 &+ 2)
        }
    }

    /// Writes pre-formatted JSON (a number or a string) for a value: `isString` when it is a JSON string.
    mutating func writeJSON(isString: Bool, at offset: Int?, _ body: (OutputBuffer) -> Void) throws(RecordError) {
        _ = beginValue(isString: isString)
        body(output)
        try endValue(at: offset)
    }

    /// Writes an instant, given as seconds and nanoseconds since 1970-01-01T00:00:00Z, as an ISO 8601 UTC string
    /// (`"2013-03-21T20:04:00Z"`, the fraction to the nanosecond without trailing zeros), in the proleptic Gregorian
    /// calendar. Returns `false`, writing nothing, outside the years 0…9999 (RFC 3339's four digits).
    mutating func writeInstant(seconds: Int64, nanoseconds: UInt32, at offset: Int?) throws(RecordError) -> Bool {
        // Days from 0001-01-01 to 1970-01-01, and from 0000-01-01 to 0001-01-01 (year 0 is a leap year).
        let unixEpochDays: Int64 = 719_162
        let yearZeroDays: Int64 = 366
        // 0001-01-01 to 10000-01-01.
        let endDays: Int64 = 3_652_059
        guard nanoseconds < 1_000_000_000, seconds >= -(unixEpochDays + yearZeroDays) * 86_400,
            seconds < (endDays - unixEpochDays) * 86_400
        else { return false }
        // Shifted by one 400-year cycle (146,097 days) so that the count from 0001-01-01 is never negative.
        let total = seconds + (unixEpochDays + 146_097) * 86_400
        var (year, month, day) = PlistCalendar.civilDate(daysSinceYear1: Int(total / 86_400))
        year -= 400
        let rest = Int(total % 86_400)
        try writeJSON(isString: true, at: offset) { output in
            output.reserve(40)
            let out = output.end
            var n = 0
            func put(_ value: Int, width: Int) {
                var divisor = 1
                for _ in 1..<width { divisor *= 10 }
                for _ in 0..<width {
                    out[n] = UInt8(truncatingIfNeeded: value / divisor % 10) &+ 0x30
                    n += 1
                    divisor /= 10
                }
            }
            func put(_ byte: UInt8) {
                out[n] = byte
                n += 1
            }
            put(UInt8(ascii: "\""))
            put(year, width: 4)
            put(UInt8(ascii: "-"))
            put(month, width: 2)
            put(UInt8(ascii: "-"))
            put(day, width: 2)
            put(UInt8(ascii: "T"))
            put(rest / 3600, width: 2)
            put(UInt8(ascii: ":"))
            put(rest / 60 % 60, width: 2)
            put(UInt8(ascii: ":"))
            put(rest % 60, width: 2)
            if nanoseconds != 0 {
                put(UInt8(ascii: "."))
                var digits = Int(nanoseconds)
                var width = 9
                while digits % 10 == 0 {
                    digits /= 10
                    width -= 1
                }
                put(digits, width: width)
            }
            put(UInt8(ascii: "Z"))
            put(UInt8(ascii: "\""))
            output.commit(n)
        }
        return true
    }
}
