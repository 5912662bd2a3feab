import Testing

@testable import RespDecode

/// The JSON string escaper's word-at-a-time paths (plain words, a special byte amid plain ones, runs of special bytes
/// taken byte by byte) against a byte-by-byte reference, on strings built to cross every word boundary.
@Suite("JSON escaping")
struct JSONEscapingTests {
    /// RFC 8259 escaping, one byte at a time; nil when `bytes` is not UTF-8.
    static func reference(_ bytes: [UInt8]) -> [UInt8]? {
        guard String(validating: bytes, as: UTF8.self) != nil else { return nil }
        var out: [UInt8] = [0x22]
        for c in bytes {
            switch c {
            case 0x22: out += Array(#"\""#.utf8)
            case 0x5C: out += Array(#"\\"#.utf8)
            case 0x0A: out += Array(#"\n"#.utf8)
            case 0x0D: out += Array(#"\r"#.utf8)
            case 0x09: out += Array(#"\t"#.utf8)
            case 0x08: out += Array(#"\b"#.utf8)
            case 0x0C: out += Array(#"\f"#.utf8)
            case ..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += Array(#"\u00"#.utf8) + [hex[Int(c >> 4)], hex[Int(c & 0xF)]]
            default: out.append(c)
            }
        }
        return out + [0x22]
    }

    /// Pieces that make runs and lone specials at any alignment.
    static let pieces: [[UInt8]] = [
        Array("plain text ".utf8), Array("x".utf8), Array("\"".utf8), Array("\\".utf8), [0x0A], [0x01], [0x1F],
        Array("é".utf8), Array("漢字".utf8), Array("😀".utf8), [0x7F], Array("\"\"\"\"\"\"\"\"\"\"".utf8),
        Array(repeating: 0x41, count: 17), [0xC3], [0xE2, 0x82], [0xED, 0xA0, 0x80], [0xFF],
    ]

    @Test func randomMixesEscapeAsTheByteLoopDoes() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next(_ bound: Int) -> Int {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Int(state % UInt64(bound))
        }
        var invalid = 0
        for _ in 0..<3000 {
            var bytes: [UInt8] = []
            for _ in 0..<next(24) {
                // Mostly valid pieces; an invalid one now and then.
                let piece = Self.pieces[next(Self.pieces.count)]
                if String(validating: piece, as: UTF8.self) == nil && next(4) != 0 { continue }
                bytes += piece
            }
            let expected = Self.reference(bytes)
            let out = OutputBuffer()
            out.append(ascii: "[")
            let ok = bytes.withUnsafeBufferPointer { out.appendJSONString(utf8: $0) }
            if let expected {
                #expect(ok)
                #expect(Array(out.bytes) == Array("[".utf8) + expected, "\(bytes)")
            } else {
                invalid += 1
                #expect(!ok, "\(bytes) is not UTF-8")
                #expect(Array(out.bytes) == Array("[".utf8), "a refused string leaves nothing behind")
            }
        }
        #expect(invalid > 100)
    }

    /// Without validation (text known to be UTF-8: the text decoder's), words of non-ASCII letters are copied whole;
    /// the escapes among them must come out as the byte loop writes them.
    @Test func unvalidatedTextEscapesAsTheByteLoopDoes() {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func next(_ bound: Int) -> Int {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Int(state % UInt64(bound))
        }
        let valid = Self.pieces.filter { String(validating: $0, as: UTF8.self) != nil } + [Array("Привет мир".utf8)]
        for _ in 0..<3000 {
            var bytes: [UInt8] = []
            for _ in 0..<next(24) { bytes += valid[next(valid.count)] }
            let out = OutputBuffer()
            #expect(bytes.withUnsafeBufferPointer { out.appendJSONString(utf8: $0, validate: false) })
            #expect(Array(out.bytes) == Self.reference(bytes), "\(bytes)")
        }
    }

    /// The hostile case that made the runs matter: millions of quotes (an XML entity's expansion).
    @Test func aLongRunOfQuotes() {
        let bytes = [UInt8](repeating: 0x22, count: 1_000_003)
        let out = OutputBuffer()
        #expect(bytes.withUnsafeBufferPointer { out.appendJSONString(utf8: $0) })
        #expect(out.bytes.count == 2 + 2 * bytes.count)
        #expect(Array(out.bytes.prefix(5)) == Array(#""\"\""#.utf8))
    }

    // MARK: The vector path (Sources/CShims/jsonescape.c) against the reference and the word loop

    /// A xorshift generator, so that a failure can be replayed.
    struct Generator {
        var state: UInt64
        mutating func next(_ bound: Int) -> Int {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return Int(state % UInt64(bound))
        }
    }

    /// Valid pieces (every escape class, DEL, two- to four-byte sequences at the edges of their ranges, U+2028/2029,
    /// which JSON allows raw) and invalid ones (stray continuations, truncated sequences, overlongs, surrogates,
    /// past U+10FFFF, bytes never in UTF-8).
    static let validPieces: [[UInt8]] = [
        [0x41], [0x61], [0x20], [0x22], [0x5C], [0x0A], [0x0D], [0x09], [0x08], [0x0C], [0x00], [0x01], [0x1F],
        [0x7F], [0x2F], [0x5B], [0x3C], [0xC2, 0x80], [0xDF, 0xBF], [0xC3, 0xA9], [0xE0, 0xA0, 0x80],
        [0xE2, 0x80, 0xA8], [0xE2, 0x80, 0xA9], [0xED, 0x9F, 0xBF], [0xEE, 0x80, 0x80], [0xEF, 0xBF, 0xBF],
        [0xF0, 0x90, 0x80, 0x80], [0xF4, 0x8F, 0xBF, 0xBF], [0xF3, 0xBF, 0xBF, 0xBF], Array("Жизнь".utf8),
        Array("漢字".utf8),
    ]
    static let invalidPieces: [[UInt8]] = [
        [0x80], [0xBF], [0xC0, 0x80], [0xC1, 0xBF], [0xC2], [0xE0, 0x80, 0x80], [0xE0, 0x9F, 0xBF], [0xE2, 0x82],
        [0xED, 0xA0, 0x80], [0xED, 0xBF, 0xBF], [0xF0, 0x80, 0x80, 0x80], [0xF0, 0x8F, 0xBF, 0xBF],
        [0xF4, 0x90, 0x80, 0x80], [0xF5, 0x80, 0x80, 0x80], [0xF8, 0x88, 0x80, 0x80, 0x80], [0xFE], [0xFF],
        [0xF0, 0x90, 0x80], [0xE1, 0x80, 0x41], [0xC3, 0xC3, 0xA9],
    ]

    /// Escapes `bytes` placed at `alignment` bytes into a larger buffer, after `alignment` bytes already in the
    /// output; returns what was appended, or nil when refused (and then checks that nothing was left behind).
    static func escaped(_ bytes: [UInt8], alignment: Int, validate: Bool, vector: Bool) -> [UInt8]? {
        let padded = [UInt8](repeating: 0x2E, count: alignment) + bytes + [UInt8](repeating: 0x2E, count: 40)
        let out = OutputBuffer(capacity: 16)
        for _ in 0..<alignment { out.append(UInt8(ascii: "[")) }
        let ok = padded.withUnsafeBufferPointer {
            out.appendEscaped(
                UnsafeBufferPointer(rebasing: $0[alignment..<alignment + bytes.count]), validate: validate,
                vector: vector)
        }
        let written = Array(out.bytes.dropFirst(alignment))
        guard ok else {
            #expect(written.isEmpty, "a refused string leaves nothing behind: \(bytes)")
            return nil
        }
        return written
    }

    /// Unvalidated bytes that are not UTF-8 after all: a quote or control byte after a stray lead byte is still
    /// escaped, and a sequence cut by the end is copied as it is (the string stays valid JSON).
    @Test func unvalidatedBytesThatAreNotUTF8StillEscapeASCII() {
        let cases: [([UInt8], [UInt8])] = [
            ([0xCE, 0x22], [0xCE, 0x5C, 0x22]),
            ([0xCE, 0x0A], [0xCE, 0x5C, 0x6E]),
            ([0x41, 0xDD, 0x0D], [0x41, 0xDD, 0x5C, 0x72]),
            ([0x3C, 0xE2, 0x41, 0x01, 0x01, 0xAF], [0x3C, 0xE2, 0x41] + Array(#"\u0001\u0001"#.utf8) + [0xAF]),
            ([0x41, 0xF0, 0x9F], [0x41, 0xF0, 0x9F]),
            ([0xFF, 0x5C], [0xFF, 0x5C, 0x5C]),
        ]
        for (input, expected) in cases {
            #expect(Self.escaped(input, alignment: 0, validate: false, vector: false) == expected, "\(input)")
        }
    }

    /// The reference's content (without quotes).
    static func expectedContent(_ bytes: [UInt8]) -> [UInt8]? {
        Self.reference(bytes).map { Array($0.dropFirst().dropLast()) }
    }

    /// Every length 0...100 at every alignment 0..<32, from random pieces: valid strings, strings with one invalid
    /// piece somewhere (at every position across the 32-byte blocks over the lengths), and either kind ending in a
    /// truncated sequence. Validated, the vector path must agree with the reference and with the word loop;
    /// unvalidated on valid strings, with the reference.
    @Test func vectorPathMatchesTheReferenceAtEveryLengthAndAlignment() {
        var random = Generator(state: 0x5DEE_CE66_D1CE_4E5B)
        var invalid = 0
        var checked = 0
        for length in 0...100 {
            for alignment in 0..<32 {
                for round in 0..<3 {
                    var bytes: [UInt8] = []
                    while bytes.count < length {
                        let piece = Self.validPieces[random.next(Self.validPieces.count)]
                        bytes += piece.prefix(length - bytes.count) // a cut piece may end the string truncated
                    }
                    if round == 1 && length > 0 {
                        let bad = Self.invalidPieces[random.next(Self.invalidPieces.count)]
                        let at = random.next(length)
                        bytes.replaceSubrange(at..<min(length, at + bad.count), with: bad)
                    }
                    if round == 2 && length > 1 {
                        bytes[length - 1] = [0xC3, 0xE2, 0xF0, 0x22, 0x0A][random.next(5)]
                    }
                    let expected = Self.expectedContent(bytes)
                    if expected == nil { invalid += 1 }
                    let vector = Self.escaped(bytes, alignment: alignment, validate: true, vector: true)
                    #expect(vector == expected, "length \(length), alignment \(alignment): \(bytes)")
                    let words = Self.escaped(bytes, alignment: alignment, validate: true, vector: false)
                    #expect(vector == words, "length \(length), alignment \(alignment): \(bytes)")
                    let unvalidated = Self.escaped(bytes, alignment: alignment, validate: false, vector: true)
                    if expected != nil {
                        #expect(unvalidated == expected, "unvalidated: \(bytes)")
                    }
                    // Bytes that are not UTF-8, unvalidated: both paths copy the bytes >= 0x80 and escape the rest.
                    let unvalidatedWords = Self.escaped(bytes, alignment: alignment, validate: false, vector: false)
                    #expect(unvalidatedWords == unvalidated, "unvalidated, word loop: \(bytes)")
                    checked += 1
                }
            }
        }
        #expect(checked == 101 * 32 * 3)
        #expect(invalid > 2000)
    }

    /// One multi-byte piece, valid or not, at every position of an ASCII string of 0...100 bytes: a sequence
    /// across the 32-byte blocks of the UTF-8 check (its carry from one block to the next) and at the very end.
    @Test func everyPieceAtEveryPosition() {
        for piece in Self.validPieces + Self.invalidPieces where piece.count > 1 || piece[0] >= 0x80 {
            for length in 0...100 {
                for at in 0...length {
                    var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: length)
                    bytes.insert(contentsOf: piece, at: at)
                    let expected = Self.expectedContent(bytes)
                    #expect(
                        Self.escaped(bytes, alignment: at % 7, validate: true, vector: true) == expected,
                        "\(piece) at \(at) of \(length)")
                }
            }
        }
    }

    /// Every byte value alone and in a long string (each of the 256 after 70 plain bytes, then 70 more), and all
    /// the control bytes in one run.
    @Test func everyByteValue() {
        for byte in 0...255 {
            let alone = [UInt8(byte)]
            let long = [UInt8](repeating: 0x78, count: 70) + alone + [UInt8](repeating: 0x78, count: 70)
            for bytes in [alone, long] {
                #expect(Self.escaped(bytes, alignment: 3, validate: true, vector: true) == Self.expectedContent(bytes))
            }
        }
        let controls = (0..<0x20).map { UInt8($0) } + [0x22, 0x5C, 0x7F]
        let run = controls + controls + controls
        #expect(Self.escaped(run, alignment: 0, validate: true, vector: true) == Self.expectedContent(run))
    }

    /// Strings of 0...400 bytes whose special bytes all have two-byte escapes (`\"`, `\\`, `\n`, `\r`, `\t`, `\b`,
    /// `\f`), at five densities from none to every byte: from 64 bytes on, the vector path's shuffles write all but
    /// the last 32-63 bytes eight at a time, whatever their specials. One string in three also has a control written
    /// `\u00XX` somewhere, which sends its block (only) back to one special byte at a time; a random alignment each.
    @Test func shortEscapesAtEveryDensity() {
        var random = Generator(state: 0x0BAD_C0FF_EE15_F00D)
        let plain: [[UInt8]] = [
            [0x61], [0x5A], [0x20], [0x2F], [0x7F], [0xC3, 0xA9], [0xE2, 0x80, 0xA8], Array("漢".utf8),
        ]
        let short: [[UInt8]] = [[0x22], [0x5C], [0x0A], [0x0D], [0x09], [0x08], [0x0C]]
        let long: [UInt8] = [0x00, 0x01, 0x0B, 0x0E, 0x0F, 0x10, 0x1A, 0x1F]
        var checked = 0
        for length in 0...400 {
            for percent in [0, 4, 30, 70, 100] {
                var bytes: [UInt8] = []
                while bytes.count < length {
                    let pieces = random.next(100) < percent ? short : plain
                    bytes += pieces[random.next(pieces.count)]
                }
                bytes = Array(bytes.prefix(length)) // a cut sequence at the end: refused, as the reference does
                if length > 0 && random.next(3) == 0 { bytes[random.next(length)] = long[random.next(long.count)] }
                let expected = Self.expectedContent(bytes)
                let alignment = random.next(32)
                #expect(
                    Self.escaped(bytes, alignment: alignment, validate: true, vector: true) == expected,
                    "length \(length), \(percent) %: \(bytes)")
                if expected != nil {
                    #expect(
                        Self.escaped(bytes, alignment: alignment, validate: false, vector: true) == expected,
                        "unvalidated, length \(length), \(percent) %: \(bytes)")
                }
                checked += 1
            }
        }
        #expect(checked == 401 * 5)
    }

    /// The vector path checks UTF-8 block by block as it escapes, giving up at every 1,024 bytes once it has found an
    /// error, and the last 32-63 bytes after the loops: an invalid piece anywhere in a 2,100-byte string (every 5th
    /// position, and every one near 1,024, 2,048 and the end), and a valid string of every length around those points
    /// that ends cut inside a sequence, are refused; the same strings made valid are escaped as the reference does.
    @Test func longStringsCheckedAsTheyAreEscaped() {
        var random = Generator(state: 0x7E57_AB1E_C0DE_0042)
        var text: [UInt8] = []
        while text.count < 2_100 {
            text += Self.validPieces[random.next(Self.validPieces.count)]
            if random.next(3) == 0 { text += Array("<p class=\"x\">plain words</p>".utf8) }
        }
        text = Array(text.prefix(2_100))
        while text.last! >= 0x80 { text.removeLast() } // whole sequences only: valid
        #expect(Self.escaped(text, alignment: 5, validate: true, vector: true) == Self.expectedContent(text))
        let near = Set([1_024, 2_048, text.count].flatMap { ($0 - 70)...$0 })
        var refused = 0
        for at in 0...text.count where at % 5 == 0 || near.contains(at) {
            let bad = Self.invalidPieces[at % Self.invalidPieces.count]
            var bytes = text
            bytes.insert(contentsOf: bad, at: at)
            let expected = Self.expectedContent(bytes)
            #expect(Self.escaped(bytes, alignment: at % 32, validate: true, vector: true) == expected, "at \(at)")
            if expected == nil { refused += 1 }
        }
        #expect(refused > 400)
        for length in near where length > 2 && length < text.count {
            let cut = Array(text.prefix(length - 2)) + [0xE2, 0x80] // a three-byte sequence cut short
            #expect(Self.escaped(cut, alignment: length % 32, validate: true, vector: true) == nil, "length \(length)")
        }
    }

    /// Long random strings, dense in escapes and multi-byte sequences (and, one in four, an invalid piece): the
    /// vector path's 64-byte loop, where every escape of a block is taken from its bit mask.
    @Test func longDenseStrings() {
        var random = Generator(state: 0x1234_5678_9ABC_DEF1)
        for round in 0..<400 {
            var bytes: [UInt8] = []
            let length = 64 + random.next(1200)
            while bytes.count < length {
                bytes += Self.validPieces[random.next(Self.validPieces.count)]
                if random.next(4) == 0 { bytes += Array("plain text, no escapes at all".utf8) }
            }
            if round % 4 == 0 {
                let bad = Self.invalidPieces[random.next(Self.invalidPieces.count)]
                bytes.insert(contentsOf: bad, at: random.next(bytes.count))
            }
            let expected = Self.expectedContent(bytes)
            #expect(Self.escaped(bytes, alignment: round % 32, validate: true, vector: true) == expected)
            if expected != nil {
                #expect(Self.escaped(bytes, alignment: round % 32, validate: false, vector: true) == expected)
            }
        }
    }
}
