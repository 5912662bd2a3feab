/// The MIME type of a response: the `Content-Type` value without parameters, trimmed and lower-cased
/// (docs/decoding.md#mime-type).
///
/// Unlike Foundation on Linux (which keeps surrounding spaces, so `application/json ; charset=utf-8` fails an exact
/// match), white space around the type is removed.
public enum MediaType {
    /// The MIME type of a `Content-Type` field value, or `nil` when the value holds no type at all.
    public static func mimeType(ofContentType value: String) -> String? {
        let type = value[..<(value.utf8.firstIndex(of: UInt8(ascii: ";")) ?? value.endIndex)]
        let trimmed = type.trimmingOWS()
        if trimmed.isEmpty { return nil }
        let hasUpper = trimmed.utf8.contains { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }
        return hasUpper ? String(decoding: trimmed.utf8.map(asciiLower), as: UTF8.self) : String(trimmed)
    }

    /// The `charset` parameter of a `Content-Type` field value (RFC 9110 §8.3.1), unquoted, or `nil`.
    public static func charset(ofContentType value: String) -> String? {
        parameter("charset", ofContentType: value).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// The parameter `name` (ASCII case-insensitive) of a `Content-Type` field value, unquoted, or `nil`.
    public static func parameter(_ name: String, ofContentType value: String) -> String? {
        // Most Content-Types have no parameters: no split (and its array) for them.
        guard value.utf8.contains(UInt8(ascii: ";")) else { return nil }
        for parameter in value.split(separator: ";").dropFirst() {
            guard let equals = parameter.firstIndex(of: "=") else { continue }
            guard asciiCaseInsensitiveEquals(parameter[..<equals].trimmingOWS(), name) else { continue }
            var text = parameter[parameter.index(after: equals)...].trimmingOWS()
            if text.utf8.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") { text = text.dropFirst().dropLast() }
            return String(text)
        }
        return nil
    }
}

/// An acceptable-type pattern of a decoder: `application/json`, `application/*`, `*/*`, `*/json`, or a
/// structured-syntax suffix pattern such as `*/*+json` or `application/*+xml` (RFC 6839).
public struct MediaTypePattern: Sendable, Hashable, CustomStringConvertible {
    /// Lower-cased type, or `*`.
    public let type: String
    /// Lower-cased subtype, `*`, or `*+suffix`.
    public let subtype: String
    /// How ``matches(_:)`` compares, made once: one reference, so that copying a pattern (as a loop over a chain's
    /// patterns does) costs no more retains than before it existed.
    private let matcher: Matcher

    /// `exact` when neither part has a wildcard (one comparison then), and the pattern's bytes for a byte comparison
    /// when the pattern is ASCII. A record's type is checked against up to a dozen patterns before the image
    /// decoder's; comparing Strings and Substrings (`hasPrefix`, `hasSuffix`) cost 5,000 instructions per record
    /// (callgrind, bench/small/run), bytes compare in a few dozen.
    private final class Matcher: Sendable {
        let exact: String?
        let ascii: ASCIIForm?

        init(exact: String?, ascii: ASCIIForm?) {
            self.exact = exact
            self.ascii = ascii
        }
    }

    fileprivate struct ASCIIForm: Sendable {
        var exact: [UInt8]?
        var type: [UInt8]? // nil: `*`
        var subtype: [UInt8]? // nil: `*` or `*+suffix`
        var suffix: [UInt8]? // `+json` of `*+json`
    }

    /// Parses `type/subtype`; `nil` unless there is exactly one `/` with text on both sides.
    ///
    /// Bytes are looked at, not Characters: every run makes the default chain's 73 patterns, and splitting and
    /// searching Strings by Character took 24,000 instructions a pattern, 5 % of an empty run's (callgrind). A `/`,
    /// `;`, space or `*` followed by a combining mark counts as that byte.
    public init?(_ text: String) {
        let lowered = String(decoding: text.trimmingOWS().utf8.map(asciiLower), as: UTF8.self)
        let bytes = lowered.utf8
        guard let slash = bytes.firstIndex(of: UInt8(ascii: "/")) else { return nil }
        let typeBytes = bytes[..<slash]
        let subtypeBytes = bytes[bytes.index(after: slash)...]
        guard !typeBytes.isEmpty, !subtypeBytes.isEmpty, !subtypeBytes.contains(UInt8(ascii: "/")),
            !bytes.contains(UInt8(ascii: ";")), !bytes.contains(UInt8(ascii: " "))
        else { return nil }
        type = String(decoding: typeBytes, as: UTF8.self)
        subtype = String(decoding: subtypeBytes, as: UTF8.self)
        let exact = bytes.contains(UInt8(ascii: "*")) ? nil : lowered
        var ascii: ASCIIForm?
        if bytes.allSatisfy({ $0 < 0x80 }) {
            ascii = ASCIIForm(
                exact: exact.map { Array($0.utf8) }, type: type == "*" ? nil : Array(type.utf8),
                subtype: subtype == "*" || subtype.hasPrefix("*+") ? nil : Array(subtype.utf8),
                suffix: subtype.hasPrefix("*+") ? Array(subtype.utf8.dropFirst()) : nil)
        }
        matcher = Matcher(exact: exact, ascii: ascii)
    }

    // The matcher follows from `type` and `subtype`.
    public static func == (a: Self, b: Self) -> Bool { a.type == b.type && a.subtype == b.subtype }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(type)
        hasher.combine(subtype)
    }

    public var description: String { "\(type)/\(subtype)" }

    /// Whether a response MIME type (already lower-cased, without parameters) matches this pattern.
    public func matches(_ mimeType: String) -> Bool {
        // ASCII against ASCII: Unicode equivalence is byte equality, so bytes decide (a non-ASCII character can be
        // canonically equal to an ASCII one, as U+212A KELVIN SIGN to K: those go the String way).
        if let ascii = matcher.ascii {
            var mimeType = mimeType
            if let result = mimeType.withUTF8({ bytes in
                bytes.allSatisfy({ $0 < 0x80 }) ? ascii.matches(bytes) : nil
            }) {
                return result
            }
        }
        if let exact = matcher.exact { return mimeType == exact }
        guard let slash = mimeType.utf8.firstIndex(of: UInt8(ascii: "/")) else { return false }
        let responseType = mimeType[..<slash]
        let responseSubtype = mimeType[mimeType.index(after: slash)...]
        guard type == "*" || responseType == type else { return false }
        if subtype == "*" { return true }
        if subtype.hasPrefix("*+") {
            // `*+json` matches `problem+json`, `vnd.api+json`, but not a bare `json`.
            let suffix = subtype.dropFirst(1)
            return responseSubtype.count > suffix.count && responseSubtype.hasSuffix(suffix)
        }
        return responseSubtype == subtype
    }
}

extension MediaTypePattern.ASCIIForm {
    /// ``MediaTypePattern/matches(_:)`` on the bytes of an ASCII MIME type.
    func matches(_ mime: UnsafeBufferPointer<UInt8>) -> Bool {
        if let exact { return mime.elementsEqual(exact) }
        guard let slash = mime.firstIndex(of: UInt8(ascii: "/")) else { return false }
        let responseSubtype = UnsafeBufferPointer(rebasing: mime[(slash + 1)...])
        if let type, !UnsafeBufferPointer(rebasing: mime[..<slash]).elementsEqual(type) { return false }
        if let suffix {
            // `*+json` matches `problem+json`, `vnd.api+json`, but not a bare `json`.
            return responseSubtype.count > suffix.count
                && UnsafeBufferPointer(rebasing: responseSubtype[(responseSubtype.count - suffix.count)...])
                    .elementsEqual(suffix)
        }
        guard let subtype else { return true }
        return responseSubtype.elementsEqual(subtype)
    }
}
