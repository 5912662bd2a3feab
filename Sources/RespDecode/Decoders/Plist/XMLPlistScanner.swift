import Glibc

/// A scanner for the plain XML property lists that make up nearly all of them — UTF-8, an optional XML declaration
/// and `<!DOCTYPE plist …>`, plist elements only, text with the five predefined entities and character references —
/// that sends the same events to an ``XMLEventSink`` as libxml2 would, and gives up (``Outcome/notInSubset``) on
/// anything else, before sending the event that thing would affect: the caller then parses the body with libxml2
/// from the start (docs/decoding.md#xml-property-lists).
///
/// Own code because libxml2 2.9 is measured to cost here: a 1.4 KB XML plist took about 150,000 instructions in
/// libxml2 alone (a parser context per document, a copied input buffer, and a call to the buffer's read callback on
/// every lookahead within 250 bytes of its end), twice libplist's whole time per document (bench/small/run); libxml2
/// 2.9's static input buffers, which would avoid the copies, mis-parse bodies once the parser shrinks its input.
///
/// What the scanner takes, everything else goes to libxml2 (which then also reports every error):
/// - no byte order mark, no `charset` parameter; an XML declaration with version 1.0, an optional encoding `UTF-8`
///   (any case) and an optional standalone, each quoted and spaced as XML allows;
/// - comments before and after the root and between elements (libxml2 sends no event for them); no processing
///   instructions and no CDATA sections;
/// - a document type declaration named `plist` with an external identifier of printable ASCII and no internal subset
///   (libxml2 neither reads nor reports it: no DTD is ever loaded);
/// - the eleven plist element names without a prefix, attributes of ASCII letters, digits, `-`, `_` and `.` whose
///   values are printable ASCII without `<` and `&` (the plist reader reads no attribute), at most 16 per tag;
/// - text of valid UTF-8 XML characters without carriage returns (which XML turns into line feeds) and without `]]>`;
///   `&lt;`, `&gt;`, `&amp;`, `&apos;`, `&quot;` and character references of XML characters.
enum XMLPlistScanner {
    enum Outcome {
        /// The document is well-formed and every event was delivered.
        case parsed
        /// The sink returned `false`; the events before were exactly libxml2's.
        case stoppedBySink
        /// Something outside the subset: the sink may have had events, the caller starts over with libxml2.
        case notInSubset
    }

    /// Most nested elements the scanner follows (deeper documents go to libxml2, which the plist reader bounds).
    static let maxDepth = 256

    static func scan(_ body: UnsafeBufferPointer<UInt8>, sink: XMLEventSink) -> Outcome {
        guard let base = body.baseAddress, !body.isEmpty else { return .notInSubset }
        return plainTextTable.withUnsafeBufferPointer { table in
            var scanner = Scanner(p: base, end: base + body.count, sink: sink, plainText: table.baseAddress!)
            return scanner.document()
        }
    }

    /// The predefined entities' names (with the `;`) and characters.
    private static let predefinedEntities: [(StaticString, UInt8)] = [
        ("lt;", UInt8(ascii: "<")), ("gt;", UInt8(ascii: ">")), ("amp;", UInt8(ascii: "&")),
        ("apos;", UInt8(ascii: "'")), ("quot;", UInt8(ascii: "\"")),
    ]

    /// The plist element names, NUL-terminated (the plist reader reads the name as a C string).
    private static let names: [StaticString] = [
        "plist", "dict", "array", "key", "string", "integer", "real", "date", "data", "true", "false",
    ]

    private struct Scanner {
        var p: UnsafePointer<UInt8>
        let end: UnsafePointer<UInt8>
        let sink: XMLEventSink
        /// `plainTextTable`, for the duration of the scan.
        let plainText: UnsafePointer<Bool>
        /// Indices into `names` of the open elements.
        var open: [Int] = []

        init(p: UnsafePointer<UInt8>, end: UnsafePointer<UInt8>, sink: XMLEventSink, plainText: UnsafePointer<Bool>) {
            self.p = p
            self.end = end
            self.sink = sink
            self.plainText = plainText
            open.reserveCapacity(16)
        }

        // MARK: the document

        mutating func document() -> Outcome {
            if starts(with: "<?xml") {
                guard xmlDeclaration() else { return .notInSubset }
            }
            var sawDoctype = false
            while true {
                skipSpace()
                if starts(with: "<!--") {
                    guard comment() else { return .notInSubset }
                } else if starts(with: "<!DOCTYPE") && !sawDoctype {
                    guard doctype() else { return .notInSubset }
                    sawDoctype = true
                } else {
                    break
                }
            }
            guard p < end, p.pointee == UInt8(ascii: "<") else { return .notInSubset }
            switch content() {
            case .parsed: break
            case let other: return other
            }
            // After the root: white space and comments only.
            while true {
                skipSpace()
                if p == end { return .parsed }
                guard starts(with: "<!--"), comment() else { return .notInSubset }
            }
        }

        /// From the root's start tag to its end tag.
        mutating func content() -> Outcome {
            while true {
                // At `<`.
                p += 1
                guard p < end else { return .notInSubset }
                if p.pointee == UInt8(ascii: "/") {
                    p += 1
                    guard let index = name(), let top = open.last, top == index else { return .notInSubset }
                    skipSpace()
                    guard p < end, p.pointee == UInt8(ascii: ">") else { return .notInSubset }
                    p += 1
                    open.removeLast()
                    if !sink.endElement() { return .stoppedBySink }
                    if open.isEmpty { return .parsed }
                } else if p.pointee == UInt8(ascii: "!") {
                    p -= 1
                    guard starts(with: "<!--"), comment() else { return .notInSubset }
                } else {
                    guard let index = name(), open.count < XMLPlistScanner.maxDepth, let empty = attributes() else {
                        return .notInSubset
                    }
                    open.append(index)
                    if !sink.startElement(XMLElementStart(localName: XMLPlistScanner.names[index].utf8Start)) {
                        return .stoppedBySink
                    }
                    if empty {
                        open.removeLast()
                        if !sink.endElement() { return .stoppedBySink }
                        if open.isEmpty { return .parsed }
                    }
                }
                // Text up to the next tag.
                switch text() {
                case .parsed: break
                case let other: return other
                }
            }
        }

        /// Character data up to the next `<` (where it stops), sent to the sink in pieces (references resolved).
        mutating func text() -> Outcome {
            var start = p
            while p < end {
                // Printable ASCII other than `<`, `&` and `]`, tab and line feed: nothing to look at.
                while p < end && plainText[Int(p.pointee)] { p += 1 }
                guard p < end else { break }
                let byte = p.pointee
                if byte >= 0x20 && byte < 0x80 {
                    if byte == UInt8(ascii: "<") {
                        return flush(start) ? .parsed : .stoppedBySink
                    }
                    if byte == UInt8(ascii: "&") {
                        guard flush(start) else { return .stoppedBySink }
                        guard let outcome = reference() else { return .notInSubset }
                        if !outcome { return .stoppedBySink }
                        start = p
                        continue
                    }
                    if byte == UInt8(ascii: "]") && end - p >= 3 && p[1] == UInt8(ascii: "]")
                        && p[2] == UInt8(ascii: ">")
                    {
                        return .notInSubset
                    }
                    p += 1
                } else if byte == 0x09 || byte == 0x0A {
                    p += 1
                } else if byte >= 0x80 {
                    guard let length = utf8Character() else { return .notInSubset }
                    p += length
                } else {
                    return .notInSubset // controls and carriage returns
                }
            }
            return .notInSubset // the input ends inside the root
        }

        /// Sends `start ..< p` to the sink, if not empty.
        mutating func flush(_ start: UnsafePointer<UInt8>) -> Bool {
            guard p > start else { return true }
            return sink.characters(UnsafeBufferPointer(start: start, count: p - start))
        }

        /// At `&`: a predefined entity or a character reference, sent to the sink; nil outside the subset, else
        /// what the sink said.
        mutating func reference() -> Bool? {
            p += 1
            var value: UInt32
            if p < end && p.pointee == UInt8(ascii: "#") {
                p += 1
                let hex = p < end && p.pointee == UInt8(ascii: "x")
                if hex { p += 1 }
                value = 0
                var digits = 0
                while p < end, let digit = digitValue(p.pointee, hex: hex) {
                    value = value &* (hex ? 16 : 10) &+ digit
                    digits += 1
                    guard digits <= 8 else { return nil }
                    p += 1
                }
                guard digits > 0, p < end, p.pointee == UInt8(ascii: ";") else { return nil }
                p += 1
                let isChar =
                    value == 0x9 || value == 0xA || value == 0xD || (value >= 0x20 && value <= 0xD7FF)
                    || (value >= 0xE000 && value <= 0xFFFD) || (value >= 0x10000 && value <= 0x10FFFF)
                guard isChar else { return nil }
            } else {
                guard let match = XMLPlistScanner.predefinedEntities.first(where: { starts(with: $0.0) }) else {
                    return nil
                }
                p += match.0.utf8CodeUnitCount
                value = UInt32(match.1)
            }
            var utf8: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
            let count = withUnsafeMutableBytes(of: &utf8) { bytes -> Int in
                var k = 0
                for unit in UTF8.encode(Unicode.Scalar(value)!)! {
                    bytes[k] = unit
                    k += 1
                }
                return k
            }
            return withUnsafeBytes(of: &utf8) {
                sink.characters(UnsafeBufferPointer(start: $0.bindMemory(to: UInt8.self).baseAddress, count: count))
            }
        }

        // MARK: markup

        /// A plist element name followed by white space, `>` or `/`: its index in `names`.
        mutating func name() -> Int? {
            // The name packed into a word (names are at most 7 letters), compared with the packed names.
            var word: UInt64 = 0
            var length = 0
            while p < end && isLetter(p.pointee) {
                guard length < 7 else { return nil }
                word |= UInt64(p.pointee) << (8 * UInt64(length))
                length += 1
                p += 1
            }
            guard p < end else { return nil }
            let next = p.pointee
            guard next == 0x20 || next == 0x09 || next == 0x0A || next == UInt8(ascii: ">") || next == UInt8(ascii: "/")
            else { return nil }
            // The index in `names` (the words are the names' bytes, the first lowest: "key" is 0x79656B).
            switch word {
            case 0x74_7369_6C70: return 0 // plist
            case 0x7463_6964: return 1 // dict
            case 0x79_6172_7261: return 2 // array
            case 0x79_656B: return 3 // key
            case 0x676E_6972_7473: return 4 // string
            case 0x72_6567_6574_6E69: return 5 // integer
            case 0x6C61_6572: return 6 // real
            case 0x6574_6164: return 7 // date
            case 0x6174_6164: return 8 // data
            case 0x6575_7274: return 9 // true
            case 0x65_736C_6166: return 10 // false
            default: return nil
            }
        }

        /// After a start tag's name: its attributes (checked, not kept) and `>` or `/>`; whether the element is empty.
        mutating func attributes() -> Bool? {
            var seen: [(UnsafePointer<UInt8>, Int)] = []
            while true {
                let spaced = skipSpace()
                guard p < end else { return nil }
                if p.pointee == UInt8(ascii: ">") {
                    p += 1
                    return false
                }
                if p.pointee == UInt8(ascii: "/") {
                    guard end - p >= 2, p[1] == UInt8(ascii: ">") else { return nil }
                    p += 2
                    return true
                }
                guard spaced, seen.count < 16, p.pointee | 0x20 >= 0x61 && p.pointee | 0x20 <= 0x7A else { return nil }
                let start = p
                while p < end
                    && (isLetter(p.pointee) || isDigit(p.pointee) || p.pointee == UInt8(ascii: "-")
                        || p.pointee == UInt8(ascii: "_") || p.pointee == UInt8(ascii: "."))
                {
                    p += 1
                }
                let length = p - start
                // `xmlns` declares a namespace: libxml2's business.
                guard !(length >= 5 && memcmp(start, "xmlns", 5) == 0) else { return nil }
                for (other, otherLength) in seen where otherLength == length && memcmp(other, start, length) == 0 {
                    return nil
                }
                seen.append((start, length))
                skipSpace()
                guard p < end, p.pointee == UInt8(ascii: "=") else { return nil }
                p += 1
                skipSpace()
                let value = quoted(allowing: { isPrintable($0) && $0 != UInt8(ascii: "<") && $0 != UInt8(ascii: "&") })
                guard value != nil else { return nil }
            }
        }

        /// `<?xml version="1.0" [encoding="UTF-8"] [standalone="yes|no"] ?>`.
        mutating func xmlDeclaration() -> Bool {
            p += 5
            guard skipSpace(), take("version"), equals(), let version = quoted(allowing: isPrintable),
                version.count == 3, memcmp(version.baseAddress!, "1.0", 3) == 0
            else { return false }
            var spaced = skipSpace()
            if spaced && take("encoding") {
                guard equals(), let encoding = quoted(allowing: isPrintable), encoding.count == 5,
                    encoding.elementsEqual("utf-8".utf8, by: { $0 | 0x20 == $1 | 0x20 })
                else { return false }
                spaced = skipSpace()
            }
            if spaced && take("standalone") {
                guard equals(), let value = quoted(allowing: isPrintable),
                    value.elementsEqual("yes".utf8) || value.elementsEqual("no".utf8)
                else { return false }
                skipSpace()
            }
            return take("?>")
        }

        /// `<!DOCTYPE plist PUBLIC "pubid" "system">`, `<!DOCTYPE plist SYSTEM "system">` or `<!DOCTYPE plist>`.
        mutating func doctype() -> Bool {
            p += 9
            guard skipSpace(), take("plist") else { return false }
            var spaced = skipSpace()
            if spaced && take("PUBLIC") {
                guard skipSpace(), quoted(allowing: isPublicIDCharacter) != nil else { return false }
                guard skipSpace(), quoted(allowing: { isPrintable($0) && $0 != UInt8(ascii: "#") }) != nil else {
                    return false
                }
                spaced = skipSpace()
            } else if spaced && take("SYSTEM") {
                guard skipSpace(), quoted(allowing: { isPrintable($0) && $0 != UInt8(ascii: "#") }) != nil else {
                    return false
                }
                spaced = skipSpace()
            }
            return take(">")
        }

        /// `<!-- … -->` with XML's rules: no `--` inside, valid characters.
        mutating func comment() -> Bool {
            p += 4
            while p < end {
                let byte = p.pointee
                if byte == UInt8(ascii: "-") && end - p >= 2 && p[1] == UInt8(ascii: "-") {
                    guard end - p >= 3, p[2] == UInt8(ascii: ">") else { return false }
                    p += 3
                    return true
                }
                if byte >= 0x20 && byte < 0x80 || byte == 0x09 || byte == 0x0A {
                    p += 1
                } else if byte >= 0x80, let length = utf8Character() {
                    p += length
                } else {
                    return false
                }
            }
            return false
        }

        // MARK: pieces

        /// A quoted value whose bytes all pass `allowed`; its bytes (without the quotes).
        mutating func quoted(allowing allowed: (UInt8) -> Bool) -> UnsafeBufferPointer<UInt8>? {
            guard p < end, p.pointee == UInt8(ascii: "\"") || p.pointee == UInt8(ascii: "'") else { return nil }
            let quote = p.pointee
            p += 1
            let start = p
            while p < end && p.pointee != quote {
                guard allowed(p.pointee) else { return nil }
                p += 1
            }
            guard p < end else { return nil }
            let value = UnsafeBufferPointer(start: start, count: p - start)
            p += 1
            return value
        }

        /// `S? = S?`.
        mutating func equals() -> Bool {
            skipSpace()
            guard p < end, p.pointee == UInt8(ascii: "=") else { return false }
            p += 1
            skipSpace()
            return true
        }

        /// Skips XML white space other than carriage returns (line ends are normalised: libxml2's business);
        /// whether there was any.
        @discardableResult
        mutating func skipSpace() -> Bool {
            let start = p
            while p < end && (p.pointee == 0x20 || p.pointee == 0x0A || p.pointee == 0x09) { p += 1 }
            return p > start
        }

        func starts(with prefix: StaticString) -> Bool {
            let length = prefix.utf8CodeUnitCount
            return end - p >= length && memcmp(p, prefix.utf8Start, length) == 0
        }

        mutating func take(_ prefix: StaticString) -> Bool {
            guard starts(with: prefix) else { return false }
            p += prefix.utf8CodeUnitCount
            return true
        }

        /// The length of the UTF-8 character at `p` (a lead byte ≥ 0x80), if it is a valid XML character: well
        /// formed (no overlong forms, no surrogates, at most U+10FFFF) and not U+FFFE or U+FFFF.
        func utf8Character() -> Int? {
            let b0 = p.pointee
            let available = end - p
            func continuation(_ i: Int) -> Bool { p[i] & 0xC0 == 0x80 }
            switch b0 {
            case 0xC2...0xDF:
                return available >= 2 && continuation(1) ? 2 : nil
            case 0xE0...0xEF:
                guard available >= 3, continuation(1), continuation(2) else { return nil }
                if b0 == 0xE0 && p[1] < 0xA0 { return nil } // overlong
                if b0 == 0xED && p[1] >= 0xA0 { return nil } // surrogate
                if b0 == 0xEF && p[1] == 0xBF && (p[2] == 0xBE || p[2] == 0xBF) { return nil } // U+FFFE, U+FFFF
                return 3
            case 0xF0...0xF4:
                guard available >= 4, continuation(1), continuation(2), continuation(3) else { return nil }
                if b0 == 0xF0 && p[1] < 0x90 { return nil } // overlong
                if b0 == 0xF4 && p[1] >= 0x90 { return nil } // past U+10FFFF
                return 4
            default:
                return nil
            }
        }
    }
}

@inline(__always) private func isLetter(_ byte: UInt8) -> Bool { byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A }
@inline(__always) private func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
@inline(__always) private func isPrintable(_ byte: UInt8) -> Bool { byte >= 0x20 && byte < 0x7F }

/// XML's PubidChar, without the carriage return and line feed.
private func isPublicIDCharacter(_ byte: UInt8) -> Bool {
    if isLetter(byte) || isDigit(byte) { return true }
    switch byte {
    case 0x20, UInt8(ascii: "-"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"), UInt8(ascii: "+"),
        UInt8(ascii: ","), UInt8(ascii: "."), UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "="),
        UInt8(ascii: "?"), UInt8(ascii: ";"), UInt8(ascii: "!"), UInt8(ascii: "*"), UInt8(ascii: "#"),
        UInt8(ascii: "@"), UInt8(ascii: "$"), UInt8(ascii: "_"), UInt8(ascii: "%"):
        return true
    default:
        return false
    }
}

@inline(__always) private func digitValue(_ byte: UInt8, hex: Bool) -> UInt32? {
    if isDigit(byte) { return UInt32(byte - 0x30) }
    if hex, byte | 0x20 >= 0x61, byte | 0x20 <= 0x66 { return UInt32(byte | 0x20) - 0x61 + 10 }
    return nil
}

/// Bytes that need no look in text: printable ASCII but `<`, `&` and `]`, and tab and line feed.
private let plainTextTable: [Bool] = (0..<256).map { byte in
    (byte >= 0x20 && byte < 0x80 && byte != 0x3C && byte != 0x26 && byte != 0x5D) || byte == 0x09 || byte == 0x0A
}
