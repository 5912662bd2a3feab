import Glibc

/// A growable byte buffer that result lines are written into.
///
/// Decoders write their value straight into the line being built (no intermediate object tree), so the buffer
/// offers what they need: raw appends, a way to reserve room and write through a pointer, and marks to roll back
/// to when a decoder fails half-way (`mark` / `rollback(to:)`).
///
/// One buffer belongs to one worker at a time; it is deliberately not `Sendable`.
public final class OutputBuffer {
    // Every append reads and writes these; Swift's dynamic exclusivity checks on them cost more than the appends
    // themselves (seen in profiles of the xml decoder). Nothing holds an access to them across a call.
    /// Start of the storage; valid for `capacity` bytes, of which the first `count` are written.
    @exclusivity(unchecked) public private(set) var base: UnsafeMutablePointer<UInt8>
    /// Bytes written so far.
    @exclusivity(unchecked) public internal(set) var count: Int
    /// Bytes allocated.
    @exclusivity(unchecked) public private(set) var capacity: Int

    /// Creates an empty buffer.
    /// - Parameter capacity: initial allocation in bytes. Default: 64 KiB.
    public init(capacity: Int = 64 * 1024) {
        self.capacity = max(capacity, 16)
        guard let memory = malloc(self.capacity) else { fatalError("out of memory: \(self.capacity) bytes") }
        self.base = memory.assumingMemoryBound(to: UInt8.self)
        self.count = 0
    }

    deinit { free(base) }

    /// The written bytes, valid until the next mutation.
    public var bytes: UnsafeBufferPointer<UInt8> { UnsafeBufferPointer(start: base, count: count) }

    /// A copy of the written bytes.
    public var array: [UInt8] { Array(bytes) }

    /// Forgets the contents; keeps the allocation.
    @inline(__always) public func removeAll() { count = 0 }

    /// Forgets the contents and gives back an allocation grown past `capacity` (a buffer that once held a huge value
    /// should not keep its memory while it waits for reuse).
    public func removeAll(shrinkingTo capacity: Int) {
        count = 0
        guard self.capacity > capacity, let memory = realloc(base, max(capacity, 16)) else { return }
        base = memory.assumingMemoryBound(to: UInt8.self)
        self.capacity = max(capacity, 16)
    }

    /// The current length, to roll back to.
    @inline(__always) public var mark: Int { count }

    /// Drops everything written after `mark`.
    @inline(__always) public func rollback(to mark: Int) {
        precondition(mark >= 0 && mark <= count, "rollback past the written bytes")
        count = mark
    }

    /// Makes room for `additional` more bytes, so that a caller may write through `end` without further checks.
    @inline(__always) public func reserve(_ additional: Int) {
        if capacity - count < additional { grow(additional) }
    }

    /// Doubles the allocation (by half past 64 MiB) until `additional` bytes fit, with `realloc`: a large block
    /// grows by remapping its pages, without holding the old and new blocks at once (which had a 100 MB value abort
    /// the process under a 256 MB address-space limit).
    @inline(never) private func grow(_ additional: Int) {
        var newCapacity = capacity
        while newCapacity - count < additional {
            newCapacity = newCapacity < 64 << 20 ? newCapacity &* 2 : newCapacity &+ newCapacity / 2
        }
        guard let memory = realloc(base, newCapacity) else { fatalError("out of memory: \(newCapacity) bytes") }
        base = memory.assumingMemoryBound(to: UInt8.self)
        capacity = newCapacity
    }

    /// The first unwritten byte. After `reserve(n)`, writing up to `n` bytes there and then calling
    /// `commit(n)` appends them.
    @inline(__always) public var end: UnsafeMutablePointer<UInt8> { base + count }

    /// Declares `n` bytes written at `end` (after a `reserve`).
    @inline(__always) public func commit(_ n: Int) {
        precondition(n >= 0 && count + n <= capacity, "commit past the reserved room")
        count += n
    }

    /// Appends one byte.
    @inline(__always) public func append(_ byte: UInt8) {
        if count == capacity { grow(1) }
        base[count] = byte
        count += 1
    }

    /// Appends bytes.
    @inline(__always) public func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let start = bytes.baseAddress, bytes.count > 0 else { return }
        reserve(bytes.count)
        (base + count).update(from: start, count: bytes.count)
        count += bytes.count
    }

    /// Appends bytes.
    @inline(__always) public func append(_ bytes: UnsafeRawBufferPointer) {
        append(bytes.bindMemory(to: UInt8.self))
    }

    /// Appends bytes.
    @inline(__always) public func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    /// Appends a string's UTF-8 bytes as they are (no escaping: for keys and punctuation).
    @inline(__always) public func append(ascii string: StaticString) {
        append(UnsafeBufferPointer(start: string.utf8Start, count: string.utf8CodeUnitCount))
    }

    /// Appends a decimal integer.
    public func append(decimal value: Int64) {
        if value == 0 {
            append(UInt8(ascii: "0"))
            return
        }
        reserve(20)
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0) // 24 bytes of scratch, enough for 20 digits
        let written = withUnsafeMutableBytes(of: &digits) { scratch -> Int in
            var i = scratch.count
            while magnitude > 0 {
                i -= 1
                scratch[i] = UInt8(truncatingIfNeeded: magnitude % 10) &+ UInt8(ascii: "0")
                magnitude /= 10
            }
            if value < 0 {
                i -= 1
                scratch[i] = UInt8(ascii: "-")
            }
            let n = scratch.count - i
            (base + count).update(
                from: scratch.baseAddress!.advanced(by: i).assumingMemoryBound(to: UInt8.self), count: n)
            return n
        }
        count += written
    }

    /// Appends a decimal integer.
    @inline(__always) public func append(decimal value: Int) { append(decimal: Int64(value)) }
}
