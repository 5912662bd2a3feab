import Glibc

/// Reads an XML property list (`<plist version="1.0">…</plist>`) through libxml2 — the same parser, options and
/// safety settings as the xml decoder — and writes its value as JSON while the events arrive.
///
/// Strict where Python's plistlib is lenient: unknown elements, text inside containers, a `<key>` without a value,
/// malformed integers, reals, dates and base64 are errors. The root is `<plist>` holding one value, or a bare value.
/// Integers must fit in -2^63 … 2^64−1; `0x` hexadecimal integers are accepted (as plistlib and libplist do).
final class XMLPlistReader: XMLEventSink {
    struct Limits {
        var maxDepth: Int
        var maxObjects: Int
        var maxValueBytes: Int
    }

    private enum Element {
        case plist, dict, array, key, string, integer, real, date, data, `true`, `false`

        /// The element named by the NUL-terminated `name`, if it is a plist element. Reads at most the name's
        /// length plus one byte, by packing it into one word (names are at most 7 bytes).
        init?(cString name: UnsafePointer<UInt8>) {
            var word: UInt64 = 0
            for i in 0..<8 {
                let byte = name[i]
                if byte == 0 { break }
                guard i < 7 else { return nil }
                word |= UInt64(byte) << (8 * UInt64(i))
            }
            switch word {
            case packedName("key"): self = .key
            case packedName("dict"): self = .dict
            case packedName("string"): self = .string
            case packedName("integer"): self = .integer
            case packedName("real"): self = .real
            case packedName("date"): self = .date
            case packedName("data"): self = .data
            case packedName("true"): self = .true
            case packedName("false"): self = .false
            case packedName("array"): self = .array
            case packedName("plist"): self = .plist
            default: return nil
            }
        }

        var isContainer: Bool { self == .dict || self == .array || self == .plist }
    }

    private struct Frame {
        var element: Element
        /// Values (or, in a dict, keys) written so far.
        var count = 0
        /// In a dict: a key has been written and its value has not come yet.
        var awaitingValue = false
    }

    private let out: OutputBuffer
    private let limits: Limits
    private let valueEnd: Int
    // Events come one at a time and no two accesses to a property overlap: no dynamic exclusivity checks needed.
    @exclusivity(unchecked) private var stack: [Frame] = []
    /// Character data of the element being read (a buffer reused for every element of the document).
    private let text = OutputBuffer(capacity: 256)
    @exclusivity(unchecked) private var objects = 0
    @exclusivity(unchecked) private var containerDepth = 0
    @exclusivity(unchecked) private var wroteRoot = false
    /// Inside `<string>` or `<key>`: character data goes straight into the output.
    @exclusivity(unchecked) private var inString = false
    /// Why the reader stopped the parse.
    private(set) var error: RecordError?

    init(output: OutputBuffer, limits: Limits) {
        out = output
        self.limits = limits
        let (end, overflow) = output.count.addingReportingOverflow(limits.maxValueBytes)
        valueEnd = overflow ? Int.max : end
        stack.reserveCapacity(16)
    }

    /// Parses `body`; on error throws and leaves `output` as it was.
    ///
    /// Plain UTF-8 plists (no `charset`) are read by ``XMLPlistScanner``, which gives the same events as libxml2;
    /// a body it does not take is read again from the start by libxml2 (docs/decoding.md#xml-property-lists).
    /// `scanner: false` reads with libxml2 alone (for tests that compare the two).
    func read(
        _ body: UnsafeBufferPointer<UInt8>, encoding: String?, warnings: inout [String], scanner: Bool = true
    ) throws(RecordError) {
        let mark = out.mark
        var outcome: LibXML2.Outcome?
        if encoding == nil && scanner {
            switch XMLPlistScanner.scan(body, sink: self) {
            case .parsed: outcome = .parsed
            case .stoppedBySink: outcome = .stoppedBySink
            case .notInSubset:
                out.rollback(to: mark)
                reset()
            }
        }
        let result = outcome ?? LibXML2.parse(body, encoding: encoding, sink: self, warnings: &warnings)
        try finish(result, mark: mark)
    }

    /// The reader as it was made, for a second reading of the same body.
    private func reset() {
        stack.removeAll(keepingCapacity: true)
        text.removeAll()
        objects = 0
        containerDepth = 0
        wroteRoot = false
        inString = false
        error = nil
    }

    private func finish(_ outcome: LibXML2.Outcome, mark: Int) throws(RecordError) {
        if let error = outcome.error(code: .invalidPropertyList, prefix: "not well-formed XML: ", sinkError: error)
            ?? (wroteRoot ? nil : RecordError(.invalidPropertyList, "the property list holds no value"))
        {
            out.rollback(to: mark)
            throw error
        }
    }

    private func fail(_ message: String, _ code: RecordError.Code = .invalidPropertyList) -> Bool {
        error = RecordError(code, message)
        return false
    }

    override func startElement(_ start: XMLElementStart) -> Bool {
        guard let element = Element(cString: start.localNameCString), start.prefix == nil else {
            return fail("unknown element <\(String(decoding: start.localName, as: UTF8.self))>")
        }
        guard isBlank(text.bytes) else { return fail("text outside a value element") }
        text.removeAll()

        if stack.isEmpty {
            // The root: <plist> or a bare value.
            if element == .plist {
                stack.append(Frame(element: .plist))
                return true
            }
        } else {
            let parent = stack.count - 1
            switch stack[parent].element {
            case .plist:
                guard stack[parent].count == 0 else { return fail("<plist> holds more than one value") }
                guard element != .key, element != .plist else { return fail("<\(element)> directly in <plist>") }
            case .dict:
                if stack[parent].awaitingValue {
                    guard element != .key else { return fail("<key> follows <key> in a <dict>") }
                    stack[parent].awaitingValue = false
                } else {
                    guard element == .key else { return fail("<\(element)> in a <dict> where a <key> belongs") }
                    if stack[parent].count > 0 { out.append(UInt8(ascii: ",")) }
                    stack[parent].count += 1
                    stack[parent].awaitingValue = true
                }
            case .array:
                guard element != .key, element != .plist else { return fail("<\(element)> in an <array>") }
                if stack[parent].count > 0 { out.append(UInt8(ascii: ",")) }
                stack[parent].count += 1
            default:
                return fail("<\(element)> inside <\(stack[parent].element)>")
            }
            if stack[parent].element == .plist { stack[parent].count += 1 }
        }
        // Keys count as objects, as in binary plists (where they are string objects).
        objects += 1
        guard objects <= limits.maxObjects else {
            return fail("more than \(limits.maxObjects) objects (maxPlistObjects)", .limitExceeded)
        }
        if element != .key { wroteRoot = true }
        switch element {
        case .dict, .array:
            containerDepth += 1
            guard containerDepth <= limits.maxDepth else {
                return fail("containers nested deeper than \(limits.maxDepth)", .limitExceeded)
            }
            out.append(UInt8(ascii: element == .dict ? "{" : "["))
        case .plist:
            return fail("<plist> inside a value")
        case .string, .key:
            // Strings and keys are escaped into the output as their text arrives (see `characters`).
            out.append(UInt8(ascii: "\""))
        default:
            break
        }
        stack.append(Frame(element: element))
        inString = element == .string || element == .key
        return true
    }

    override func endElement() -> Bool {
        let frame = stack.removeLast()
        inString = false
        defer { text.removeAll() }
        switch frame.element {
        case .plist:
            guard frame.count == 1 else { return fail("<plist> holds no value") }
            guard isBlank(text.bytes) else { return fail("text inside <plist>") }
            return true
        case .dict:
            guard !frame.awaitingValue else { return fail("a <key> in a <dict> has no value") }
            guard isBlank(text.bytes) else { return fail("text inside a <dict>") }
            containerDepth -= 1
            out.append(UInt8(ascii: "}"))
        case .array:
            guard isBlank(text.bytes) else { return fail("text inside an <array>") }
            containerDepth -= 1
            out.append(UInt8(ascii: "]"))
        case .key:
            out.append(ascii: "\":")
        case .string:
            out.append(UInt8(ascii: "\""))
        case .true, .false:
            guard isBlank(text.bytes) else { return fail("text inside <\(frame.element)>") }
            out.append(ascii: frame.element == .true ? "true" : "false")
        case .integer:
            guard let value = parsePlistInteger(text.bytes) else {
                return fail("<integer> '\(excerpt(text.bytes))' is not an integer from -2^63 to 2^64-1")
            }
            out.appendDecimal(value)
        case .real:
            guard let value = parsePlistReal(text.bytes) else {
                return fail("<real> '\(excerpt(text.bytes))' is not a number")
            }
            out.appendPlistReal(value)
        case .date:
            guard let seconds = parsePlistXMLDate(trimmed(text.bytes)),
                out.appendPlistDate(secondsSinceReferenceDate: seconds)
            else { return fail("<date> '\(excerpt(text.bytes))' is not a date like 2001-01-01T00:00:00Z") }
        case .data:
            let mark = out.mark
            out.append(ascii: "{\"base64\":\"")
            guard appendNormalizedBase64(text.bytes) else {
                out.rollback(to: mark)
                return fail("<data> is not base64")
            }
            out.append(ascii: "\"}")
        }
        guard out.count <= valueEnd else {
            return fail("plist value larger than the value limit (maxValueBytes)", .limitExceeded)
        }
        return true
    }

    override func characters(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        if inString {
            // Written as it comes (libxml2 hands out whole characters), stopping at the value limit.
            switch out.appendJSONStringContent(utf8: bytes, stoppingPast: valueEnd) {
            case .written: return true
            case .invalidUTF8: return fail("text is not UTF-8")
            case .pastLimit: return fail("plist value larger than the value limit (maxValueBytes)", .limitExceeded)
            }
        }
        text.append(bytes)
        // Pending text counts against the value limit before it is written (it can be entity-made).
        guard text.count <= valueEnd - out.count else {
            return fail("plist value larger than the value limit (maxValueBytes)", .limitExceeded)
        }
        return true
    }

    /// Writes `<data>` base64 text in canonical form: white space (allowed anywhere) removed, padding completed.
    ///
    /// Canonical text is copied as it is, validated on the way (the common case, and the fast one); text whose last
    /// symbol has stray low bits is decoded and encoded again.
    private func appendNormalizedBase64(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let mark = out.mark
        out.reserve(bytes.count + 2)
        var write = out.end
        var symbols = 0
        var padding = 0
        var last: UInt8 = 0
        for byte in bytes {
            let value = base64Values[Int(byte)]
            if value < 64 {
                guard padding == 0 else { return false }
                write.pointee = byte
                write += 1
                symbols += 1
                last = value
            } else if value == base64Padding {
                padding += 1
                // Padding only completes a group that has 2 or 3 symbols.
                guard symbols % 4 >= 2, symbols % 4 + padding <= 4 else { return false }
            } else if value != base64Space {
                return false
            }
        }
        out.commit(symbols)
        switch symbols % 4 {
        case 0:
            guard padding == 0 else { return false }
        case 2:
            guard padding == 0 || padding == 2 else { return false }
            guard last & 0x0F == 0 else { return reencodeBase64(from: mark, symbols: symbols) }
            out.append(ascii: "==")
        case 3:
            guard padding <= 1 else { return false }
            guard last & 0x03 == 0 else { return reencodeBase64(from: mark, symbols: symbols) }
            out.append(UInt8(ascii: "="))
        default:
            return false
        }
        return true
    }

    /// Decodes the `symbols` base64 symbols just written at `mark` and writes them again in canonical form.
    private func reencodeBase64(from mark: Int, symbols: Int) -> Bool {
        var decoded: [UInt8] = []
        decoded.reserveCapacity(symbols / 4 * 3 + 2)
        var quad: UInt32 = 0
        for i in 0..<symbols {
            quad = quad << 6 | UInt32(base64Values[Int(out.base[mark + i])])
            if i % 4 == 3 {
                decoded += [
                    UInt8(truncatingIfNeeded: quad >> 16), UInt8(truncatingIfNeeded: quad >> 8),
                    UInt8(truncatingIfNeeded: quad),
                ]
                quad = 0
            }
        }
        switch symbols % 4 {
        case 2: decoded.append(UInt8(truncatingIfNeeded: quad >> 4))
        case 3: decoded += [UInt8(truncatingIfNeeded: quad >> 10), UInt8(truncatingIfNeeded: quad >> 2)]
        default: break
        }
        out.rollback(to: mark)
        decoded.withUnsafeBufferPointer { out.appendBase64($0) }
        return true
    }
}

private let base64Padding: UInt8 = 0xFE
private let base64Space: UInt8 = 0xFD

/// Each byte's base64 value (0…63), or `base64Padding`, `base64Space` (XML white space), or 0xFF.
private let base64Values: [UInt8] = (0..<256).map { byte -> UInt8 in
    switch byte {
    case 0x41...0x5A: UInt8(byte - 0x41)
    case 0x61...0x7A: UInt8(byte - 0x61 + 26)
    case 0x30...0x39: UInt8(byte - 0x30 + 52)
    case 0x2B: 62
    case 0x2F: 63
    case 0x3D: base64Padding
    case 0x20, 0x09, 0x0A, 0x0D: base64Space
    default: 0xFF
    }
}

/// `[+-]?digits` or `0x hexdigits`, white space around allowed, in -2^63 … 2^64−1 (XML `<integer>`, GNUstep `<*I…>`).
func parsePlistInteger(_ raw: UnsafeBufferPointer<UInt8>) -> Int128? {
    let bytes = trimmed(raw)
    var i = 0
    var negative = false
    if i < bytes.count && (bytes[i] == UInt8(ascii: "-") || bytes[i] == UInt8(ascii: "+")) {
        negative = bytes[i] == UInt8(ascii: "-")
        i += 1
    }
    var radix: UInt64 = 10
    // Hexadecimal only without a sign or leading white space, as plistlib reads it.
    if i == 0, bytes.baseAddress == raw.baseAddress,
        i + 1 < bytes.count && bytes[i] == UInt8(ascii: "0") && (bytes[i + 1] | 0x20) == UInt8(ascii: "x")
    {
        radix = 16
        i += 2
    }
    guard i < bytes.count else { return nil }
    var magnitude: UInt64 = 0
    while i < bytes.count {
        let c = bytes[i]
        let digit: UInt64
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt64(c - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f") where radix == 16: digit = UInt64(c - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F") where radix == 16: digit = UInt64(c - UInt8(ascii: "A")) + 10
        default: return nil
        }
        let (shifted, o1) = magnitude.multipliedReportingOverflow(by: radix)
        let (sum, o2) = shifted.addingReportingOverflow(digit)
        guard !o1, !o2 else { return nil }
        magnitude = sum
        i += 1
    }
    if negative {
        guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
        return -Int128(magnitude)
    }
    return Int128(magnitude)
}

/// A decimal number (`1`, `-1.5`, `.5`, `1e10`) or ±inf/infinity/nan in any case, white space around allowed (XML
/// `<real>`, GNUstep `<*R…>`).
func parsePlistReal(_ raw: UnsafeBufferPointer<UInt8>) -> Double? {
    let bytes = trimmed(raw)
    guard !bytes.isEmpty else { return nil }
    var i = 0
    if bytes[0] == UInt8(ascii: "-") || bytes[0] == UInt8(ascii: "+") { i = 1 }
    let word = String(decoding: UnsafeBufferPointer(rebasing: bytes[i...]), as: UTF8.self).lowercased()
    if word == "inf" || word == "infinity" || word == "nan" {
        let negative = bytes[0] == UInt8(ascii: "-")
        return word == "nan" ? .nan : (negative ? -.infinity : .infinity)
    }
    // Digits, at most one point, then an optional exponent: nothing else reaches Double's parser (which would also
    // take hexadecimal floats).
    var digits = 0
    while i < bytes.count, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") {
        i += 1
        digits += 1
    }
    if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
        i += 1
        while i < bytes.count, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") {
            i += 1
            digits += 1
        }
    }
    guard digits > 0 else { return nil }
    if i < bytes.count, bytes[i] | 0x20 == UInt8(ascii: "e") {
        i += 1
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") || bytes[i] == UInt8(ascii: "+") { i += 1 }
        var exponentDigits = 0
        while i < bytes.count, bytes[i] >= UInt8(ascii: "0"), bytes[i] <= UInt8(ascii: "9") {
            i += 1
            exponentDigits += 1
        }
        guard exponentDigits > 0 else { return nil }
    }
    guard i == bytes.count else { return nil }
    // The syntax is checked, so strtod reads exactly these bytes (through a NUL-terminated copy; no String made).
    return withUnsafeTemporaryAllocation(of: CChar.self, capacity: bytes.count + 1) { text -> Double? in
        for k in 0..<bytes.count { text[k] = CChar(bitPattern: bytes[k]) }
        text[bytes.count] = 0
        return strtod(text.baseAddress!, nil)
    }
}

private func trimmed(_ bytes: UnsafeBufferPointer<UInt8>) -> UnsafeBufferPointer<UInt8> {
    var start = 0
    var end = bytes.count
    while start < end && isWhitespace(bytes[start]) { start += 1 }
    while end > start && isWhitespace(bytes[end - 1]) { end -= 1 }
    return UnsafeBufferPointer(rebasing: bytes[start..<end])
}

@inline(__always)
private func isWhitespace(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x0A || byte == 0x09 || byte == 0x0D }

private func isBlank(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    for byte in bytes where !isWhitespace(byte) { return false }
    return true
}

/// An element name of at most 7 bytes packed into a word, the first byte lowest.
@inline(__always)
private func packedName(_ name: StaticString) -> UInt64 {
    var word: UInt64 = 0
    for i in 0..<name.utf8CodeUnitCount { word |= UInt64(name.utf8Start[i]) << (8 * UInt64(i)) }
    return word
}

/// The start of a text for an error message.
private func excerpt(_ text: UnsafeBufferPointer<UInt8>) -> String {
    let head = String(decoding: text.prefix(40), as: UTF8.self)
    return text.count > 40 ? head + "…" : head
}
