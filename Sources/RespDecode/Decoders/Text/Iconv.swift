// Conversion to UTF-8 through glibc's iconv (docs/decoding.md#text-conversion): multi-byte encodings and UTF-16 go
// through iconv itself; single-byte encodings through a 256-entry byte→UTF-8 table that iconv fills once per encoding
// (``SingleByteTable``). Nothing of iconv's is visible outside this file.
import Glibc

/// A growing output of UTF-8 bytes, handed to the caller's closure as a buffer and freed after it.
struct UTF8Output: ~Copyable {
    private(set) var base: UnsafeMutablePointer<UInt8>
    private(set) var capacity: Int
    var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        base = .allocate(capacity: self.capacity)
    }

    deinit { base.deallocate() }

    /// Makes room for at least `additional` more bytes.
    mutating func reserve(_ additional: Int) {
        let needed = count + additional
        guard needed > capacity else { return }
        var newCapacity = capacity
        while newCapacity < needed { newCapacity = newCapacity > Int.max / 2 ? needed : newCapacity * 2 }
        let grown = UnsafeMutablePointer<UInt8>.allocate(capacity: newCapacity)
        grown.update(from: base, count: count)
        base.deallocate()
        base = grown
        capacity = newCapacity
    }

    /// U+FFFD as UTF-8.
    mutating func appendReplacement() {
        reserve(3)
        base[count] = 0xEF
        base[count + 1] = 0xBF
        base[count + 2] = 0xBD
        count += 3
    }

    mutating func append(_ scalar: Unicode.Scalar) {
        for unit in UTF8.encode(scalar)! {
            reserve(1)
            base[count] = unit
            count += 1
        }
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        reserve(bytes.count)
        (base + count).update(from: source, count: bytes.count)
        count += bytes.count
    }

    var buffer: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }
}

/// What a conversion gave besides the bytes.
struct ConversionOutcome {
    /// Invalid byte sequences replaced by U+FFFD.
    var replacements = 0
    /// The output reached the byte limit and the rest of the input was not converted.
    var truncated = false
}

enum Iconv {
    /// Converts `input` from `encoding` (an encoding iconv converts: ``WebEncoding/iconvName`` is not nil) to UTF-8,
    /// appending to `output` until it holds at least `limit` bytes. Invalid sequences become U+FFFD: one per
    /// sequence glibc rejects, skipping what ``skipLength(_:at:in:)`` says.
    static func convert(
        _ input: UnsafeBufferPointer<UInt8>, from encoding: WebEncoding, into output: inout UTF8Output, limit: Int
    ) -> ConversionOutcome {
        var outcome = ConversionOutcome()
        guard let name = encoding.iconvName, let start = input.baseAddress, !input.isEmpty else { return outcome }
        let descriptor = iconv_open("UTF-8", name)
        guard let descriptor, descriptor != UnsafeMutableRawPointer(bitPattern: -1) else {
            // glibc without the converter (a trimmed gconv installation): nothing can be read as this encoding.
            output.appendReplacement()
            outcome.replacements = 1
            return outcome
        }
        defer { iconv_close(descriptor) }

        var inPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(mutating: start).assumingMemoryBound(
            to: CChar.self)
        var inLeft = input.count
        // Output is given in steps of at most this much past what is written, so that the limit is checked often.
        let step = 1 << 20
        // Input is given in windows of this much: iconv's cost does not depend on it, but a sanitizer's iconv
        // interceptor checks the whole input it is given on every call, and an invalid byte is a call of its own
        // (60 MB of invalid Shift_JIS took 43 s under AddressSanitizer with the whole rest of the body each time).
        var window = 1 << 16
        while inLeft > 0 {
            if output.count >= limit {
                outcome.truncated = true
                return outcome
            }
            output.reserve(min(max(inLeft * 2, 64), step))
            var outPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(output.base + output.count)
                .assumingMemoryBound(to: CChar.self)
            var outLeft = min(output.capacity - output.count, step)
            let before = outLeft
            let given = min(inLeft, window)
            var chunkLeft = given
            errno = 0
            let result = iconv(descriptor, &inPointer, &chunkLeft, &outPointer, &outLeft)
            let failure = errno
            output.count += before - outLeft
            let wholeRest = given == inLeft
            inLeft -= given - chunkLeft
            if result != -1 { continue }
            switch failure {
            case E2BIG:
                continue
            case EINVAL where !wholeRest:
                // A sequence cut by the window, not by the body: the next window starts with it (a wider one if
                // nothing was read, so that no sequence can outgrow it).
                if chunkLeft == given { window *= 2 }
                continue
            case EILSEQ:
                let offset = input.count - inLeft
                var skip = 1
                if let scalar = whatwgSingleByte(input[offset], in: encoding) {
                    output.append(scalar)
                } else {
                    skip = skipLength(input, at: offset, in: encoding)
                    output.appendReplacement()
                    outcome.replacements += 1
                }
                inPointer = inPointer.map { $0 + skip }
                inLeft -= skip
            default:
                // EINVAL: an incomplete sequence at the end of the input (one U+FFFD, as WHATWG's end-of-queue
                // rule); anything else ends the conversion the same way.
                output.appendReplacement()
                outcome.replacements += 1
                inLeft = 0
            }
        }
        // A stateful converter (BIG5-HKSCS holds a base character, ISO-2022-JP its shift state) writes what it holds.
        while true {
            output.reserve(64)
            var outPointer: UnsafeMutablePointer<CChar>? = UnsafeMutableRawPointer(output.base + output.count)
                .assumingMemoryBound(to: CChar.self)
            var outLeft = output.capacity - output.count
            let before = outLeft
            errno = 0
            let result = iconv(descriptor, nil, nil, &outPointer, &outLeft)
            let failure = errno
            output.count += before - outLeft
            if result != -1 || failure != E2BIG { break }
        }
        return outcome
    }

    /// A byte glibc rejects where WHATWG's decoder gives a character (docs/decoding.md#text-conversion): 0x80 is
    /// U+20AC in gb18030 and GBK, and U+0080 in Shift_JIS.
    static func whatwgSingleByte(_ byte: UInt8, in encoding: WebEncoding) -> Unicode.Scalar? {
        guard byte == 0x80 else { return nil }
        switch encoding {
        case .gbk, .gb18030: return "\u{20AC}"
        case .shiftJIS: return "\u{80}"
        default: return nil
        }
    }

    /// How many bytes an invalid sequence at `offset` takes (docs/decoding.md#text-replacements). UTF-16: the code
    /// unit (an unpaired surrogate). The double-byte encodings: the lead byte and a non-ASCII trail byte together, as
    /// WHATWG's decoders consume them (an ASCII trail byte is read again, as they do). Otherwise one byte.
    static func skipLength(_ input: UnsafeBufferPointer<UInt8>, at offset: Int, in encoding: WebEncoding) -> Int {
        let left = input.count - offset
        switch encoding {
        case .utf16BE, .utf16LE:
            return min(2, left)
        case .shiftJIS, .eucKR, .big5, .gbk, .gb18030, .eucJP:
            return input[offset] >= 0x81 && left >= 2 && input[offset + 1] >= 0x80 ? 2 : 1
        default:
            return 1
        }
    }
}

/// The byte→UTF-8 table of a single-byte encoding, filled from iconv once per encoding and kept for the process
/// (docs/decoding.md#text-conversion). Each entry holds up to 3 UTF-8 bytes (first byte lowest) and their count in
/// the top byte; a count of 0 marks a byte the encoding does not define (U+FFFD).
struct SingleByteTable: Sendable {
    let entries: [UInt32]

    private static let cache = Locked<[WebEncoding: SingleByteTable]>([:])

    /// The table of `encoding` (a single-byte encoding).
    static func table(for encoding: WebEncoding) -> SingleByteTable {
        if let table = cache.withLock({ $0[encoding] }) { return table }
        let table = SingleByteTable(building: encoding)
        cache.withLock { $0[encoding] = table }
        return table
    }

    /// Where glibc's tables differ from the WHATWG indexes for a byte glibc does define: the WHATWG code point. Found
    /// by the test that compares every single-byte table with the WHATWG indexes (TextConformanceTests); glibc 2.36.
    static let whatwgCorrections: [WebEncoding: [UInt8: UInt32]] = [
        // glibc's KOI8-U is RFC 2319 (box drawing at 0xAE, 0xBE); WHATWG's has ў and Ў there (KOI8-RU's letters).
        .koi8u: [0xAE: 0x045E, 0xBE: 0x040E],
        // glibc: U+0394 GREEK CAPITAL DELTA and a private-use Apple logo U+E01E; WHATWG: U+2206 INCREMENT, U+F8FF.
        .macintosh: [0xC6: 0x2206, 0xF0: 0xF8FF],
        // glibc's MAC-CYRILLIC predates the euro sign at 0xFF (¤ there); WHATWG's is Mac OS 9's, with €.
        .xMacCyrillic: [0xFF: 0x20AC],
        // glibc leaves 0xCA undefined; WHATWG maps it to U+05BA HEBREW POINT HOLAM HASER FOR VAV.
        .windows1255: [0xCA: 0x05BA],
    ]

    private init(building encoding: WebEncoding) {
        var entries = [UInt32](repeating: 0, count: 256)
        for byte in 0..<0x80 { entries[byte] = 1 << 24 | UInt32(byte) }
        // One descriptor per byte: glibc's CP1255 and CP1258 hold a base letter back to compose it with a following
        // combining mark, which WHATWG does not do; converting each byte alone (and flushing) gives its own mapping.
        for byte in 0x80...0xFF {
            var scalar = Self.iconvScalar(UInt8(byte), encoding: encoding)
            if let corrected = Self.whatwgCorrections[encoding]?[UInt8(byte)] { scalar = corrected }
            // A byte of 0x80-0x9F that glibc leaves undefined is the C1 control of the same value, as in every
            // WHATWG index that defines it (the windows-125x and windows-874 code pages); above 0x9F it stays
            // undefined.
            if scalar == nil && byte < 0xA0 { scalar = UInt32(byte) }
            if let scalar, let value = Unicode.Scalar(scalar) {
                var packed: UInt32 = 0
                var length: UInt32 = 0
                for unit in UTF8.encode(value)! {
                    packed |= UInt32(unit) << (8 * length)
                    length += 1
                }
                entries[byte] = length << 24 | packed
            }
        }
        self.entries = entries
    }

    /// The code point glibc gives for `byte` alone, or nil when it rejects it.
    private static func iconvScalar(_ byte: UInt8, encoding: WebEncoding) -> UInt32? {
        guard let name = encoding.iconvName else { return nil }
        let descriptor = iconv_open("UTF-32LE", name)
        guard let descriptor, descriptor != UnsafeMutableRawPointer(bitPattern: -1) else { return nil }
        defer { iconv_close(descriptor) }
        var input = [CChar(bitPattern: byte)]
        var output = [UInt32](repeating: 0, count: 4)
        let written = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBytes { outBuffer -> Int in
                var inPointer = inBuffer.baseAddress
                var inLeft = 1
                var outPointer = outBuffer.baseAddress?.assumingMemoryBound(to: CChar.self)
                var outLeft = outBuffer.count
                if iconv(descriptor, &inPointer, &inLeft, &outPointer, &outLeft) == -1 { return -1 }
                _ = iconv(descriptor, nil, nil, &outPointer, &outLeft)
                return outBuffer.count - outLeft
            }
        }
        // One code point exactly; anything else (nothing, or a sequence) is not a single-byte mapping.
        guard written == 4 else { return nil }
        return UInt32(littleEndian: output[0])
    }

    /// Converts `input`, appending to `output` until the next byte would take it past `limit`.
    func convert(_ input: UnsafeBufferPointer<UInt8>, into output: inout UTF8Output, limit: Int) -> ConversionOutcome {
        var outcome = ConversionOutcome()
        guard let bytes = input.baseAddress, !input.isEmpty else { return outcome }
        // Room for the worst case (every byte a three-byte character, or U+FFFD) up to the limit, and four bytes of
        // slack: each character is stored as a whole 32-bit word and the count advanced by its length.
        let room = input.count > (limit - output.count) / 3 ? limit - output.count : input.count * 3
        output.reserve(room + 8)
        let out = output.base + output.count
        var written = 0
        var replacements = 0
        let end = input.count
        entries.withUnsafeBufferPointer { table in
            var i = 0
            while i < end {
                if i + 8 <= end && written + 8 <= room {
                    let word = UnsafeRawPointer(bytes + i).loadUnaligned(as: UInt64.self)
                    if word & 0x8080_8080_8080_8080 == 0 {
                        UnsafeMutableRawPointer(out + written).storeBytes(of: word, as: UInt64.self)
                        written += 8
                        i += 8
                        continue
                    }
                }
                let defined = table[Int(bytes[i])]
                // An undefined byte is U+FFFD (EF BF BD).
                let entry = defined == 0 ? 3 << 24 | 0xBD_BFEF : defined
                let length = Int(entry >> 24)
                if written + length > room {
                    outcome.truncated = true
                    break
                }
                if defined == 0 { replacements += 1 }
                UnsafeMutableRawPointer(out + written).storeBytes(
                    of: (entry & 0xFF_FFFF).littleEndian, as: UInt32.self)
                written += length
                i += 1
            }
        }
        output.count += written
        outcome.replacements = replacements
        return outcome
    }
}
