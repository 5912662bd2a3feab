/// The plist decoder (AFNetworking's `AFPropertyListResponseSerializer`): binary (`bplist00`) property lists through
/// our own ``BinaryPlistReader``, XML ones through libxml2 (``XMLPlistReader``), OpenStep text and `.strings` tables
/// through our own ``OpenStepPlistReader`` (docs/decoding.md#openstep-property-lists).
///
/// Foundation's `PropertyListSerialization` is not used on input: on Swift 6.3.1 Linux it segfaults on any binary
/// plist holding a non-empty set, leaks on every failed parse, and expands shared references without bound
/// (docs/reliability.md#property-lists).
public struct PlistBodyDecoder: BodyDecoder {
    public let name = "plist"

    /// AFNetworking's `application/x-plist`, and the two other names servers use.
    public let defaultAcceptableTypes: [MediaTypePattern] = [
        "application/x-plist", "application/x-bplist", "application/plist",
    ].compactMap(MediaTypePattern.init)

    public init() {}

    public func decode(
        _ body: UnsafeBufferPointer<UInt8>, context: inout DecodingContext, into output: OutputBuffer
    ) throws(RecordError) -> Bool {
        if Self.isNoContent(body) { return false }
        let limits = context.options.limits
        if body.count >= 6 && body[0] == UInt8(ascii: "b") && body[1] == UInt8(ascii: "p")
            && body[2] == UInt8(ascii: "l")
            && body[3] == UInt8(ascii: "i") && body[4] == UInt8(ascii: "s") && body[5] == UInt8(ascii: "t")
        {
            let reader = BinaryPlistReader(
                limits: .init(
                    maxDepth: limits.maxDepth, maxObjects: limits.maxPlistObjects,
                    maxValueBytes: limits.maxValueBytes))
            try reader.read(body, into: output)
            return true
        }
        if Self.looksLikeOpenStep(body) {
            let reader = OpenStepPlistReader(
                limits: .init(
                    maxDepth: limits.maxDepth, maxObjects: limits.maxPlistObjects,
                    maxValueBytes: limits.maxValueBytes, maxTextBytes: limits.maxDecodedBodyBytes))
            try reader.read(body, into: output)
            return true
        }
        let reader = XMLPlistReader(
            output: output,
            limits: .init(
                maxDepth: limits.maxDepth, maxObjects: limits.maxPlistObjects,
                maxValueBytes: limits.maxValueBytes))
        try reader.read(body, encoding: context.charset, warnings: &context.warnings)
        return true
    }

    /// Whether the body is OpenStep text rather than XML (docs/decoding.md#openstep-property-lists): its first
    /// character (after a byte order mark and white space, in UTF-8, UTF-16 or UTF-32) is anything but `<`, or a `<`
    /// that opens OpenStep data (`<*` and `<[` of GNUstep, or hexadecimal digits and white space up to `>`). An XML
    /// plist starts with `<?`, `<!` or an element name; a body in UTF-16 or UTF-32 without a byte order mark (a NUL
    /// in its first two bytes) is left to libxml2, which detects those encodings for XML.
    static func looksLikeOpenStep(_ body: UnsafeBufferPointer<UInt8>) -> Bool {
        // (bytes per character, index of the character's low byte in a unit, bytes of byte order mark)
        var width = 1
        var low = 0
        var start = 0
        func has(_ prefix: [UInt8]) -> Bool { body.count >= prefix.count && zip(body, prefix).allSatisfy { $0 == $1 } }
        if has([0x00, 0x00, 0xFE, 0xFF]) {
            (width, low, start) = (4, 3, 4)
        } else if has([0xFF, 0xFE, 0x00, 0x00]) {
            (width, low, start) = (4, 0, 4)
        } else if has([0xFE, 0xFF]) {
            (width, low, start) = (2, 1, 2)
        } else if has([0xFF, 0xFE]) {
            (width, low, start) = (2, 0, 2)
        } else if has([0xEF, 0xBB, 0xBF]) {
            start = 3
        } else if body.count >= 2 && (body[0] == 0 || body[1] == 0) {
            return false
        }
        /// The ASCII character at `i`, or nil for one outside ASCII (or past the end).
        func character(_ i: Int) -> UInt8? {
            guard i + width <= body.count else { return nil }
            for k in 0..<width where k != low && body[i + k] != 0 { return nil }
            return body[i + low] < 0x80 ? body[i + low] : nil
        }
        func isSpace(_ c: UInt8) -> Bool { c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 }
        var i = start
        while i + width <= body.count, let c = character(i), isSpace(c) { i += width }
        guard character(i) == UInt8(ascii: "<") else { return true }
        i += width
        guard let next = character(i) else { return false }
        if next == UInt8(ascii: "*") || next == UInt8(ascii: "[") { return true }
        // Hexadecimal data: digits and white space up to `>` (`<dict>` has an `i`, `<data>` a `t`).
        while let c = character(i) {
            if c == UInt8(ascii: ">") { return true }
            guard isSpace(c) || (c >= 0x30 && c <= 0x39) || (c | 0x20 >= 0x61 && c | 0x20 <= 0x66) else { return false }
            i += width
        }
        return false
    }
}
