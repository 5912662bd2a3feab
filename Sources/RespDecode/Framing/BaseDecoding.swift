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
        var failed = false
        let capacity = text.count / 4 * 3 + 3
        let out = [UInt8](unsafeUninitializedCapacity: capacity) { buffer, count in
            var o = 0
            // Fast path: whole quads of alphabet characters (the bulk of any body), four table look-ups and one
            // check. It stops at the first quad holding anything else (padding, white space, a bad byte) and leaves
            // the rest to the careful loop below; URL-alphabet characters count as "anything else" unless `urlSafe`.
            var start = 0
            let table = urlSafe ? base64URLValues : base64StandardValues
            table.withUnsafeBufferPointer { values in
                let n = text.count
                while start + 4 <= n {
                    let a = values[Int(text[start])]
                    let b = values[Int(text[start + 1])]
                    let c = values[Int(text[start + 2])]
                    let d = values[Int(text[start + 3])]
                    guard (a | b | c | d) < 64 else { break }
                    let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    buffer[o] = UInt8(truncatingIfNeeded: v >> 16)
                    buffer[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
                    buffer[o + 2] = UInt8(truncatingIfNeeded: v)
                    o += 3
                    start += 4
                }
            }
            var accumulator: UInt32 = 0
            var pending = 0 // characters in `accumulator`
            var padding = 0
            count = 0
            for byte in text[start...] {
                let value = base64Values[Int(byte)]
                if value < 64 {
                    if value >= 62 && (byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")) && !urlSafe {
                        failed = true
                        return
                    }
                    guard padding == 0 else {
                        failed = true
                        return
                    }
                    accumulator = accumulator << 6 | UInt32(value)
                    pending += 1
                    if pending == 4 {
                        buffer[o] = UInt8(truncatingIfNeeded: accumulator >> 16)
                        buffer[o + 1] = UInt8(truncatingIfNeeded: accumulator >> 8)
                        buffer[o + 2] = UInt8(truncatingIfNeeded: accumulator)
                        o += 3
                        accumulator = 0
                        pending = 0
                    }
                } else if value == padValue {
                    padding += 1
                    guard padding <= 2 else {
                        failed = true
                        return
                    }
                } else if value == spaceValue && ignoringWhitespace {
                    continue
                } else {
                    failed = true
                    return
                }
            }
            switch pending {
            case 0:
                failed = padding != 0
            case 2:
                failed = !(padding == 0 || padding == 2) || accumulator & 0xF != 0
                if !failed {
                    buffer[o] = UInt8(truncatingIfNeeded: accumulator >> 4)
                    o += 1
                }
            case 3:
                failed = padding > 1 || accumulator & 0x3 != 0
                if !failed {
                    buffer[o] = UInt8(truncatingIfNeeded: accumulator >> 10)
                    buffer[o + 1] = UInt8(truncatingIfNeeded: accumulator >> 2)
                    o += 2
                }
            default:
                failed = true
            }
            if !failed { count = o }
        }
        return failed ? nil : out
    }

    static func base64(_ text: String, urlSafe: Bool = false, ignoringWhitespace: Bool = false) -> [UInt8]? {
        var text = text
        return text.withUTF8 { base64($0, urlSafe: urlSafe, ignoringWhitespace: ignoringWhitespace) }
    }

    /// Decodes base32 (RFC 4648 §6, upper or lower case; padding optional).
    static func base32(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count * 5 / 8)
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
            guard let high = digits[i].hexDigitValue, let low = digits[i + 1].hexDigitValue else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }

}

private let padValue: UInt8 = 64
private let spaceValue: UInt8 = 65
private let invalidValue: UInt8 = 255

/// Each byte's value in the standard alphabet only, and in the URL alphabet only (`invalidValue` otherwise), for the
/// fast path.
private let base64StandardValues: [UInt8] = base64Values.enumerated().map { byte, value in
    value < 64 && byte != Int(UInt8(ascii: "-")) && byte != Int(UInt8(ascii: "_")) ? value : invalidValue
}
private let base64URLValues: [UInt8] = base64Values.enumerated().map { byte, value in
    value < 64 && byte != Int(UInt8(ascii: "+")) && byte != Int(UInt8(ascii: "/")) ? value : invalidValue
}

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
