internal import CShims

extension OutputBuffer {
    /// Appends `string` as a JSON string literal, escaping only `"`, `\` and control characters.
    public func appendJSONString(_ string: String) {
        var string = string
        string.withUTF8 { _ = appendJSONString(utf8: $0, validate: false) }
    }

    /// Appends `bytes` as a JSON string literal if they are valid UTF-8 (RFC 3629: no overlongs, no surrogates,
    /// nothing past U+10FFFF); otherwise appends nothing and returns `false`.
    @discardableResult
    public func appendJSONString(utf8 bytes: UnsafeBufferPointer<UInt8>, validate: Bool = true) -> Bool {
        let mark = self.mark
        append(UInt8(ascii: "\""))
        guard appendJSONStringContent(utf8: bytes, validate: validate) else {
            rollback(to: mark)
            return false
        }
        append(UInt8(ascii: "\""))
        return true
    }

    /// Appends the escaped content of a JSON string (no quotes), as ``appendJSONString(utf8:validate:)`` does;
    /// appends nothing and returns `false` on invalid UTF-8.
    @discardableResult
    public func appendJSONStringContent(utf8 bytes: UnsafeBufferPointer<UInt8>, validate: Bool = true) -> Bool {
        appendJSONStringContent(utf8: bytes, validate: validate, stoppingPast: .max) == .written
    }

    /// How ``appendJSONStringContent(utf8:validate:stoppingPast:)`` ended.
    public enum JSONContentResult: Sendable {
        case written
        /// Nothing was appended: the bytes are not valid UTF-8.
        case invalidUTF8
        /// Nothing was appended: `count` passed the limit.
        case pastLimit
    }

    /// Appends the escaped content of a JSON string (no quotes), stopping — and appending nothing — once `count`
    /// passes `limit`.
    ///
    /// Large texts are escaped in segments of at most 1 MiB (cut before a UTF-8 lead byte), with the limit checked
    /// after each, so the room reserved for the worst case — six bytes per input byte — stays small and the output
    /// never runs far past the limit: a 30 MB string once asked for a 256 MiB block at once, more than the value limit
    /// and enough to abort the process under a 256 MB address-space limit.
    @inline(__always)
    public func appendJSONStringContent(
        utf8 bytes: UnsafeBufferPointer<UInt8>, validate: Bool = true, stoppingPast limit: Int
    ) -> JSONContentResult {
        // The common case, without the segment bookkeeping (kept inline: it is on every string's path).
        guard bytes.count > Self.segmentBytes else {
            let mark = self.mark
            guard appendEscaped(bytes, validate: validate) else { return .invalidUTF8 }
            guard count <= limit else {
                rollback(to: mark)
                return .pastLimit
            }
            return .written
        }
        return appendSegmented(bytes, validate: validate, stoppingPast: limit)
    }

    private static let segmentBytes = 1 << 20

    @inline(never)
    private func appendSegmented(
        _ bytes: UnsafeBufferPointer<UInt8>, validate: Bool, stoppingPast limit: Int
    ) -> JSONContentResult {
        let segmentBytes = Self.segmentBytes
        let mark = self.mark
        var start = 0
        repeat {
            var end = min(start + segmentBytes, bytes.count)
            if end < bytes.count {
                // Back up over continuation bytes (at most three) so that no sequence is split.
                var back = 0
                while back < 3 && end - back > start + 1 && bytes[end - back] & 0xC0 == 0x80 { back += 1 }
                end -= back
            }
            guard appendEscaped(UnsafeBufferPointer(rebasing: bytes[start..<end]), validate: validate) else {
                rollback(to: mark)
                return .invalidUTF8
            }
            guard count <= limit else {
                rollback(to: mark)
                return .pastLimit
            }
            start = end
        } while start < bytes.count
        return .written
    }

    /// Escapes `bytes` (with `validate`, only when they are valid UTF-8, else appends nothing and returns `false`).
    ///
    /// With AVX2, C code does it (Sources/CShims/jsonescape.c, docs/output.md#json-strings): 32 bytes at a time,
    /// each block checked as UTF-8 as it is escaped (what it wrote is not committed if the check fails): on issue
    /// 22's crawl, where the raw decoder writes the HTML pages, it
    /// takes 2.6x less CPU time than the word loop (810 profile samples against 2,100; bench/escape/run times the
    /// whole job). Without AVX2 (or with `vector` false, for the tests), the word loop of
    /// ``appendEscapedWords(_:validate:)``. Unvalidated, the bytes should be UTF-8 (every caller's are); if they are
    /// not, both paths copy the bytes >= 0x80 as they are and still escape every ASCII byte that needs it, so the
    /// string stays valid JSON.
    func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>, validate: Bool, vector: Bool = true) -> Bool {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return true }
        // Worst case every byte becomes `\u00XX`; the vector code may store 32 bytes past what it writes.
        reserve(bytes.count &* 6 &+ 32)
        // Under 32 bytes (keys, short values) the word loop: the vector code would work on a padded copy.
        if vector && bytes.count >= 32 {
            let written = respdecode_json_escape(source, bytes.count, end, validate ? 1 : 0)
            if written >= 0 {
                commit(written)
                return true
            }
            if written == -1 { return false }
        }
        return appendEscapedWords(bytes, validate: validate)
    }

    /// The escaper without vector instructions: eight or sixteen bytes at a time with 64-bit words.
    func appendEscapedWords(_ bytes: UnsafeBufferPointer<UInt8>, validate: Bool) -> Bool {
        guard !bytes.isEmpty else { return true }
        let mark = self.mark
        // Worst case every byte becomes `\u00XX`.
        reserve(bytes.count &* 6)
        var out = end
        let start = out
        var i = 0
        let n = bytes.count
        // While a run of bytes to escape or validate lasts (quotes, non-ASCII letters), the byte loop takes the rest
        // of the word it started in without testing the word again; the first plain byte ends the run. Without it,
        // each byte of a run paid three word tests: an entity expanding to 30 MB of quotes took 1.7 s of a debug
        // build's CPU (1.3x the release build's time now). A special byte amid plain ones keeps the word tests.
        var wordEnd = 0
        while i < n {
            // Sixteen, then eight, bytes at a time while none needs escaping or validation: the common case for
            // text bodies (it made raw passthrough 2.6x cheaper in instructions than the byte loop).
            let source = UnsafeRawPointer(bytes.baseAddress!)
            while i >= wordEnd && n - i >= 16 {
                let first = source.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                let second = source.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self)
                guard (specialBytes(first, validate) | specialBytes(second, validate)) & highBits == 0 else { break }
                UnsafeMutableRawPointer(out).storeBytes(of: first, as: UInt64.self)
                UnsafeMutableRawPointer(out + 8).storeBytes(of: second, as: UInt64.self)
                out += 16
                i += 16
            }
            while i >= wordEnd && n - i >= 8 {
                let word = source.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                let special = specialBytes(word, validate) & highBits
                UnsafeMutableRawPointer(out).storeBytes(of: word, as: UInt64.self)
                guard special == 0 else {
                    // The lowest flagged byte is a real one: keep the plain bytes before it, then handle it below
                    // -- and when it is the word's first byte (a run of special bytes), the rest of the word too.
                    let plain = special.trailingZeroBitCount / 8
                    if plain == 0 { wordEnd = i + 8 }
                    out += plain
                    i += plain
                    break
                }
                out += 8
                i += 8
            }
            guard i < n else { break }
            let c = bytes[i]
            if c >= 0x20 && c != 0x22 && c != 0x5C && c < 0x80 {
                out.pointee = c
                out += 1
                i += 1
                wordEnd = 0 // the run has ended: back to word tests
                continue
            }
            if c < 0x80 {
                out.pointee = UInt8(ascii: "\\")
                switch c {
                case 0x22:
                    out[1] = 0x22
                    out += 2
                case 0x5C:
                    out[1] = 0x5C
                    out += 2
                case 0x0A:
                    out[1] = UInt8(ascii: "n")
                    out += 2
                case 0x0D:
                    out[1] = UInt8(ascii: "r")
                    out += 2
                case 0x09:
                    out[1] = UInt8(ascii: "t")
                    out += 2
                case 0x08:
                    out[1] = UInt8(ascii: "b")
                    out += 2
                case 0x0C:
                    out[1] = UInt8(ascii: "f")
                    out += 2
                default:
                    out[1] = UInt8(ascii: "u")
                    out[2] = UInt8(ascii: "0")
                    out[3] = UInt8(ascii: "0")
                    out[4] = hexDigits[Int(c >> 4)]
                    out[5] = hexDigits[Int(c & 0xF)]
                    out += 6
                }
                i += 1
                continue
            }
            // Unvalidated, a word may have ended inside a sequence: its continuation bytes are copied one by one. A
            // lead byte takes only the continuation bytes after it, so that bytes that are not UTF-8 after all
            // (every caller's are) give what the vector path gives: a quote or control byte after a stray lead byte
            // is escaped, and a sequence cut by the end is copied as it is.
            var length: Int
            if validate {
                length = utf8SequenceLength(bytes, at: i)
            } else {
                let most = c < 0xC0 ? 1 : min(utf8LeadLength(c), n - i)
                length = 1
                while length < most && bytes[i + length] & 0xC0 == 0x80 { length += 1 }
            }
            guard length > 0, i + length <= n else {
                rollback(to: mark)
                return false
            }
            for k in 0..<length { out[k] = bytes[i + k] }
            out += length
            i += length
        }
        commit(start.distance(to: out))
        return true
    }
}

private let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

private let highBits: UInt64 = 0x8080_8080_8080_8080

/// Has the high bit of some byte set (`& highBits`) when any of the eight bytes is ≥ 0x80, < 0x20, `"` or `\`: the
/// SWAR "has a byte less than n" and "has a zero byte" tests of "Bit Twiddling Hacks", ORed so that one branch
/// decides. A borrow can only set a higher byte's bit when a lower byte really matched, so a word is never passed
/// wrongly; at worst a word falls back to the byte loop.
///
/// Without `validate`, the bytes are known to be valid UTF-8, so bytes ≥ 0x80 need nothing and are not flagged: text
/// in Cyrillic, Greek or CJK is then copied a word at a time too (escaping bench/text's 17.7 MB of Russian text took
/// about 80 ms of the text decoder's run before, 10 ms after).
@inline(__always) private func specialBytes(_ word: UInt64, _ validate: Bool) -> UInt64 {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let quotes = word ^ (ones &* 0x22)
    let backslashes = word ^ (ones &* 0x5C)
    let escaped =
        ((word &- ones &* 0x20) & ~word) | ((quotes &- ones) & ~quotes) | ((backslashes &- ones) & ~backslashes)
    return validate ? word | escaped : escaped
}

@inline(__always) private func utf8LeadLength(_ c: UInt8) -> Int {
    c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4
}

/// The length of the valid UTF-8 sequence starting at `i` (lead byte ≥ 0x80), or 0 if it is not valid.
func utf8SequenceLength(_ b: UnsafeBufferPointer<UInt8>, at i: Int) -> Int {
    let c = b[i]
    let n = b.count
    @inline(__always) func cont(_ k: Int) -> Bool { i + k < n && b[i + k] & 0xC0 == 0x80 }
    switch c {
    case 0xC2...0xDF:
        return cont(1) ? 2 : 0
    case 0xE0:
        return i + 1 < n && b[i + 1] >= 0xA0 && b[i + 1] <= 0xBF && cont(2) ? 3 : 0
    case 0xED:
        return i + 1 < n && b[i + 1] >= 0x80 && b[i + 1] <= 0x9F && cont(2) ? 3 : 0
    case 0xE1...0xEC, 0xEE...0xEF:
        return cont(1) && cont(2) ? 3 : 0
    case 0xF0:
        return i + 1 < n && b[i + 1] >= 0x90 && b[i + 1] <= 0xBF && cont(2) && cont(3) ? 4 : 0
    case 0xF1...0xF3:
        return cont(1) && cont(2) && cont(3) ? 4 : 0
    case 0xF4:
        return i + 1 < n && b[i + 1] >= 0x80 && b[i + 1] <= 0x8F && cont(2) && cont(3) ? 4 : 0
    default:
        return 0
    }
}
