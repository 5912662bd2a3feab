/// Bounds-checked reads from an image body for the header readers: every read returns `nil` past the end instead of
/// trapping, and offsets are `Int`s that cannot overflow for bodies under the body limit.
struct ByteReader {
    let bytes: UnsafeBufferPointer<UInt8>

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    var count: Int { bytes.count }

    /// Whether `length` bytes start at `offset`.
    @inline(__always) func has(_ offset: Int, _ length: Int) -> Bool {
        offset >= 0 && length >= 0 && offset <= bytes.count && length <= bytes.count - offset
    }

    @inline(__always) func u8(_ offset: Int) -> Int? {
        has(offset, 1) ? Int(bytes[offset]) : nil
    }

    @inline(__always) func u16be(_ offset: Int) -> Int? {
        has(offset, 2) ? Int(bytes[offset]) << 8 | Int(bytes[offset + 1]) : nil
    }

    @inline(__always) func u16le(_ offset: Int) -> Int? {
        has(offset, 2) ? Int(bytes[offset + 1]) << 8 | Int(bytes[offset]) : nil
    }

    @inline(__always) func u24le(_ offset: Int) -> Int? {
        has(offset, 3) ? Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset]) : nil
    }

    @inline(__always) func u32be(_ offset: Int) -> Int? {
        guard has(offset, 4) else { return nil }
        return Int(bytes[offset]) << 24 | Int(bytes[offset + 1]) << 16 | Int(bytes[offset + 2]) << 8
            | Int(bytes[offset + 3])
    }

    @inline(__always) func u32le(_ offset: Int) -> Int? {
        guard has(offset, 4) else { return nil }
        return Int(bytes[offset + 3]) << 24 | Int(bytes[offset + 2]) << 16 | Int(bytes[offset + 1]) << 8
            | Int(bytes[offset])
    }

    /// A signed little-endian 32-bit value (BMP's width and height).
    @inline(__always) func i32le(_ offset: Int) -> Int? {
        u32le(offset).map { Int(Int32(truncatingIfNeeded: UInt32($0))) }
    }

    @inline(__always) func u16(_ offset: Int, bigEndian: Bool) -> Int? {
        bigEndian ? u16be(offset) : u16le(offset)
    }

    @inline(__always) func u32(_ offset: Int, bigEndian: Bool) -> Int? {
        bigEndian ? u32be(offset) : u32le(offset)
    }

    /// Whether the bytes at `offset` are `ascii` (a four-character code, a signature).
    func matches(_ ascii: StaticString, at offset: Int) -> Bool {
        let n = ascii.utf8CodeUnitCount
        guard has(offset, n) else { return false }
        let p = ascii.utf8Start
        for i in 0..<n where bytes[offset + i] != p[i] { return false }
        return true
    }

    /// The sub-range `offset..<offset+length`, if it is inside.
    func slice(_ offset: Int, _ length: Int) -> UnsafeBufferPointer<UInt8>? {
        guard has(offset, length), let base = bytes.baseAddress else { return has(offset, length) ? bytes : nil }
        return UnsafeBufferPointer(start: base + offset, count: length)
    }
}
