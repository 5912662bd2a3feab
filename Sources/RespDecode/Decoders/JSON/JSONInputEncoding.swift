/// The Unicode encoding of a JSON body (RFC 8259 §8.1): UTF-8, or, from older or non-conforming senders, UTF-16 or
/// UTF-32 in either byte order, with or without a byte-order mark.
///
/// Without a BOM the encoding shows in where the zero bytes fall among the first four, because a JSON text starts
/// with an ASCII character (RFC 4627 §3): `00 00 00 xx` UTF-32BE, `xx 00 00 00` UTF-32LE, `00 xx` UTF-16BE,
/// `xx 00` UTF-16LE, anything else UTF-8. `xx 00 00 00` could also be UTF-16LE of one character followed by U+0000,
/// but U+0000 may not appear raw anywhere in JSON, so that reading could never be valid and UTF-32LE is chosen.
enum JSONInputEncoding: Sendable, Hashable {
    case utf8, utf16BE, utf16LE, utf32BE, utf32LE

    /// The encoding of `bytes` and the length of its byte-order mark (0 when there is none).
    static func detect(_ bytes: UnsafeBufferPointer<UInt8>) -> (encoding: JSONInputEncoding, bomLength: Int) {
        let count = bytes.count
        guard count >= 2 else { return (.utf8, 0) }
        let b0 = bytes[0]
        let b1 = bytes[1]
        let b2: UInt8? = count >= 3 ? bytes[2] : nil
        let b3: UInt8? = count >= 4 ? bytes[3] : nil
        // Marks first, longest first: FF FE 00 00 is UTF-32LE's mark, not UTF-16LE's followed by U+0000.
        if b0 == 0x00, b1 == 0x00, b2 == 0xFE, b3 == 0xFF { return (.utf32BE, 4) }
        if b0 == 0xFF, b1 == 0xFE, b2 == 0x00, b3 == 0x00 { return (.utf32LE, 4) }
        if b0 == 0xEF, b1 == 0xBB, b2 == 0xBF { return (.utf8, 3) }
        if b0 == 0xFE, b1 == 0xFF { return (.utf16BE, 2) }
        if b0 == 0xFF, b1 == 0xFE { return (.utf16LE, 2) }
        if b0 == 0x00 { return (b1 == 0x00 ? .utf32BE : .utf16BE, 0) }
        if b1 == 0x00 { return (b2 == 0x00 && b3 == 0x00 ? .utf32LE : .utf16LE, 0) }
        return (.utf8, 0)
    }

    /// Converts UTF-16 or UTF-32 `bytes` (after a `bomLength`-byte mark) to UTF-8.
    ///
    /// - Throws: `.invalidJSON` for an unpaired surrogate, a code point above U+10FFFF or a truncated last code unit.
    ///   The error's offset is that of the bad code unit in `bytes` (there is no converted text to point into yet).
    static func utf8(
        from bytes: UnsafeBufferPointer<UInt8>, encoding: JSONInputEncoding, bomLength: Int
    ) throws(RecordError) -> [UInt8] {
        var output: [UInt8] = []
        let count = bytes.count
        var index = min(max(bomLength, 0), count)
        switch encoding {
        case .utf8:
            output.append(contentsOf: bytes[index...])
        case .utf16BE, .utf16LE:
            let bigEndian = encoding == .utf16BE
            // BMP text above U+07FF grows from 2 to 3 bytes; pairs shrink or stay.
            output.reserveCapacity((count - index) / 2 * 3)
            @inline(__always) func unit(at offset: Int) -> UInt32 {
                let first = UInt32(bytes[offset])
                let second = UInt32(bytes[offset + 1])
                return bigEndian ? first << 8 | second : second << 8 | first
            }
            while index < count {
                guard count - index >= 2 else { throw conversionError("truncated UTF-16 code unit", at: index) }
                let lead = unit(at: index)
                if lead & 0xF800 != 0xD800 {
                    appendUTF8(lead, to: &output)
                    index += 2
                    continue
                }
                guard lead < 0xDC00, count - index >= 4 else {
                    throw conversionError("unpaired UTF-16 surrogate", at: index)
                }
                let trail = unit(at: index + 2)
                guard trail & 0xFC00 == 0xDC00 else { throw conversionError("unpaired UTF-16 surrogate", at: index) }
                appendUTF8(0x10000 + ((lead - 0xD800) << 10 | (trail - 0xDC00)), to: &output)
                index += 4
            }
        case .utf32BE, .utf32LE:
            let bigEndian = encoding == .utf32BE
            output.reserveCapacity(count - index)
            while index < count {
                guard count - index >= 4 else { throw conversionError("truncated UTF-32 code unit", at: index) }
                var scalar: UInt32 = 0
                for k in 0..<4 {
                    let byte = UInt32(bytes[index + (bigEndian ? k : 3 - k)])
                    scalar = scalar << 8 | byte
                }
                guard scalar < 0x11_0000, scalar & 0xFFFF_F800 != 0xD800 else {
                    throw conversionError("invalid UTF-32 code point (surrogate or above U+10FFFF)", at: index)
                }
                appendUTF8(scalar, to: &output)
                index += 4
            }
        }
        return output
    }

    @inline(__always) private static func appendUTF8(_ scalar: UInt32, to output: inout [UInt8]) {
        switch scalar {
        case ..<0x80:
            output.append(UInt8(truncatingIfNeeded: scalar))
        case ..<0x800:
            output.append(UInt8(truncatingIfNeeded: 0xC0 | scalar >> 6))
            output.append(UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F))
        case ..<0x1_0000:
            output.append(UInt8(truncatingIfNeeded: 0xE0 | scalar >> 12))
            output.append(UInt8(truncatingIfNeeded: 0x80 | scalar >> 6 & 0x3F))
            output.append(UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F))
        default:
            output.append(UInt8(truncatingIfNeeded: 0xF0 | scalar >> 18))
            output.append(UInt8(truncatingIfNeeded: 0x80 | scalar >> 12 & 0x3F))
            output.append(UInt8(truncatingIfNeeded: 0x80 | scalar >> 6 & 0x3F))
            output.append(UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F))
        }
    }

    private static func conversionError(_ message: String, at offset: Int) -> RecordError {
        RecordError(.invalidJSON, message, location: .init(offset: offset))
    }
}
