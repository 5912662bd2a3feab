@testable import RespDecode

/// Builds binary property lists object by object, with full control over markers, sizes and references, so that tests
/// can write both valid files and precisely broken ones.
struct BinaryPlistBuilder {
    /// Bytes per object reference inside containers.
    var refSize: Int
    /// The encoded objects, in object-index order.
    var objects: [[UInt8]] = []

    init(refSize: Int = 1) {
        self.refSize = refSize
    }

    /// The index the next added object will get.
    var nextIndex: Int { objects.count }

    /// Adds an object given as its raw encoding.
    @discardableResult
    mutating func raw(_ bytes: [UInt8]) -> Int {
        objects.append(bytes)
        return objects.count - 1
    }

    /// `value` as a `size`-byte big-endian integer (two's complement truncation).
    static func bigEndian(_ value: UInt64, size: Int) -> [UInt8] {
        (0..<size).map { k in
            let shift = (size - 1 - k) * 8
            return shift >= 64 ? 0 : UInt8(truncatingIfNeeded: value >> UInt64(shift))
        }
    }

    /// A marker byte with its count: in the low nibble when below 15, else 0xF followed by an integer object.
    static func header(_ high: UInt8, count: Int, longForm: Bool = false, countSize: Int? = nil) -> [UInt8] {
        if count < 15 && !longForm && countSize == nil { return [high << 4 | UInt8(count)] }
        let size = countSize ?? (count <= 0xFF ? 1 : count <= 0xFFFF ? 2 : count <= 0xFFFF_FFFF ? 4 : 8)
        let nibble: UInt8 = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3
        return [high << 4 | 0xF, 0x10 | nibble] + bigEndian(UInt64(count), size: size)
    }

    func ref(_ index: Int) -> [UInt8] { Self.bigEndian(UInt64(index), size: refSize) }

    mutating func null() -> Int { raw([0x00]) }
    mutating func bool(_ value: Bool) -> Int { raw([value ? 0x09 : 0x08]) }

    /// An integer in the smallest size plistlib would use: 1, 2 or 4 bytes unsigned, else 8 bytes signed.
    mutating func int(_ value: Int64) -> Int {
        if value >= 0 && value <= 0xFF { return raw([0x10] + Self.bigEndian(UInt64(value), size: 1)) }
        if value >= 0 && value <= 0xFFFF { return raw([0x11] + Self.bigEndian(UInt64(value), size: 2)) }
        if value >= 0 && value <= 0xFFFF_FFFF { return raw([0x12] + Self.bigEndian(UInt64(value), size: 4)) }
        return raw([0x13] + Self.bigEndian(UInt64(bitPattern: value), size: 8))
    }

    mutating func real(_ value: Double) -> Int { raw([0x23] + Self.bigEndian(value.bitPattern, size: 8)) }
    mutating func float(_ value: Float) -> Int { raw([0x22] + Self.bigEndian(UInt64(value.bitPattern), size: 4)) }
    mutating func date(_ seconds: Double) -> Int { raw([0x33] + Self.bigEndian(seconds.bitPattern, size: 8)) }
    mutating func data(_ bytes: [UInt8]) -> Int { raw(Self.header(0x4, count: bytes.count) + bytes) }

    mutating func ascii(_ text: String, longForm: Bool = false) -> Int {
        let bytes = Array(text.utf8)
        return raw(Self.header(0x5, count: bytes.count, longForm: longForm) + bytes)
    }

    mutating func utf16(units: [UInt16]) -> Int {
        raw(Self.header(0x6, count: units.count) + units.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] })
    }

    mutating func utf16(_ text: String) -> Int { utf16(units: Array(text.utf16)) }

    /// An ASCII string when the text is ASCII, else UTF-16 (as Apple's and Python's writers choose).
    mutating func string(_ text: String) -> Int {
        text.utf8.allSatisfy({ $0 < 0x80 }) ? ascii(text) : utf16(text)
    }

    mutating func uid(_ bytes: [UInt8]) -> Int { raw([0x80 | UInt8(bytes.count - 1)] + bytes) }

    mutating func array(_ refs: [Int], longForm: Bool = false) -> Int {
        raw(Self.header(0xA, count: refs.count, longForm: longForm) + refs.flatMap { ref($0) })
    }

    mutating func set(_ refs: [Int]) -> Int {
        raw(Self.header(0xC, count: refs.count) + refs.flatMap { ref($0) })
    }

    mutating func dict(_ keys: [Int], _ values: [Int]) -> Int {
        raw(Self.header(0xD, count: keys.count) + keys.flatMap { ref($0) } + values.flatMap { ref($0) })
    }

    /// The file: header, objects, offset table (of `offsetSize` bytes per entry, by default the smallest that fits)
    /// and trailer.
    func build(top: Int, offsetSize: Int? = nil) -> [UInt8] {
        var bytes = Array("bplist00".utf8)
        var offsets: [Int] = []
        for object in objects {
            offsets.append(bytes.count)
            bytes += object
        }
        let tableOffset = bytes.count
        let largest = offsets.max() ?? 0
        let size = offsetSize ?? (largest <= 0xFF ? 1 : largest <= 0xFFFF ? 2 : largest <= 0xFF_FFFF ? 3 : 4)
        for offset in offsets { bytes += Self.bigEndian(UInt64(offset), size: size) }
        bytes += Self.trailer(
            offsetSize: size, refSize: refSize, objectCount: UInt64(objects.count),
            topObject: UInt64(top), tableOffset: UInt64(tableOffset))
        return bytes
    }

    static func trailer(offsetSize: Int, refSize: Int, objectCount: UInt64, topObject: UInt64, tableOffset: UInt64)
        -> [UInt8]
    {
        [0, 0, 0, 0, 0, 0, UInt8(truncatingIfNeeded: offsetSize), UInt8(truncatingIfNeeded: refSize)]
            + bigEndian(objectCount, size: 8) + bigEndian(topObject, size: 8) + bigEndian(tableOffset, size: 8)
    }

    /// A one-object file holding `object` (a raw encoding).
    static func single(_ object: [UInt8]) -> [UInt8] {
        var builder = BinaryPlistBuilder()
        let top = builder.raw(object)
        return builder.build(top: top)
    }
}

/// A property list value tree, for building realistic documents.
indirect enum PlistValue {
    case null
    case bool(Bool)
    case int(Int64)
    case real(Double)
    case date(Double)
    case data([UInt8])
    case string(String)
    case array([PlistValue])
    case dict([(String, PlistValue)])
}

extension BinaryPlistBuilder {
    /// Adds `value` and everything in it (children first); equal strings are stored once when `interned` is given,
    /// as Apple's and Python's writers do.
    mutating func add(_ value: PlistValue, interned: inout [String: Int]) -> Int {
        switch value {
        case .null: return null()
        case .bool(let b): return bool(b)
        case .int(let i): return int(i)
        case .real(let d): return real(d)
        case .date(let d): return date(d)
        case .data(let bytes): return data(bytes)
        case .string(let s):
            if let index = interned[s] { return index }
            let index = string(s)
            interned[s] = index
            return index
        case .array(let items):
            let refs = items.map { add($0, interned: &interned) }
            return array(refs)
        case .dict(let members):
            let keys = members.map { add(.string($0.0), interned: &interned) }
            let values = members.map { add($0.1, interned: &interned) }
            return dict(keys, values)
        }
    }

    /// A complete file for `value`, with references wide enough for its objects.
    static func file(_ value: PlistValue, refSize: Int = 4) -> [UInt8] {
        var builder = BinaryPlistBuilder(refSize: refSize)
        var interned: [String: Int] = [:]
        let top = builder.add(value, interned: &interned)
        return builder.build(top: top)
    }
}
