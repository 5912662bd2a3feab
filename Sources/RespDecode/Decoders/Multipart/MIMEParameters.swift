/// A MIME header value with parameters: `Content-Type` (RFC 2045 §5.1, RFC 9110 §8.3.1) and `Content-Disposition`
/// (RFC 6266, RFC 7578 §4.2), read as docs/decoding.md#multipart-headers says.
///
/// Unlike ``MediaType/parameter(_:ofContentType:)``, which splits at every `;`, a quoted string may hold `;`, `=`
/// and backslash escapes (`boundary="a;b=c"`, `filename="a \"b\".txt"`), and `NAME*=` parameters are RFC 8187
/// extended values (`filename*=UTF-8''n%C3%A4me.txt`).
struct MIMEParameters {
    /// The value before the first `;`, trimmed and lower-cased (`multipart/form-data`, `form-data`).
    var value: String
    /// The parameters in order, names lower-cased, values unquoted; an extended `NAME*` value decoded under `NAME`
    /// (it takes precedence over a plain `NAME`, RFC 6266 §4.3).
    var parameters: [(name: String, value: String)] = []

    init(_ text: String) {
        var bytes = Array(text.utf8)[...]
        let semicolon = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
        value = String(decoding: Self.trimmed(bytes[..<semicolon]).map(asciiLower), as: UTF8.self)
        bytes = bytes[semicolon...]
        var extended: [(name: String, value: String)] = []
        while !bytes.isEmpty {
            // Past `;` and white space: NAME [= VALUE]
            while let first = bytes.first, first == UInt8(ascii: ";") || Self.isSpace(first) { bytes.removeFirst() }
            guard !bytes.isEmpty else { break }
            let nameEnd =
                bytes.firstIndex { $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: ";") } ?? bytes.endIndex
            let name = String(decoding: Self.trimmed(bytes[..<nameEnd]).map(asciiLower), as: UTF8.self)
            bytes = bytes[nameEnd...]
            guard bytes.first == UInt8(ascii: "=") else { continue } // a name without a value: ignored
            bytes.removeFirst()
            while let first = bytes.first, Self.isSpace(first) { bytes.removeFirst() }
            var valueBytes: [UInt8] = []
            if bytes.first == UInt8(ascii: "\"") {
                // quoted-string: `\` escapes the next byte when it is a tspecial (RFC 2045 §5.1: `\"`, `\\`), and
                // is itself otherwise, as Go's mime package reads it: browsers send a Windows path's backslashes
                // unescaped (`filename="C:\files\a.dat"`). An unclosed quote runs to the end.
                bytes.removeFirst()
                while let byte = bytes.first {
                    bytes.removeFirst()
                    if byte == UInt8(ascii: "\"") { break }
                    if byte == UInt8(ascii: "\\"), let next = bytes.first, Self.isTSpecial(next) {
                        valueBytes.append(next)
                        bytes.removeFirst()
                    } else {
                        valueBytes.append(byte)
                    }
                }
            } else {
                let end = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
                valueBytes = Array(Self.trimmed(bytes[..<end]))
                bytes = bytes[end...]
            }
            guard !name.isEmpty else { continue }
            if name.utf8.last == UInt8(ascii: "*") {
                if let decoded = Self.extendedValue(valueBytes) { extended.append((String(name.dropLast()), decoded)) }
            } else {
                parameters.append((name, String(decoding: valueBytes, as: UTF8.self)))
            }
        }
        for (name, decoded) in extended {
            if let i = parameters.firstIndex(where: { $0.name == name }) {
                parameters[i].value = decoded
            } else {
                parameters.append((name, decoded))
            }
        }
    }

    /// The first parameter called `name` (lower case), if any.
    subscript(_ name: String) -> String? {
        parameters.first { $0.name == name }?.value
    }

    /// An RFC 8187 ext-value, `charset'language'percent-encoded`, for the charsets it requires (UTF-8, ISO-8859-1);
    /// nil for any other charset or a malformed value.
    static func extendedValue(_ bytes: [UInt8]) -> String? {
        guard let first = bytes.firstIndex(of: UInt8(ascii: "'")),
            let second = bytes[(first + 1)...].firstIndex(of: UInt8(ascii: "'"))
        else { return nil }
        let charset = String(decoding: bytes[..<first].map(asciiLower), as: UTF8.self)
        var raw: [UInt8] = []
        var i = second + 1
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "%") {
                guard i + 2 < bytes.count, let high = bytes[i + 1].hexDigitValue, let low = bytes[i + 2].hexDigitValue
                else {
                    return nil
                }
                raw.append(high << 4 | low)
                i += 3
            } else {
                raw.append(bytes[i])
                i += 1
            }
        }
        switch charset {
        case "utf-8": return String(validating: raw, as: UTF8.self)
        case "iso-8859-1": return String(decoding: raw.flatMap(latin1ToUTF8), as: UTF8.self)
        default: return nil
        }
    }

    private static func latin1ToUTF8(_ byte: UInt8) -> [UInt8] {
        byte < 0x80 ? [byte] : [0xC0 | byte >> 6, 0x80 | byte & 0x3F]
    }

    /// RFC 2045's tspecials.
    static func isTSpecial(_ byte: UInt8) -> Bool {
        "()<>@,;:\\\"/[]?=".utf8.contains(byte)
    }

    @inline(__always) static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A
    }

    static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        var s = bytes
        while let first = s.first, isSpace(first) { s.removeFirst() }
        while let last = s.last, isSpace(last) { s.removeLast() }
        return s
    }
}

/// A byteranges part's `Content-Range` (RFC 9110 §14.4): `bytes FIRST-LAST/COMPLETE` or `bytes */COMPLETE`, the
/// complete length `*` when unknown. White space around the parts is allowed (Mozilla's test writes two spaces).
struct ContentRange: Equatable {
    var start: Int64?
    var end: Int64?
    var length: Int64?

    init?(_ text: String) {
        var rest = Substring(text).drop { $0 == " " || $0 == "\t" }
        guard rest.lowercased().hasPrefix("bytes") else { return nil }
        rest = rest.dropFirst(5).drop { $0 == " " || $0 == "\t" }
        let pieces = rest.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard pieces.count == 2 else { return nil }
        let range = pieces[0].trimmingOWS()
        let complete = pieces[1].trimmingOWS()
        if complete != "*" {
            guard let length = Self.number(complete) else { return nil }
            self.length = length
        }
        if range == "*" {
            guard length != nil else { return nil }
            return
        }
        let bounds = range.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false)
        guard bounds.count == 2, let start = Self.number(bounds[0].trimmingOWS()),
            let end = Self.number(bounds[1].trimmingOWS()), start <= end
        else { return nil }
        self.start = start
        self.end = end
    }

    private static func number(_ text: Substring) -> Int64? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return nil
        }
        return Int64(text)
    }
}
