/// The plist decoder (AFNetworking's `AFPropertyListResponseSerializer`): binary (`bplist00`) property lists through
/// our own ``BinaryPlistReader``, XML ones through libxml2 (``XMLPlistReader``).
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
            throw RecordError(
                .unsupportedFormat, "OpenStep (text) property lists are not supported; only XML and binary ones are")
        }
        let reader = XMLPlistReader(
            output: output,
            limits: .init(
                maxDepth: limits.maxDepth, maxObjects: limits.maxPlistObjects,
                maxValueBytes: limits.maxValueBytes))
        try reader.read(body, encoding: context.charset, warnings: &context.warnings)
        return true
    }

    /// Whether the body starts like an OpenStep plist: its first character (after a byte order mark and white space,
    /// in UTF-8, UTF-16 or UTF-32) is `{`, `(`, `"` or the `/` of a comment. An XML plist starts with `<`.
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
        }
        var i = start
        while i + width <= body.count {
            // A character outside ASCII cannot start either format's syntax.
            for k in 0..<width where k != low && body[i + k] != 0 { return false }
            let c = body[i + low]
            if c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 {
                i += width
                continue
            }
            return c == UInt8(ascii: "{") || c == UInt8(ascii: "(") || c == UInt8(ascii: "\"")
                || c == UInt8(ascii: "/")
        }
        return false
    }
}
