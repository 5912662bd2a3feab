internal import CShims

/// The msgpack decoder: MessagePack bodies through msgpack-c's unpacking state machine (`CShims/msgpack.c`), each value
/// written as JSON as it is read (``BinaryValueWriter``; the mapping is in docs/output.md#msgpack).
///
/// msgpack-c's `msgpack_unpack_next` is not used: it builds a tree of 24 bytes per item and allocates the count an
/// array or map header claims before reading an element (docs/reliability.md#msgpack-and-cbor). Here no claimed
/// count or length is allocated: lengths are checked against the bytes there by the parser, counts only drive the
/// walk, and memory is the JSON written.
public struct MessagePackBodyDecoder: BodyDecoder {
    public let name = "msgpack"

    /// The registered `application/vnd.msgpack` and the two names servers use.
    public let defaultAcceptableTypes: [MediaTypePattern] = [
        "application/msgpack", "application/x-msgpack", "application/vnd.msgpack",
    ].compactMap(MediaTypePattern.init)

    public init() {}

    public func decode(
        _ body: UnsafeBufferPointer<UInt8>, context: inout DecodingContext, into output: OutputBuffer
    ) throws(RecordError) -> Bool {
        // Only an empty body is "no content": one space (0x20) is the integer 32 (docs/output.md#empty-bodies).
        guard let base = body.baseAddress, !body.isEmpty else { return false }
        let limits = context.options.limits
        var sink = MessagePackSink(
            writer: BinaryValueWriter(
                output: output, maxDepth: limits.maxDepth, maxValueBytes: limits.maxValueBytes,
                code: .invalidMessagePack, format: "msgpack"),
            base: base)
        // A str may hold invalid byte sequences (the spec; old-spec "raw"): kept as bytes (docs/output.md#msgpack).
        sink.writer.invalidTextAsBytes = true
        let mark = output.mark
        var end = 0
        let status = withUnsafeMutablePointer(to: &sink) { pointer in
            respdecode_msgpack_parse(base, body.count, &end, messagePackEvent, pointer)
        }
        func fail(_ error: RecordError) -> RecordError {
            output.rollback(to: mark)
            var error = error
            if error.location == nil { error.location = .init(offset: end) }
            return error
        }
        switch status {
        case 1:
            guard end == body.count else {
                throw fail(
                    sink.writer.invalid(
                        "\(body.count - end) bytes after the value (a body holds one MessagePack value)", at: end))
            }
            let count = sink.writer.bytesForText
            if count > 0 {
                let first = sink.writer.firstBytesForText.map(String.init) ?? "?"
                context.warnings.append(
                    count == 1
                        ? "msgpack: a str that is not UTF-8 (at byte \(first)) is written as {\"base64\":…}"
                        : "msgpack: \(count) strs that are not UTF-8 (the first at byte \(first)) are written as "
                            + "{\"base64\":…}")
            }
            return true
        case 0:
            throw fail(sink.writer.invalid("the body ends inside a value", at: body.count))
        case -1:
            throw fail(
                sink.writer.invalid(
                    "byte 0x\(String(body[min(end, body.count - 1)], radix: 16)) starts no value", at: end))
        case -2:
            throw fail(
                RecordError(
                    .limitExceeded,
                    "msgpack: nesting deeper than msgpack-c's parser stack of \(RESPDECODE_MSGPACK_MAX_DEPTH) levels",
                    location: .init(offset: end)))
        default:
            throw fail(sink.error ?? sink.writer.invalid("stopped", at: end))
        }
    }
}

/// What the parser's callback works on.
private struct MessagePackSink {
    var writer: BinaryValueWriter
    let base: UnsafePointer<UInt8>
    var error: RecordError?

    @inline(__always)
    mutating func handle(_ kind: Int32, _ value: UInt64, _ bytes: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
        do throws(RecordError) {
            switch Int(kind) {
            case RESPDECODE_MSGPACK_NIL: try writer.writeNull(at: nil)
            case RESPDECODE_MSGPACK_FALSE: try writer.writeBool(false, at: nil)
            case RESPDECODE_MSGPACK_TRUE: try writer.writeBool(true, at: nil)
            case RESPDECODE_MSGPACK_UINT: try writer.writeUnsigned(value, at: nil)
            case RESPDECODE_MSGPACK_INT: try writer.writeSigned(Int64(bitPattern: value), at: nil)
            case RESPDECODE_MSGPACK_FLOAT: try writer.writeDouble(Double(bitPattern: value), at: nil)
            case RESPDECODE_MSGPACK_STR: try writer.writeString(buffer(bytes, length), at: offset(bytes))
            case RESPDECODE_MSGPACK_BIN: try writer.writeBytes(buffer(bytes, length), at: offset(bytes))
            case RESPDECODE_MSGPACK_EXT: try writeExtension(Int64(bitPattern: value), buffer(bytes, length))
            case RESPDECODE_MSGPACK_ARRAY: try writer.open(isMap: false, count: value, at: nil)
            case RESPDECODE_MSGPACK_MAP: try writer.open(isMap: true, count: value, at: nil)
            default: throw writer.invalid("unknown event \(kind)", at: nil)
            }
            return 0
        } catch {
            self.error = error
            return -3
        }
    }

    @inline(__always) func buffer(_ bytes: UnsafePointer<CChar>?, _ length: Int) -> UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: UnsafeRawPointer(bytes)?.assumingMemoryBound(to: UInt8.self), count: length)
    }

    @inline(__always) func offset(_ bytes: UnsafePointer<CChar>?) -> Int? {
        guard let bytes else { return nil }
        return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(bytes))
    }

    /// The timestamp extension (type −1) as an ISO 8601 UTC string; any other, or a malformed timestamp, as
    /// `{"ext":type,"base64":"…"}` (docs/output.md#msgpack).
    mutating func writeExtension(_ type: Int64, _ data: UnsafeBufferPointer<UInt8>) throws(RecordError) {
        let at = offset(UnsafeRawPointer(data.baseAddress)?.assumingMemoryBound(to: CChar.self)).map { $0 - 1 }
        if type == -1 {
            func bigEndian(_ from: Int, _ count: Int) -> UInt64 {
                var value: UInt64 = 0
                for i in from..<from + count { value = value << 8 | UInt64(data[i]) }
                return value
            }
            var instant: (seconds: Int64, nanoseconds: UInt64)?
            switch data.count {
            case 4: instant = (Int64(bigEndian(0, 4)), 0)
            case 8:
                let word = bigEndian(0, 8)
                instant = (Int64(word & 0x3_FFFF_FFFF), word >> 34)
            case 12: instant = (Int64(bitPattern: bigEndian(4, 8)), bigEndian(0, 4))
            default: break
            }
            if let instant, instant.nanoseconds < 1_000_000_000,
                try writer.writeInstant(
                    seconds: instant.seconds, nanoseconds: UInt32(instant.nanoseconds), at: at)
            {
                return
            }
        }
        _ = writer.beginValue(isString: false)
        try writer.checkRoom(data.count / 3 &* 4 &+ 40, at: at)
        writer.output.append(ascii: "{\"ext\":")
        writer.output.append(decimal: type)
        writer.output.append(ascii: ",\"base64\":\"")
        writer.output.appendBase64(data)
        writer.output.append(ascii: "\"}")
        try writer.endValue(at: at)
    }
}

private let messagePackEvent: respdecode_msgpack_event = { sink, kind, value, bytes, length in
    sink!.assumingMemoryBound(to: MessagePackSink.self).pointee.handle(kind, value, bytes, length)
}
