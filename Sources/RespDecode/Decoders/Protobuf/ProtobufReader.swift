/// Reads protobuf wire format without a schema and writes each message as a JSON array of its fields
/// (docs/output.md#protobuf, docs/decoding.md#protobuf).
///
/// Own code: reading without a schema is a walk over tags, varints and lengths, and no library on our list does it
/// (protobuf-c and the C++ runtime need generated descriptors; upb needs a schema for everything but its unknown-field
/// dump, and none of them is a Debian library we link).
///
/// A length-delimited field is guessed as mitmproxy's protobuf view guesses it — a nested message when its bytes parse
/// completely as one — made cheaper and more careful: the structure of one level (tags, varints, lengths, groups) is
/// checked first without writing anything, and only then are its fields written, so no level is ever written and
/// thrown away. Bytes that parse but are all printable UTF-8 text (`hi` parses as field 13 = 105) are a string.
/// Each level checks only its own field headers and hands each length-delimited field's bytes to the next level, so
/// the work is linear in the body per level of guessing, and bounded by `maxProtobufDepth` levels.
struct ProtobufReader {
    struct Limits {
        var maxDepth: Int
        var maxValueBytes: Int
    }

    let out: OutputBuffer
    let limits: Limits
    let valueEnd: Int

    init(output: OutputBuffer, limits: Limits) {
        out = output
        self.limits = limits
        let (end, overflow) = output.count.addingReportingOverflow(limits.maxValueBytes)
        valueEnd = overflow ? Int.max : end
    }

    /// Why a level does not parse as a message.
    enum Malformed: Error {
        /// Not a message: the reason and the offset (in the bytes checked).
        case invalid(String, Int)
        /// Groups nested deeper than the depth limit.
        case tooDeep(Int)
    }

    /// Writes `bytes`, which must be one message, as `[fields…]`; throws `invalidProtobuf` (or `limitExceeded`) with
    /// the offset `base` + the offset in `bytes`, leaving the output as it was.
    func readMessage(_ bytes: UnsafeBufferPointer<UInt8>, base: Int = 0) throws(RecordError) {
        switch Self.check(bytes, maxGroupDepth: limits.maxDepth) {
        case .success: break
        case .failure(.invalid(let reason, let offset)):
            throw RecordError(
                .invalidProtobuf, "not a protobuf message: \(reason)", location: .init(offset: base + offset))
        case .failure(.tooDeep(let offset)):
            throw RecordError(
                .limitExceeded, "groups nested deeper than \(limits.maxDepth) (maxProtobufDepth)",
                location: .init(offset: base + offset))
        }
        let mark = out.mark
        guard writeFields(bytes, depth: 1) else {
            out.rollback(to: mark)
            throw RecordError(.limitExceeded, "protobuf value larger than the value limit (maxValueBytes)")
        }
    }

    // MARK: Structure

    /// Checks that `bytes` parse completely as fields: valid tags (field number ≥ 1, wire type 0, 1, 2, 3, 5; 4 only
    /// closing its group), varints of at most 10 bytes, lengths and fixed values within the bytes, groups closed by
    /// their own number and nested at most `maxGroupDepth` deep. Nothing is written; the contents of length-delimited
    /// fields are skipped.
    static func check(_ bytes: UnsafeBufferPointer<UInt8>, maxGroupDepth: Int) -> Result<Void, Malformed> {
        var i = 0
        let n = bytes.count
        // The field numbers of the open groups: a small inline stack is enough for the depth limit's usual values.
        var groups: [UInt64] = []
        while i < n {
            let start = i
            guard let key = readVarint(bytes, &i) else {
                return .failure(.invalid("a truncated or overlong tag", start))
            }
            let field = key >> 3
            let wire = key & 7
            guard field >= 1 && field <= 0x1FFF_FFFF else {
                return .failure(.invalid("field number \(field) outside 1…536870911", start))
            }
            switch wire {
            case 0:
                guard readVarint(bytes, &i) != nil else {
                    return .failure(.invalid("a truncated or overlong varint", start))
                }
            case 1:
                guard n - i >= 8 else { return .failure(.invalid("a truncated 64-bit value", start)) }
                i += 8
            case 5:
                guard n - i >= 4 else { return .failure(.invalid("a truncated 32-bit value", start)) }
                i += 4
            case 2:
                let lengthStart = i
                guard let length = readVarint(bytes, &i) else {
                    return .failure(.invalid("a truncated or overlong length", lengthStart))
                }
                guard length <= UInt64(n - i) else {
                    return .failure(.invalid("a length of \(length) past the end (\(n - i) bytes left)", lengthStart))
                }
                i += Int(length)
            case 3:
                guard groups.count < maxGroupDepth else { return .failure(.tooDeep(start)) }
                groups.append(field)
            case 4:
                guard let open = groups.last, open == field else {
                    return .failure(.invalid("an end-group tag for field \(field) that is not open", start))
                }
                groups.removeLast()
            default:
                return .failure(.invalid("wire type \(wire)", start))
            }
        }
        guard groups.isEmpty else { return .failure(.invalid("a group of field \(groups.last!) is not closed", n)) }
        return .success(())
    }

    /// Reads a varint of at most 10 bytes (the 10th at most 1) at `i`, advancing it; nil if truncated or overlong.
    @inline(__always)
    static func readVarint(_ bytes: UnsafeBufferPointer<UInt8>, _ i: inout Int) -> UInt64? {
        let n = bytes.count
        guard i < n else { return nil }
        let first = bytes[i]
        if first < 0x80 {
            i += 1
            return UInt64(first)
        }
        var value: UInt64 = 0
        var shift: UInt64 = 0
        var k = i
        while k < n {
            let byte = bytes[k]
            k += 1
            if shift == 63 && byte > 1 { return nil }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 {
                i = k
                return value
            }
            shift += 7
            if shift > 63 { return nil }
        }
        return nil
    }

    // MARK: Writing

    /// Writes the fields of `bytes` (checked by `check`) as `[…]`; `false` when the value limit was passed.
    private func writeFields(_ bytes: UnsafeBufferPointer<UInt8>, depth: Int) -> Bool {
        out.append(UInt8(ascii: "["))
        var i = 0
        var first = true
        // Open groups: each is an array inside the field object that opened it.
        var openGroups = 0
        while i < bytes.count {
            let key = Self.readVarint(bytes, &i)!
            let field = key >> 3
            let wire = Int(key & 7)
            if wire == 4 {
                out.append(ascii: "]}")
                openGroups -= 1
                first = false
                continue
            }
            if !first { out.append(UInt8(ascii: ",")) }
            first = false
            out.append(ascii: "{\"field\":")
            out.appendDecimal(field)
            out.append(ascii: ",\"wire\":")
            out.append(UInt8(ascii: "0") + UInt8(wire))
            switch wire {
            case 0:
                let value = Self.readVarint(bytes, &i)!
                out.append(ascii: ",\"type\":\"varint\",\"value\":")
                out.appendDecimal(value)
                if value >= 1 << 63 {
                    out.append(ascii: ",\"signed\":")
                    out.append(decimal: Int64(bitPattern: value))
                }
                out.append(UInt8(ascii: "}"))
            case 1:
                var value: UInt64 = 0
                for k in 0..<8 { value |= UInt64(bytes[i + k]) << (8 * UInt64(k)) }
                i += 8
                out.append(ascii: ",\"type\":\"fixed64\",\"value\":")
                out.appendDecimal(value)
                if value >= 1 << 63 {
                    out.append(ascii: ",\"signed\":")
                    out.append(decimal: Int64(bitPattern: value))
                }
                out.append(ascii: ",\"double\":")
                out.appendPlistReal(Double(bitPattern: value))
                out.append(UInt8(ascii: "}"))
            case 5:
                var value: UInt32 = 0
                for k in 0..<4 { value |= UInt32(bytes[i + k]) << (8 * UInt32(k)) }
                i += 4
                out.append(ascii: ",\"type\":\"fixed32\",\"value\":")
                out.appendDecimal(UInt64(value))
                if value >= 1 << 31 {
                    out.append(ascii: ",\"signed\":")
                    out.append(decimal: Int64(Int32(bitPattern: value)))
                }
                out.append(ascii: ",\"float\":")
                appendFloat(Float(bitPattern: value))
                out.append(UInt8(ascii: "}"))
            case 2:
                let length = Int(Self.readVarint(bytes, &i)!)
                let content = UnsafeBufferPointer(rebasing: bytes[i..<(i + length)])
                i += length
                guard writeLengthDelimited(content, depth: depth) else { return false }
                out.append(UInt8(ascii: "}"))
            default: // 3: a group; its fields follow, up to its end-group tag
                out.append(ascii: ",\"type\":\"group\",\"value\":[")
                openGroups += 1
                first = true
            }
            guard out.count <= valueEnd else { return false }
        }
        out.append(UInt8(ascii: "]"))
        return true
    }

    /// Writes the `"type"` and `"value"` of a length-delimited field: a nested message when the bytes parse as one
    /// and are not printable text, else a string when they are printable text (UTF-8 without control characters but
    /// tab, line feed and carriage return), else bytes.
    private func writeLengthDelimited(_ content: UnsafeBufferPointer<UInt8>, depth: Int) -> Bool {
        let printable = isPrintableText(content)
        if !printable && depth < limits.maxDepth,
            case .success = Self.check(content, maxGroupDepth: limits.maxDepth - depth)
        {
            out.append(ascii: ",\"type\":\"message\",\"value\":")
            return writeFields(content, depth: depth + 1)
        }
        if printable {
            out.append(ascii: ",\"type\":\"string\",\"value\":\"")
            guard out.appendJSONStringContent(utf8: content, validate: false, stoppingPast: valueEnd) == .written
            else { return false }
            out.append(UInt8(ascii: "\""))
            return true
        }
        out.append(ascii: ",\"type\":\"bytes\",\"value\":{\"base64\":\"")
        out.appendBase64(content)
        out.append(ascii: "\"}")
        return out.count <= valueEnd
    }

    /// A 32-bit float as the shortest text that reads back as the same `Float` (`0.1`, not `0.10000000149011612`);
    /// non-finite ones as the strings `"Infinity"`, `"-Infinity"`, `"NaN"` (docs/output.md#plist).
    private func appendFloat(_ value: Float) {
        guard value.isFinite else {
            out.appendPlistReal(Double(value))
            return
        }
        var text = value.description
        text.withUTF8 { out.append($0) }
    }
}

/// Whether `bytes` are UTF-8 text without control characters other than tab, line feed and carriage return: what a
/// length-delimited field holding a string looks like (a message almost always has a byte below 0x20: a length, a
/// small varint, a tag of a low field number with wire type 0 or 2). Stops at the first byte that is not.
func isPrintableText(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    var i = 0
    let n = bytes.count
    guard let base = bytes.baseAddress else { return true }
    let raw = UnsafeRawPointer(base)
    let ones: UInt64 = 0x0101_0101_0101_0101
    let high: UInt64 = 0x8080_8080_8080_8080
    while i < n {
        // Eight bytes at a time while all are printable ASCII: none below 0x20 (the "has a byte less than" test),
        // none 0x7F or above.
        while n - i >= 8 {
            let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            let below = (word &- ones &* 0x20) & ~word & high
            let above = ((word & ~high) &+ ones | word) & high
            guard below | above == 0 else { break }
            i += 8
        }
        guard i < n else { break }
        let c = bytes[i]
        if c >= 0x20 && c < 0x7F {
            i += 1
            continue
        }
        if c < 0x80 {
            guard c == 0x09 || c == 0x0A || c == 0x0D else { return false }
            i += 1
            continue
        }
        let length = utf8SequenceLength(bytes, at: i)
        guard length > 0 else { return false }
        i += length
    }
    return true
}
