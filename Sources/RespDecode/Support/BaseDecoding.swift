/// Decoders for the text encodings of binary data that inputs use: base64 (HAR `content.encoding`, ndjson
/// `bodyBase64`, WARC digests), base32 and hex (WARC digests).
enum BaseDecoding {
    /// Decodes base64 (RFC 4648 §4), or with `urlSafe` also its URL alphabet (§5: `-` and `_`).
    ///
    /// Padding is optional; `=` may only end the text. With `ignoringWhitespace`, ASCII spaces, tabs and line ends
    /// anywhere are skipped (MIME-style wrapped text); otherwise they are errors.
    /// - Returns: the bytes, or `nil` when the text is not base64 (a bad character, a lone final character, bits
    ///   left over in the last character).
    static func base64(
        _ text: UnsafeBufferPointer<UInt8>, urlSafe: Bool = false, ignoringWhitespace: Bool = false
    ) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.count / 4 * 3 + 3)
        var accumulator: UInt32 = 0
        var pending = 0  // characters in `accumulator`
        var padding = 0
        for byte in text {
            let value = base64Values[Int(byte)]
            if value < 64 {
                if value >= 62 && (byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")) && !urlSafe { return nil }
                guard padding == 0 else { return nil }
                accumulator = accumulator << 6 | UInt32(value)
                pending += 1
                if pending == 4 {
                    out.append(UInt8(truncatingIfNeeded: accumulator >> 16))
                    out.append(UInt8(truncatingIfNeeded: accumulator >> 8))
                    out.append(UInt8(truncatingIfNeeded: accumulator))
                    accumulator = 0
                    pending = 0
                }
            } else if value == padValue {
                padding += 1
                guard padding <= 2 else { return nil }
            } else if value == spaceValue && ignoringWhitespace {
                continue
            } else {
                return nil
            }
        }
        switch pending {
        case 0:
            guard padding == 0 else { return nil }
        case 2:
            guard padding == 0 || padding == 2, accumulator & 0xF == 0 else { return nil }
            out.append(UInt8(truncatingIfNeeded: accumulator >> 4))
        case 3:
            guard padding <= 1, accumulator & 0x3 == 0 else { return nil }
            out.append(UInt8(truncatingIfNeeded: accumulator >> 10))
            out.append(UInt8(truncatingIfNeeded: accumulator >> 2))
        default:
            return nil
        }
        return out
    }

    static func base64(_ text: String, urlSafe: Bool = false, ignoringWhitespace: Bool = false) -> [UInt8]? {
        var text = text
        return text.withUTF8 { base64($0, urlSafe: urlSafe, ignoringWhitespace: ignoringWhitespace) }
    }

    /// Decodes base32 (RFC 4648 §6, upper or lower case; padding optional).
    static func base32(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        var accumulator: UInt64 = 0
        var bits = 0
        var padded = false
        for byte in text.utf8 {
            if byte == UInt8(ascii: "=") {
                padded = true
                continue
            }
            guard !padded else { return nil }
            let value: UInt8
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"): value = byte - UInt8(ascii: "A")
            case UInt8(ascii: "a")...UInt8(ascii: "z"): value = byte - UInt8(ascii: "a")
            case UInt8(ascii: "2")...UInt8(ascii: "7"): value = byte - UInt8(ascii: "2") + 26
            default: return nil
            }
            accumulator = accumulator << 5 | UInt64(value)
            bits += 5
            if bits >= 8 {
                bits -= 8
                out.append(UInt8(truncatingIfNeeded: accumulator >> UInt64(bits)))
                accumulator &= (1 << UInt64(bits)) - 1
            }
        }
        // Leftover bits must be zero padding of the last character.
        guard accumulator == 0 else { return nil }
        return out
    }

    /// Decodes hexadecimal digits (either case), two per byte.
    static func hex(_ text: String) -> [UInt8]? {
        let digits = Array(text.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            guard let high = hexValue(digits[i]), let low = hexValue(digits[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

private let padValue: UInt8 = 64
private let spaceValue: UInt8 = 65
private let invalidValue: UInt8 = 255

/// Each byte's base64 value (both alphabets), `padValue` for `=`, `spaceValue` for ASCII white space.
private let base64Values: [UInt8] = {
    var table = [UInt8](repeating: invalidValue, count: 256)
    for (i, c) in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8.enumerated() {
        table[Int(c)] = UInt8(i)
    }
    table[Int(UInt8(ascii: "-"))] = 62
    table[Int(UInt8(ascii: "_"))] = 63
    table[Int(UInt8(ascii: "="))] = padValue
    for c in [0x20, 0x09, 0x0A, 0x0D] { table[c] = spaceValue }
    return table
}()
