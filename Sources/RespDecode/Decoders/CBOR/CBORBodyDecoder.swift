internal import CCbor

/// The cbor decoder: CBOR bodies (RFC 8949) through libcbor's streaming decoder, `cbor_stream_decode`, which reads
/// one data item head per call; the nesting is kept here, on a stack bounded by `--max-depth`, and each value is
/// written as JSON as it is read (``BinaryValueWriter``; the mapping is in docs/output.md#cbor).
///
/// libcbor's `cbor_load` is not used: it builds a tree of the whole item, 4.7 GB and 5.4 s for 64 MB of one-byte
/// items in one array (measured, docs/reliability.md#msgpack-and-cbor). `application/cbor-seq` (RFC 8742) is read as
/// an array of its items (docs/decoding.md#msgpack-and-cbor).
public struct CBORBodyDecoder: BodyDecoder {
    public let name = "cbor"

    public let defaultAcceptableTypes: [MediaTypePattern] = ["application/cbor", "application/cbor-seq"]
        .compactMap(MediaTypePattern.init)

    public init() {}

    public func decode(
        _ body: UnsafeBufferPointer<UInt8>, context: inout DecodingContext, into output: OutputBuffer
    ) throws(RecordError) -> Bool {
        // Only an empty body is "no content" (docs/output.md#empty-bodies).
        guard let base = body.baseAddress, !body.isEmpty else { return false }
        let limits = context.options.limits
        let isSequence = context.mimeType?.lowercased() == "application/cbor-seq"
        let mark = output.mark
        do throws(RecordError) {
            var reader = CBORReader(
                base: base, end: body.count,
                writer: BinaryValueWriter(
                    output: output, maxDepth: limits.maxDepth, maxValueBytes: limits.maxValueBytes,
                    code: .invalidCBOR, format: "cbor"),
                embeddingLevel: 0)
            try reader.run(sequence: isSequence)
        } catch {
            output.rollback(to: mark)
            throw error
        }
        return true
    }
}

/// One data item head, as libcbor's callbacks report it.
struct CBORHead {
    enum Kind: UInt8 {
        case unsigned, negative, bytes, text, bytesStart, textStart, array, arrayStart, map, mapStart, tag
        case float, bool, null, undefined, breakCode
    }
    var kind = Kind.null
    /// The integer, the negative integer's n (the value is −1 − n), the count, the length or the tag; a bool's 0 or 1.
    var value: UInt64 = 0
    var float: Double = 0
    var bytes: UnsafePointer<UInt8>?
    /// Bytes the head takes (with a definite string's content).
    var size = 0
}

/// Reads the items of one body (or of an embedded one, tag 24) into a writer.
struct CBORReader {
    let base: UnsafePointer<UInt8>
    let end: Int
    var writer: BinaryValueWriter
    /// How many tag 24 items this one is inside.
    let embeddingLevel: Int
    var position = 0
    /// Whether the body is a CBOR sequence, read into an array (`application/cbor-seq`).
    var isSequence = false
    /// ``cborHeadCallbacks``, read once (a global's every read checks that it is initialised).
    let callbacks = cborHeadCallbacks

    /// Embedded CBOR (tag 24) deeper than this stays a tag object: each level is a recursive call.
    static let maxEmbeddingLevels = 16
    /// Bignums (tags 2 and 3) up to this many bytes are written as exact integers (155 digits), longer ones as tag
    /// objects: the conversion is quadratic in the length.
    static let maxBignumBytes = 64

    init(base: UnsafePointer<UInt8>, end: Int, writer: BinaryValueWriter, embeddingLevel: Int) {
        self.base = base
        self.end = end
        self.writer = writer
        self.embeddingLevel = embeddingLevel
    }

    func invalid(_ message: String, at offset: Int) -> RecordError { writer.invalid(message, at: offset) }

    /// Decodes the head at `offset` without consuming it.
    func head(at offset: Int) throws(RecordError) -> CBORHead {
        guard offset < end else { throw invalid("the body ends inside an item", at: end) }
        var head = CBORHead()
        let result = withUnsafeMutablePointer(to: &head) { pointer in
            cbor_stream_decode(base + offset, end - offset, callbacks, pointer)
        }
        switch result.status {
        case CBOR_DECODER_FINISHED:
            head.size = result.read
            return head
        case CBOR_DECODER_NEDATA:
            throw invalid("the body ends inside the item at byte \(offset)", at: end)
        default:
            throw invalid("byte 0x\(String(base[offset], radix: 16)) starts no well-formed item", at: offset)
        }
    }

    /// The head at `offset` for a tag's look-ahead at its content: nil for the items libcbor 0.8 refuses and
    /// ``step()`` reads itself (one-byte tags 6 to 20, simple values 0 to 19 and 0xF8), which fit no tag's special
    /// case, so the tag keeps its number and the normal path reads them (docs/output.md#cbor).
    func contentHead(at offset: Int) throws(RecordError) -> CBORHead? {
        if offset < end {
            let initial = base[offset]
            if initial >= 0xC6 && initial <= 0xD4 || initial >= 0xE0 && initial <= 0xF3 || initial == 0xF8 {
                return nil
            }
        }
        return try head(at: offset)
    }

    /// Throws unless an item starts at `position`: a tag that writes nothing of its own (55799, 21–23) must still
    /// have content (RFC 8949 §3.4), and neither a break nor the end of the body is one
    /// (docs/decoding.md#msgpack-and-cbor).
    func checkTagContent(at start: Int) throws(RecordError) {
        guard position < end else {
            throw invalid("the body ends where the content of the tag at byte \(start) belongs", at: end)
        }
        if base[position] == 0xFF {
            throw invalid("break (0xFF) where the content of the tag at byte \(start) belongs", at: position)
        }
    }

    mutating func run(sequence: Bool) throws(RecordError) {
        isSequence = sequence
        if sequence { try writer.open(isMap: false, count: nil, at: 0) }
        while !writer.done {
            if sequence && writer.depth == 1 && position == end {
                try writer.closeIndefinite(at: end)
                break
            }
            try step()
        }
        if position < end {
            throw invalid(
                "\(end - position) bytes after the data item (application/cbor is one item; application/cbor-seq "
                    + "reads a sequence)", at: position)
        }
    }

    /// Reads one head and writes what it starts, ends or is.
    mutating func step() throws(RecordError) {
        guard position < end else { throw invalid("the body ends inside an item", at: end) }
        let start = position
        let initial = base[start]
        // Simple values libcbor 0.8 refuses (0 to 19 and the one-byte form 0xF8): well-formed (RFC 8949 §3.3).
        if initial >= 0xE0 && initial <= 0xF3 {
            try checkNotInChunks(at: start)
            position += 1
            try writeSimple(UInt64(initial & 0x1F), at: start)
            return
        }
        if initial == 0xF8 {
            guard start + 1 < end else { throw invalid("the body ends inside an item", at: end) }
            let value = base[start + 1]
            guard value >= 32 else { throw invalid("simple value \(value) in two bytes is not well-formed", at: start) }
            try checkNotInChunks(at: start)
            position += 2
            try writeSimple(UInt64(value), at: start)
            return
        }
        // Tags 6 to 20 in the one-byte form, which libcbor 0.8 refuses as "unassigned": well-formed (RFC 8949 §3.4;
        // COSE's 16, 17 and 18 among them).
        if initial >= 0xC6 && initial <= 0xD4 {
            try checkNotInChunks(at: start)
            position += 1
            try tag(UInt64(initial & 0x1F), at: start)
            return
        }
        let head = try head(at: start)
        position += head.size
        if writer.inChunks {
            let text: Bool
            if case .indefiniteText = writer.top?.kind { text = true } else { text = false }
            switch head.kind {
            case .breakCode: try writer.closeIndefinite(at: start)
            case .text where text, .bytes where !text:
                try writer.appendChunk(UnsafeBufferPointer(start: head.bytes, count: Int(head.value)), at: start)
            default: throw invalid("an indefinite-length string holds something else than its chunks", at: start)
            }
            return
        }
        switch head.kind {
        case .unsigned: try writer.writeUnsigned(head.value, at: start)
        case .negative: try writer.writeNegative(head.value, at: start)
        case .bytes: try writer.writeBytes(UnsafeBufferPointer(start: head.bytes, count: Int(head.value)), at: start)
        case .text: try writer.writeString(UnsafeBufferPointer(start: head.bytes, count: Int(head.value)), at: start)
        case .bytesStart: try writer.openChunks(text: false, at: start)
        case .textStart: try writer.openChunks(text: true, at: start)
        case .array, .map:
            // Every item takes a byte at least: a count past the bytes left cannot be true, whatever it claims.
            let perItem: UInt64 = head.kind == .map ? 2 : 1
            guard head.value <= UInt64(end - position) / perItem else {
                throw invalid(
                    "\(head.kind == .map ? "map" : "array") of \(head.value) items runs past the end of the body",
                    at: start)
            }
            try writer.open(isMap: head.kind == .map, count: head.value, at: start)
        case .arrayStart: try writer.open(isMap: false, count: nil, at: start)
        case .mapStart: try writer.open(isMap: true, count: nil, at: start)
        case .float: try writer.writeDouble(head.float, at: start)
        case .bool: try writer.writeBool(head.value != 0, at: start)
        case .null, .undefined: try writer.writeNull(at: start)
        case .breakCode:
            // The array a sequence is read into is not the body's to close.
            if isSequence && writer.depth == 1 {
                throw invalid("break (0xFF) outside an indefinite-length item", at: start)
            }
            try writer.closeIndefinite(at: start)
        case .tag: try tag(head.value, at: start)
        }
    }

    func checkNotInChunks(at offset: Int) throws(RecordError) {
        if writer.inChunks {
            throw invalid("an indefinite-length string holds something else than its chunks", at: offset)
        }
    }

    /// Simple values other than false, true, null and undefined: `{"simple":n}`.
    mutating func writeSimple(_ value: UInt64, at offset: Int) throws(RecordError) {
        try writer.writeJSON(isString: false, at: offset) { output in
            output.append(ascii: "{\"simple\":")
            output.appendDecimal(value)
            output.append(UInt8(ascii: "}"))
        }
    }

    /// A tag whose content starts at `position` (docs/output.md#cbor).
    mutating func tag(_ tag: UInt64, at start: Int) throws(RecordError) {
        switch tag {
        case 55799:
            // Self-described CBOR: a magic number, not a value (RFC 8949 §3.4.6).
            try checkTagContent(at: start)
            return
        case 0, 32:
            // A date/time string (RFC 3339) or a URI: the string itself.
            if let content = try contentHead(at: position), content.kind == .text || content.kind == .textStart {
                return
            }
        case 1:
            if let content = try contentHead(at: position), try epochInstant(content, at: start) {
                position += content.size
                return
            }
        case 2, 3:
            if let content = try contentHead(at: position), content.kind == .bytes,
                content.value <= UInt64(Self.maxBignumBytes)
            {
                let bytes = UnsafeBufferPointer(start: content.bytes, count: Int(content.value))
                position += content.size
                try writer.writeJSON(isString: false, at: start) { output in
                    writeBignum(bytes, negative: tag == 3, to: output)
                }
                return
            }
        case 4, 5:
            if try fraction(decimal: tag == 4, at: start) { return }
        case 21, 22, 23:
            // Expected conversion of the byte strings in the content (RFC 8949 §3.4.5.2); the setting is consumed by
            // the next value, the content, and applies to what it holds only.
            try checkTagContent(at: start)
            writer.pendingEncoding = tag == 21 ? .base64url : tag == 22 ? .base64 : .base16
            return
        case 24:
            if let content = try contentHead(at: position), content.kind == .bytes,
                embeddingLevel < Self.maxEmbeddingLevels,
                try embedded(UnsafeBufferPointer(start: content.bytes, count: Int(content.value)), at: start)
            {
                position += content.size
                return
            }
        default:
            break
        }
        try writer.openTag(tag, at: start)
    }

    /// Tag 1: seconds since 1970 (an integer or a float) as an ISO 8601 UTC string; `false` when the content is not
    /// a number or the instant falls outside the years 1…9999.
    mutating func epochInstant(_ content: CBORHead, at start: Int) throws(RecordError) -> Bool {
        switch content.kind {
        case .unsigned:
            guard content.value <= UInt64(Int64.max) else { return false }
            return try writer.writeInstant(seconds: Int64(content.value), nanoseconds: 0, at: start)
        case .negative:
            guard content.value < UInt64(Int64.max) else { return false }
            return try writer.writeInstant(seconds: -1 - Int64(content.value), nanoseconds: 0, at: start)
        case .float:
            // To the microsecond, as a property list's dates: a double of today's seconds has no more digits.
            let value = content.float
            guard value.isFinite, value.magnitude < 1e12 else { return false }
            var seconds = value.rounded(.down)
            var micro = ((value - seconds) * 1_000_000).rounded()
            if micro >= 1_000_000 {
                seconds += 1
                micro -= 1_000_000
            }
            return try writer.writeInstant(
                seconds: Int64(seconds), nanoseconds: UInt32(micro) * 1000, at: start)
        default:
            return false
        }
    }

    /// Tags 4 and 5, `[exponent, mantissa]` with both integers of 64 bits: a decimal fraction as its exact decimal
    /// number, a bigfloat as a number when a double holds it exactly. `false` (nothing consumed) otherwise.
    mutating func fraction(decimal: Bool, at start: Int) throws(RecordError) -> Bool {
        guard let array = try contentHead(at: position), array.kind == .array, array.value == 2,
            let exponentHead = try contentHead(at: position + array.size),
            let mantissaHead = try contentHead(at: position + array.size + exponentHead.size)
        else { return false }
        let exponent: Int64
        switch exponentHead.kind {
        case .unsigned where exponentHead.value <= UInt64(Int64.max): exponent = Int64(exponentHead.value)
        case .negative where exponentHead.value < UInt64(Int64.max): exponent = -1 - Int64(exponentHead.value)
        default: return false
        }
        guard mantissaHead.kind == .unsigned || mantissaHead.kind == .negative else { return false }
        let negative = mantissaHead.kind == .negative
        // The magnitude, which for a negative mantissa is n + 1 (up to 2^64).
        let (magnitude, carry) =
            negative ? mantissaHead.value.addingReportingOverflow(1) : (mantissaHead.value, false)
        let consumed = array.size + exponentHead.size + mantissaHead.size
        if decimal {
            position += consumed
            try writer.writeJSON(isString: false, at: start) { output in
                writeDecimalFraction(
                    magnitude: magnitude, carry: carry, negative: negative, exponent: exponent, to: output)
            }
            return true
        }
        guard !carry, magnitude < 1 << 53, exponent > -1100, exponent < 1100 else { return false }
        let scaled = Double(sign: negative ? .minus : .plus, exponent: Int(exponent), significand: Double(magnitude))
        guard scaled.isFinite,
            Double(sign: .plus, exponent: -Int(exponent), significand: scaled.magnitude) == Double(magnitude)
        else { return false }
        position += consumed
        try writer.writeDouble(scaled, at: start)
        return true
    }

    /// Tag 24: the embedded item as the value, read by a reader of its own; `false` (nothing written) when it is not
    /// one well-formed item.
    mutating func embedded(_ bytes: UnsafeBufferPointer<UInt8>, at start: Int) throws(RecordError) -> Bool {
        guard let inner = bytes.baseAddress, !bytes.isEmpty else { return false }
        let output = writer.output
        let before = output.mark
        let saved = writer
        _ = writer.beginValue(isString: false)
        let mark = output.mark
        var reader = CBORReader(
            base: inner, end: bytes.count,
            writer: BinaryValueWriter(
                output: output, maxDepth: writer.maxDepth - writer.depth,
                maxValueBytes: writer.maxValueBytes - (mark - writer.mark), code: .invalidCBOR, format: "cbor"),
            embeddingLevel: embeddingLevel + 1)
        do throws(RecordError) {
            try reader.run(sequence: false)
        } catch  where error.code == .invalidCBOR {
            output.rollback(to: before)
            writer = saved
            return false
        }
        try writer.endValue(at: start)
        return true
    }
}

/// Writes a bignum's magnitude (big-endian bytes) in decimal; for tag 3, −1 − n.
private func writeBignum(_ bytes: UnsafeBufferPointer<UInt8>, negative: Bool, to output: OutputBuffer) {
    // 64-bit limbs, least significant first.
    var limbs = [UInt64](repeating: 0, count: (bytes.count + 7) / 8)
    for (k, byte) in bytes.reversed().enumerated() { limbs[k / 8] |= UInt64(byte) << (UInt64(k % 8) * 8) }
    if negative {
        // n + 1
        var k = 0
        while true {
            if k == limbs.count { limbs.append(0) }
            let (sum, carry) = limbs[k].addingReportingOverflow(1)
            limbs[k] = sum
            if !carry { break }
            k += 1
        }
    }
    while limbs.last == 0 { limbs.removeLast() }
    if limbs.isEmpty {
        output.append(UInt8(ascii: "0"))
        return
    }
    // Base-10^19 chunks, least significant first, by repeated division.
    let chunkBase: UInt64 = 10_000_000_000_000_000_000
    var chunks: [UInt64] = []
    while !limbs.isEmpty {
        var remainder: UInt64 = 0
        for k in stride(from: limbs.count - 1, through: 0, by: -1) {
            let (quotient, rest) = chunkBase.dividingFullWidth((high: remainder, low: limbs[k]))
            limbs[k] = quotient
            remainder = rest
        }
        chunks.append(remainder)
        while limbs.last == 0 { limbs.removeLast() }
    }
    if negative { output.append(UInt8(ascii: "-")) }
    output.reserve(chunks.count * 19 + 1)
    var n = PlistText.writeDigits(chunks[chunks.count - 1], minimumWidth: 1, to: output.end)
    for chunk in chunks.dropLast().reversed() {
        n += PlistText.writeDigits(chunk, minimumWidth: 19, to: output.end + n)
    }
    output.commit(n)
}

/// Writes mantissa × 10^exponent exactly: with a decimal point when the exponent is between −30 and 0
/// (`273.15`, `0.005`), otherwise in exponent notation (`5e3`, `1e-40`).
private func writeDecimalFraction(
    magnitude: UInt64, carry: Bool, negative: Bool, exponent: Int64, to output: OutputBuffer
) {
    // The digits of the magnitude (2^64 when `carry`).
    var digits: [UInt8] = carry ? Array("18446744073709551616".utf8) : Array(String(magnitude).utf8)
    if negative { output.append(UInt8(ascii: "-")) }
    if exponent == 0 || magnitude == 0 && !carry {
        output.append(digits)
        return
    }
    if exponent < 0 && exponent >= -30 {
        let shift = Int(-exponent)
        if digits.count <= shift {
            digits.insert(contentsOf: repeatElement(UInt8(ascii: "0"), count: shift - digits.count + 1), at: 0)
        }
        output.append(Array(digits[..<(digits.count - shift)]))
        output.append(UInt8(ascii: "."))
        output.append(Array(digits[(digits.count - shift)...]))
        return
    }
    output.append(digits)
    output.append(UInt8(ascii: "e"))
    output.append(decimal: exponent)
}

/// The callbacks of `cbor_stream_decode`: each records the head it is called with in the `CBORHead` its context
/// points to.
///
/// Allocated once and never freed: passing a global struct by address (`withUnsafePointer(to:)`) copied its 24
/// pointers on every call, a tenth of the time of a body of small items.
private nonisolated(unsafe) let cborHeadCallbacks: UnsafeMutablePointer<cbor_callbacks> = {
    @inline(__always) func record(_ context: UnsafeMutableRawPointer?, _ kind: CBORHead.Kind, _ value: UInt64) {
        let head = context!.assumingMemoryBound(to: CBORHead.self)
        head.pointee.kind = kind
        head.pointee.value = value
    }
    var callbacks = cbor_empty_callbacks
    callbacks.uint8 = { record($0, .unsigned, UInt64($1)) }
    callbacks.uint16 = { record($0, .unsigned, UInt64($1)) }
    callbacks.uint32 = { record($0, .unsigned, UInt64($1)) }
    callbacks.uint64 = { record($0, .unsigned, $1) }
    callbacks.negint8 = { record($0, .negative, UInt64($1)) }
    callbacks.negint16 = { record($0, .negative, UInt64($1)) }
    callbacks.negint32 = { record($0, .negative, UInt64($1)) }
    callbacks.negint64 = { record($0, .negative, $1) }
    // libcbor's names: `byte_string_start` and `string_start` are the indefinite-length starts.
    callbacks.byte_string = { context, bytes, length in
        record(context, .bytes, UInt64(truncatingIfNeeded: length))
        context!.assumingMemoryBound(to: CBORHead.self).pointee.bytes = bytes
    }
    callbacks.string = { context, bytes, length in
        record(context, .text, UInt64(truncatingIfNeeded: length))
        context!.assumingMemoryBound(to: CBORHead.self).pointee.bytes = bytes
    }
    callbacks.byte_string_start = { record($0, .bytesStart, 0) }
    callbacks.string_start = { record($0, .textStart, 0) }
    callbacks.array_start = { record($0, .array, UInt64(truncatingIfNeeded: $1)) }
    callbacks.indef_array_start = { record($0, .arrayStart, 0) }
    callbacks.map_start = { record($0, .map, UInt64(truncatingIfNeeded: $1)) }
    callbacks.indef_map_start = { record($0, .mapStart, 0) }
    callbacks.tag = { record($0, .tag, $1) }
    callbacks.float2 = { context, value in
        record(context, .float, 0)
        context!.assumingMemoryBound(to: CBORHead.self).pointee.float = Double(value)
    }
    callbacks.float4 = { context, value in
        record(context, .float, 0)
        context!.assumingMemoryBound(to: CBORHead.self).pointee.float = Double(value)
    }
    callbacks.float8 = { context, value in
        record(context, .float, 0)
        context!.assumingMemoryBound(to: CBORHead.self).pointee.float = value
    }
    callbacks.boolean = { record($0, .bool, $1 ? 1 : 0) }
    callbacks.null = { record($0, .null, 0) }
    callbacks.undefined = { record($0, .undefined, 0) }
    callbacks.indef_break = { record($0, .breakCode, 0) }
    let pointer = UnsafeMutablePointer<cbor_callbacks>.allocate(capacity: 1)
    pointer.initialize(to: callbacks)
    return pointer
}()
