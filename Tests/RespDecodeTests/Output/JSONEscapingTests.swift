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
}
