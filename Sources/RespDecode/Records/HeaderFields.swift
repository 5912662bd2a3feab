/// Header (or trailer) fields in the order received; names keep their case, look-ups ignore it.
public struct HeaderFields: Sendable, Hashable, Sequence {
    public struct Field: Sendable, Hashable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public private(set) var fields: [Field]

    public init(_ fields: [Field] = []) { self.fields = fields }

    public init(_ pairs: [(String, String)]) { self.fields = pairs.map { Field(name: $0.0, value: $0.1) } }

    public mutating func append(name: String, value: String) { fields.append(Field(name: name, value: value)) }

    /// Replaces the value of the last field, for obs-fold continuation lines.
    mutating func extendLastValue(with text: String) {
        guard !fields.isEmpty else { return }
        fields[fields.count - 1].value += text
    }

    public var count: Int { fields.count }
    public var isEmpty: Bool { fields.isEmpty }
    public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

    /// Every value of the fields named `name` (ASCII case-insensitive), in order.
    public func values(_ name: StaticString) -> [String] {
        var result: [String] = []
        for field in fields where nameEquals(field.name, name) { result.append(field.value) }
        return result
    }

    /// The value of the first field named `name`, if any.
    public func first(_ name: StaticString) -> String? {
        for field in fields where nameEquals(field.name, name) { return field.value }
        return nil
    }

    /// The value of the last field named `name`, if any.
    public func last(_ name: StaticString) -> String? {
        // An index loop, not `fields.last { … }`: no Field copy (and its retains) per field looked at.
        var i = fields.count - 1
        while i >= 0 {
            if nameEquals(fields[i].name, name) { return fields[i].value }
            i -= 1
        }
        return nil
    }

    /// The comma-separated list elements of every field named `name`, trimmed, empty elements dropped
    /// (RFC 9110 §5.6.1).
    public func listElements(_ name: StaticString) -> [Substring] {
        var result: [Substring] = []
        for field in fields where nameEquals(field.name, name) {
            var rest = field.value[...]
            while true {
                let comma = rest.utf8.firstIndex(of: UInt8(ascii: ","))
                let element = rest[..<(comma ?? rest.endIndex)].trimmingOWS()
                if !element.isEmpty { result.append(element) }
                guard let comma else { break }
                rest = rest[rest.utf8.index(after: comma)...]
            }
        }
        return result
    }
}

/// Compares a field name with a known ASCII name, ignoring ASCII case; the length check rejects most names at once.
@inline(__always) func nameEquals(_ name: String, _ known: StaticString) -> Bool {
    let count = known.utf8CodeUnitCount
    guard name.utf8.count == count else { return false }
    let knownBytes = known.utf8Start
    return name.utf8.withContiguousStorageIfAvailable { bytes in
        for i in 0..<count where asciiLower(bytes[i]) != asciiLower(knownBytes[i]) { return false }
        return true
    }
        ?? asciiCaseInsensitiveEquals(
            name, String(decoding: UnsafeBufferPointer(start: knownBytes, count: count), as: UTF8.self))
}

/// ASCII case-insensitive comparison, as header names are compared.
func asciiCaseInsensitiveEquals(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
    let a = a.utf8
    let b = b.utf8
    guard a.count == b.count else { return false }
    for (x, y) in zip(a, b) where x != y && asciiLower(x) != asciiLower(y) { return false }
    return true
}

@inline(__always) func asciiLower(_ byte: UInt8) -> UInt8 {
    byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
}

extension StringProtocol {
    /// The string without leading and trailing spaces and tabs (HTTP's optional white space).
    func trimmingOWS() -> Substring {
        var s = Substring(self)
        while let first = s.utf8.first, first == 0x20 || first == 0x09 { s = s.dropFirst() }
        while let last = s.utf8.last, last == 0x20 || last == 0x09 { s = s.dropLast() }
        return s
    }
}
