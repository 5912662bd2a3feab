import Testing

@testable import RespDecode

/// The limits most tests use.
let standardLimits = BinaryPlistReader.Limits(maxDepth: 512, maxObjects: 1_000_000, maxValueBytes: 64 << 20)

/// What `read` did with a body: the JSON text, or the error.
enum ReadOutcome: Equatable, CustomStringConvertible {
    case json(String)
    case failure(RecordError.Code)

    var description: String {
        switch self {
        case .json(let text): return "json(\(text))"
        case .failure(let code): return "failure(\(code))"
        }
    }
}

/// Bytes already in the output buffer before every read, to check that a read appends after them and that a failed
/// read leaves them exactly as they were.
private let prefix: [UInt8] = Array("prefix:".utf8)

/// Reads `bytes` into a buffer that already holds a prefix; checks the rollback on failure.
func readFull(
    _ bytes: [UInt8], limits: BinaryPlistReader.Limits = standardLimits,
    sourceLocation: SourceLocation = #_sourceLocation
) -> Result<[UInt8], RecordError> {
    let output = OutputBuffer(capacity: 16)
    output.append(prefix)
    let reader = BinaryPlistReader(limits: limits)
    do {
        try bytes.withUnsafeBufferPointer { (body) throws(RecordError) in try reader.read(body, into: output) }
        #expect(Array(output.array.prefix(prefix.count)) == prefix, sourceLocation: sourceLocation)
        return .success(Array(output.array.dropFirst(prefix.count)))
    } catch {
        #expect(output.array == prefix, "output not rolled back", sourceLocation: sourceLocation)
        return .failure(error)
    }
}

/// Reads `bytes` and returns the JSON text or the error code.
func outcome(
    _ bytes: [UInt8], limits: BinaryPlistReader.Limits = standardLimits,
    sourceLocation: SourceLocation = #_sourceLocation
) -> ReadOutcome {
    switch readFull(bytes, limits: limits, sourceLocation: sourceLocation) {
    case .success(let json): return .json(String(decoding: json, as: UTF8.self))
    case .failure(let error): return .failure(error.code)
    }
}

/// The JSON text for a one-object file holding `object`.
func singleOutcome(_ object: [UInt8]) -> ReadOutcome {
    outcome(BinaryPlistBuilder.single(object))
}

/// A strict RFC 8259 JSON validator (one value, no surrounding whitespace needed, UTF-8 checked), for the fuzz tests.
struct JSONValidator {
    let bytes: [UInt8]
    var i = 0

    static func isValid(_ bytes: [UInt8]) -> Bool {
        var validator = JSONValidator(bytes: bytes)
        guard validator.value(depth: 0) else { return false }
        validator.skipSpace()
        return validator.i == bytes.count
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private mutating func skipSpace() {
        while i < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[i]) { i += 1 }
    }

    private mutating func literal(_ text: String) -> Bool {
        let t = Array(text.utf8)
        guard bytes.count - i >= t.count, Array(bytes[i..<i + t.count]) == t else { return false }
        i += t.count
        return true
    }

    private mutating func value(depth: Int) -> Bool {
        guard depth < 10_000 else { return false }
        skipSpace()
        guard i < bytes.count else { return false }
        switch bytes[i] {
        case UInt8(ascii: "{"):
            i += 1
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "}") {
                i += 1
                return true
            }
            while true {
                skipSpace()
                guard string() else { return false }
                skipSpace()
                guard i < bytes.count, bytes[i] == UInt8(ascii: ":") else { return false }
                i += 1
                guard value(depth: depth + 1) else { return false }
                skipSpace()
                guard i < bytes.count else { return false }
                if bytes[i] == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                if bytes[i] == UInt8(ascii: "}") {
                    i += 1
                    return true
                }
                return false
            }
        case UInt8(ascii: "["):
            i += 1
            skipSpace()
            if i < bytes.count, bytes[i] == UInt8(ascii: "]") {
                i += 1
                return true
            }
            while true {
                guard value(depth: depth + 1) else { return false }
                skipSpace()
                guard i < bytes.count else { return false }
                if bytes[i] == UInt8(ascii: ",") {
                    i += 1
                    continue
                }
                if bytes[i] == UInt8(ascii: "]") {
                    i += 1
                    return true
                }
                return false
            }
        case UInt8(ascii: "\""): return string()
        case UInt8(ascii: "t"): return literal("true")
        case UInt8(ascii: "f"): return literal("false")
        case UInt8(ascii: "n"): return literal("null")
        default: return number()
        }
    }

    private mutating func digits() -> Int {
        let start = i
        while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39 { i += 1 }
        return i - start
    }

    private mutating func number() -> Bool {
        if i < bytes.count, bytes[i] == UInt8(ascii: "-") { i += 1 }
        guard i < bytes.count else { return false }
        if bytes[i] == UInt8(ascii: "0") { i += 1 } else if digits() == 0 { return false }
        if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
            i += 1
            guard digits() > 0 else { return false }
        }
        if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
            i += 1
            if i < bytes.count, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i += 1 }
            guard digits() > 0 else { return false }
        }
        return true
    }

    private mutating func string() -> Bool {
        guard i < bytes.count, bytes[i] == UInt8(ascii: "\"") else { return false }
        i += 1
        let start = i
        while i < bytes.count {
            let c = bytes[i]
            if c == UInt8(ascii: "\"") {
                i += 1
                // UTF-8 validity of the raw content.
                return String(validating: bytes[start..<i - 1], as: UTF8.self) != nil
            }
            if c < 0x20 { return false }
            if c == UInt8(ascii: "\\") {
                i += 1
                guard i < bytes.count else { return false }
                switch bytes[i] {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                    UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                    i += 1
                case UInt8(ascii: "u"):
                    guard bytes.count - i >= 5 else { return false }
                    for k in 1...4 {
                        let h = bytes[i + k]
                        guard (h >= 0x30 && h <= 0x39) || (h >= 0x61 && h <= 0x66) || (h >= 0x41 && h <= 0x46) else {
                            return false
                        }
                    }
                    i += 5
                default: return false
                }
                continue
            }
            i += 1
        }
        return false
    }
}
