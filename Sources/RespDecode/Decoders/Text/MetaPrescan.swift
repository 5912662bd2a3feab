/// HTML's "prescan a byte stream to determine its encoding"
/// (https://html.spec.whatwg.org/multipage/parsing.html#prescan-a-byte-stream-to-determine-its-encoding): the encoding
/// a `<meta charset>` or `<meta http-equiv="Content-Type" content="…;charset=…">` declares (docs/decoding.md#text).
enum MetaPrescan {
    /// How many bytes are scanned. The spec suggests the first 1024 for the prescan, but a browser's parser that meets
    /// a `<meta>` further on while its encoding is still tentative (detected or default) changes the encoding and
    /// reparses the page (https://html.spec.whatwg.org/multipage/parsing.html#changing-the-encoding-while-parsing);
    /// html5lib's encoding tests expect that for a `<meta>` after 8 KiB of comments and scripts. One scan of the first
    /// 64 KiB gives both: the same first `<meta>` as a 1024-byte prescan when there is one there.
    static let maxBytes = 64 * 1024

    /// The declared encoding, after the spec's rewriting (UTF-16BE/LE → UTF-8, x-user-defined → windows-1252); nil
    /// when the prescan finds none.
    static func encoding(in body: UnsafeBufferPointer<UInt8>) -> WebEncoding? {
        var scanner = Scanner(bytes: UnsafeBufferPointer(rebasing: body.prefix(maxBytes)))
        return scanner.run()
    }

    private struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        /// Running past the end of the bytes inside an attribute ends the prescan with no result.
        struct EndOfInput: Error {}

        static func isSpace(_ byte: UInt8) -> Bool {
            byte == 0x09 || byte == 0x0A || byte == 0x0C || byte == 0x0D || byte == 0x20
        }

        static func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A }

        static func lowered(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }

        func byte(at offset: Int) -> UInt8? { offset < bytes.count ? bytes[offset] : nil }

        /// Whether the bytes at `position` start with `ascii` (lower case), ignoring ASCII case.
        func matches(_ ascii: StaticString) -> Bool {
            guard position + ascii.utf8CodeUnitCount <= bytes.count else { return false }
            let pattern = UnsafeBufferPointer(start: ascii.utf8Start, count: ascii.utf8CodeUnitCount)
            for (k, expected) in pattern.enumerated() where Self.lowered(bytes[position + k]) != expected {
                return false
            }
            return true
        }

        /// Moves `position` to the first byte at or after `from` that `stop` accepts; false at the end of the bytes.
        mutating func advance(from: Int, to stop: (UInt8) -> Bool) -> Bool {
            position = from
            while position < bytes.count {
                if stop(bytes[position]) { return true }
                position += 1
            }
            return false
        }

        mutating func run() -> WebEncoding? {
            while position < bytes.count {
                if matches("<!--") {
                    // The first `>` preceded by two dashes, after the `<` (so `<!-->` ends at once).
                    var end = position + 2
                    while end < bytes.count && !(bytes[end] == 0x3E && bytes[end - 1] == 0x2D && bytes[end - 2] == 0x2D)
                    {
                        end += 1
                    }
                    guard end < bytes.count else { return nil }
                    position = end
                } else if matches("<meta"), let next = byte(at: position + 5), Self.isSpace(next) || next == 0x2F {
                    position += 5
                    do {
                        if let encoding = try meta() { return encoding }
                    } catch {
                        return nil
                    }
                } else if bytes[position] == 0x3C,
                    let next = byte(at: position + 1),
                    Self.isLetter(next) || (next == 0x2F && byte(at: position + 2).map(Self.isLetter) == true)
                {
                    guard advance(from: position + 1, to: { Self.isSpace($0) || $0 == 0x3E }) else { return nil }
                    do {
                        while try attribute() != nil {}
                    } catch {
                        return nil
                    }
                } else if matches("<!") || matches("</") || matches("<?") {
                    guard advance(from: position + 1, to: { $0 == 0x3E }) else { return nil }
                }
                position += 1
            }
            return nil
        }

        /// The attributes of a `<meta` and what they declare; `position` is on the byte after `<meta`.
        mutating func meta() throws(EndOfInput) -> WebEncoding? {
            // A set: 64 KiB of distinct attributes on one <meta> is 13,000 names, a quadratic cost in a list.
            var seen: Set<[UInt8]> = []
            var gotPragma = false
            var needPragma: Bool?
            var charset: WebEncoding?
            while let (name, value) = try attribute() {
                guard seen.insert(name).inserted else { continue }
                switch name {
                case Array("http-equiv".utf8):
                    if value == Array("content-type".utf8) { gotPragma = true }
                case Array("content".utf8):
                    if charset == nil, let found = Self.encodingFromContent(value) {
                        charset = found
                        needPragma = true
                    }
                case Array("charset".utf8):
                    charset = WebEncoding(label: String(decoding: value, as: UTF8.self))
                    needPragma = false
                default:
                    break
                }
            }
            guard let needPragma, !(needPragma && !gotPragma), let charset else { return nil }
            switch charset {
            case .utf16BE, .utf16LE: return .utf8
            case .xUserDefined: return .windows1252
            default: return charset
            }
        }

        /// "Get an attribute": its name and value (lower-cased ASCII), or nil when the tag ends.
        mutating func attribute() throws(EndOfInput) -> (name: [UInt8], value: [UInt8])? {
            func current() throws(EndOfInput) -> UInt8 {
                guard position < bytes.count else { throw EndOfInput() }
                return bytes[position]
            }
            while true {
                let c = try current()
                guard Self.isSpace(c) || c == 0x2F else { break }
                position += 1
            }
            if try current() == 0x3E { return nil }
            var name: [UInt8] = []
            // The name.
            nameLoop: while true {
                let c = try current()
                switch c {
                case 0x3D where !name.isEmpty:
                    position += 1
                    return try attributeValue(name: name)
                case 0x09, 0x0A, 0x0C, 0x0D, 0x20:
                    break nameLoop
                case 0x2F, 0x3E:
                    return (name, [])
                default:
                    name.append(Self.lowered(c))
                }
                position += 1
            }
            // Spaces, then `=` or the end of a valueless attribute.
            while Self.isSpace(try current()) { position += 1 }
            guard try current() == 0x3D else { return (name, []) }
            position += 1
            return try attributeValue(name: name)
        }

        /// The value after `=`.
        mutating func attributeValue(name: [UInt8]) throws(EndOfInput) -> (name: [UInt8], value: [UInt8]) {
            func current() throws(EndOfInput) -> UInt8 {
                guard position < bytes.count else { throw EndOfInput() }
                return bytes[position]
            }
            var value: [UInt8] = []
            while Self.isSpace(try current()) { position += 1 }
            let first = try current()
            if first == 0x22 || first == 0x27 {
                while true {
                    position += 1
                    let c = try current()
                    if c == first {
                        position += 1
                        return (name, value)
                    }
                    value.append(Self.lowered(c))
                }
            }
            if first == 0x3E { return (name, value) }
            value.append(Self.lowered(first))
            position += 1
            while true {
                let c = try current()
                if Self.isSpace(c) || c == 0x3E { return (name, value) }
                value.append(Self.lowered(c))
                position += 1
            }
        }

        /// "Extracting a character encoding from a meta element"
        /// (https://html.spec.whatwg.org/multipage/urls-and-fetching.html#algorithm-for-extracting-a-character-encoding-from-a-meta-element),
        /// on a lower-cased `content` value.
        static func encodingFromContent(_ s: [UInt8]) -> WebEncoding? {
            let word = Array("charset".utf8)
            var position = 0
            while true {
                // The next "charset".
                guard position + word.count <= s.count else { return nil }
                var found: Int?
                var k = position
                while k + word.count <= s.count {
                    if s[k..<(k + word.count)].elementsEqual(word) {
                        found = k
                        break
                    }
                    k += 1
                }
                guard let start = found else { return nil }
                position = start + word.count
                while position < s.count && isSpace(s[position]) { position += 1 }
                guard position < s.count, s[position] == 0x3D else { continue }
                position += 1
                while position < s.count && isSpace(s[position]) { position += 1 }
                guard position < s.count else { return nil }
                let c = s[position]
                if c == 0x22 || c == 0x27 {
                    guard let close = s[(position + 1)...].firstIndex(of: c) else { return nil }
                    return WebEncoding(label: String(decoding: s[(position + 1)..<close], as: UTF8.self))
                }
                var end = position
                while end < s.count && !isSpace(s[end]) && s[end] != 0x3B { end += 1 }
                return WebEncoding(label: String(decoding: s[position..<end], as: UTF8.self))
            }
        }
    }
}

/// An XML declaration's `encoding` (https://www.w3.org/TR/xml/#NT-EncodingDecl) at the start of a body, read as ASCII:
/// the label, or nil when there is no declaration or it names no encoding (docs/decoding.md#text).
enum XMLDeclaration {
    /// A declaration longer than this is not looked for further.
    static let maxBytes = 1024

    static func encodingLabel(in body: UnsafeBufferPointer<UInt8>) -> String? {
        let head = UnsafeBufferPointer(rebasing: body.prefix(maxBytes))
        let open = Array("<?xml".utf8)
        guard head.count > open.count, head.prefix(open.count).elementsEqual(open),
            MetaPrescanSpaces.isSpace(head[open.count])
        else { return nil }
        // The declaration ends at the first `?>`.
        var end = open.count
        while end + 1 < head.count && !(head[end] == 0x3F && head[end + 1] == 0x3E) { end += 1 }
        guard end + 1 < head.count else { return nil }
        let declaration = UnsafeBufferPointer(rebasing: head[open.count..<end])
        let word = Array("encoding".utf8)
        var i = 0
        while i + word.count <= declaration.count {
            guard declaration[i..<(i + word.count)].elementsEqual(word) else {
                i += 1
                continue
            }
            var k = i + word.count
            while k < declaration.count && MetaPrescanSpaces.isSpace(declaration[k]) { k += 1 }
            guard k < declaration.count, declaration[k] == 0x3D else { return nil }
            k += 1
            while k < declaration.count && MetaPrescanSpaces.isSpace(declaration[k]) { k += 1 }
            guard k < declaration.count, declaration[k] == 0x22 || declaration[k] == 0x27 else { return nil }
            let quote = declaration[k]
            guard let close = declaration[(k + 1)...].firstIndex(of: quote) else { return nil }
            return String(decoding: declaration[(k + 1)..<close], as: UTF8.self)
        }
        return nil
    }
}

private enum MetaPrescanSpaces {
    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x09 || byte == 0x0A || byte == 0x0D || byte == 0x20
    }
}
