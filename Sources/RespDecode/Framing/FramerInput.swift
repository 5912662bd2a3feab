import Glibc

/// The bytes of one input as they are read, owned by whoever reads them (the stream runner, a test) and lent to a
/// ``RecordFramer`` for each `decode` call — the shape of SwiftNIO's `ByteToMessageDecoder` and its `ByteBuffer`.
///
///     index:   0 ............ readerIndex ............ writerIndex ............ capacity
///              consumed       unread (the framer's)     spare (the next read goes here)
///
/// `baseOffset` is the input offset of index 0, so `offset(of:)` gives any index's place in the whole input however
/// often the consumed front was dropped. Indices stay valid within one `decode` call; between calls the owner may
/// compact (drop the consumed front, moving the unread bytes to index 0), so a framer keeps positions across calls
/// relative to `readerIndex` or as input offsets, never as indices.
///
/// Reading goes straight into the spare capacity (``writeWithUnsafeMutableBytes(minimumWritableBytes:_:)``): no copy
/// of each chunk read.
public struct FramerInput {
    /// The memory; copied before a write when another `FramerInput` shares it.
    private final class Storage {
        let base: UnsafeMutablePointer<UInt8>
        let capacity: Int

        init(capacity: Int) {
            self.capacity = capacity
            base = .allocate(capacity: Swift.max(capacity, 1))
        }

        deinit { base.deallocate() }
    }

    private var storage: Storage
    /// The index of the next unread byte.
    public internal(set) var readerIndex = 0 {
        didSet { precondition(readerIndex >= 0 && readerIndex <= writerIndex, "reader index out of range") }
    }
    /// The index just past the last byte written.
    public private(set) var writerIndex = 0
    /// The input offset of the byte at index 0.
    public private(set) var baseOffset: Int64
    /// More bytes, while there are any, are read without waiting (the input is a regular file). A framer may then ask
    /// for more input to have a unit whole (a gzip member, for libdeflate) rather than take it in pieces: nothing is
    /// held back while a producer is quiet. Set by the owner; false for pipes, sockets and tests unless they say so.
    public var readsWithoutWaiting = false

    /// An empty input whose first byte will be at input offset `offset`.
    public init(capacity: Int = 0, startingAt offset: Int64 = 0) {
        storage = Storage(capacity: capacity)
        baseOffset = offset
    }

    /// An input holding `bytes`.
    public init(_ bytes: some Collection<UInt8>) {
        self.init(capacity: bytes.count)
        write(bytes)
    }

    /// Bytes written and not yet consumed.
    public var readableBytes: Int { writerIndex - readerIndex }

    /// The input offset of the next unread byte.
    public var readerOffset: Int64 { baseOffset + Int64(readerIndex) }

    /// The input offset of the byte at `index`.
    public func offset(of index: Int) -> Int64 { baseOffset + Int64(index) }

    /// The memory held: the bound on what an input costs besides the framer's own record.
    public var capacity: Int { storage.capacity }

    // MARK: - Writing

    /// Drops the consumed front when all of it is consumed, or when the consumed part is at least 64 KiB and at least
    /// half of what is held — so each byte is moved O(1) times on average. Indices into the input are invalid after.
    /// - Returns: how many bytes were dropped (0 when the input was left as it was).
    @discardableResult
    public mutating func compact() -> Int {
        guard readerIndex > 0 else { return 0 }
        if readerIndex == writerIndex {
            writerIndex = 0
        } else if readerIndex >= 64 * 1024 && readerIndex * 2 >= writerIndex {
            makeUnique()
            memmove(storage.base, storage.base + readerIndex, writerIndex - readerIndex)
            writerIndex -= readerIndex
        } else {
            return 0
        }
        let dropped = readerIndex
        baseOffset += Int64(dropped)
        readerIndex = 0
        return dropped
    }

    /// Compacts, makes room for at least `minimumWritableBytes` more and lets `body` write into the spare capacity
    /// (at least that many bytes; it may be more): `body` returns how many bytes it wrote at the start of the region,
    /// or a negative number for none (a failed `read(2)`), which is returned as it is.
    @discardableResult
    public mutating func writeWithUnsafeMutableBytes(
        minimumWritableBytes: Int, _ body: (UnsafeMutableRawBufferPointer) throws -> Int
    ) rethrows -> Int {
        compact()
        reserve(minimumWritableBytes)
        let spare = UnsafeMutableRawBufferPointer(
            start: storage.base + writerIndex, count: storage.capacity - writerIndex)
        let written = try body(spare)
        precondition(written <= spare.count, "wrote past the spare capacity")
        if written > 0 { writerIndex += written }
        return written
    }

    /// Appends `bytes`.
    public mutating func write(_ bytes: some Collection<UInt8>) {
        let n = bytes.count
        guard n > 0 else { return }
        writeWithUnsafeMutableBytes(minimumWritableBytes: n) { spare in
            let typed = spare.bindMemory(to: UInt8.self)
            let copied: Int? = bytes.withContiguousStorageIfAvailable { source in
                typed.baseAddress!.update(from: source.baseAddress!, count: n)
                return n
            }
            if copied == nil { _ = typed.initialize(from: bytes) }
            return n
        }
    }

    /// Makes room for `n` more bytes after `writerIndex`, growing geometrically; the unread bytes move to index 0 when
    /// the memory is replaced.
    private mutating func reserve(_ n: Int) {
        let unique = isKnownUniquelyReferenced(&storage)
        if unique && storage.capacity - writerIndex >= n { return }
        let unread = readableBytes
        let needed = unread + n
        let capacity = unique || needed > storage.capacity ? Swift.max(needed, storage.capacity * 2) : storage.capacity
        let replacement = Storage(capacity: capacity)
        replacement.base.update(from: storage.base + readerIndex, count: unread)
        storage = replacement
        baseOffset += Int64(readerIndex)
        writerIndex = unread
        readerIndex = 0
    }

    private mutating func makeUnique() {
        guard !isKnownUniquelyReferenced(&storage) else { return }
        let replacement = Storage(capacity: storage.capacity)
        replacement.base.update(from: storage.base, count: writerIndex)
        storage = replacement
    }

    // MARK: - Reading (framers, within one call)

    /// The byte at `index` (`readerIndex` or after it; bounds-checked).
    subscript(index: Int) -> UInt8 {
        precondition(index >= 0 && index < writerIndex, "index out of range")
        return storage.base[index]
    }

    /// Moves the reader index on by `n` bytes.
    mutating func moveReaderIndex(forwardBy n: Int) { readerIndex += n }

    /// Calls `body` with the bytes `0..<writerIndex` (index `i` of the buffer is index `i` of the input).
    func withUnsafeBufferPointer<Result>(_ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows -> Result {
        try withExtendedLifetime(storage) { try body(UnsafeBufferPointer(start: storage.base, count: writerIndex)) }
    }

    /// Calls `body` with the bytes in `range`.
    func withBytes<Result>(in range: Range<Int>, _ body: (UnsafeBufferPointer<UInt8>) throws -> Result) rethrows
        -> Result
    {
        precondition(range.lowerBound >= 0 && range.upperBound <= writerIndex, "range out of bounds")
        return try withExtendedLifetime(storage) {
            try body(UnsafeBufferPointer(start: storage.base + range.lowerBound, count: range.count))
        }
    }

    /// The bytes in `range`, as an array.
    func bytes(in range: Range<Int>) -> [UInt8] { withBytes(in: range) { Array($0) } }

    /// Appends the bytes in `range` to `array`.
    func copyBytes(in range: Range<Int>, to array: inout [UInt8]) {
        withBytes(in: range) { array.append(contentsOf: $0) }
    }

    /// The index of the first `byte` in `from..<to` (`to` defaults to `writerIndex`).
    func firstIndex(of byte: UInt8, from: Int, to: Int? = nil) -> Int? {
        let end = to ?? writerIndex
        guard from < end else { return nil }
        precondition(from >= 0 && end <= writerIndex, "range out of bounds")
        return withExtendedLifetime(storage) {
            guard let hit = memchr(storage.base + from, Int32(byte), end - from) else { return nil }
            return storage.base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
        }
    }

    /// Whether the bytes at `index` are `prefix`.
    func starts(with prefix: StaticString, at index: Int) -> Bool {
        let n = prefix.utf8CodeUnitCount
        guard writerIndex - index >= n else { return false }
        let p = prefix.utf8Start
        for k in 0..<n where storage.base[index + k] != p[k] { return false }
        return true
    }

    /// Whether the bytes from `index` to the end are a proper prefix of `prefix` (more input could complete it).
    func isPrefix(of prefix: StaticString, at index: Int) -> Bool {
        let n = writerIndex - index
        guard n < prefix.utf8CodeUnitCount else { return false }
        let p = prefix.utf8Start
        for k in 0..<n where storage.base[index + k] != p[k] { return false }
        return true
    }

    // MARK: - Owned buffers (WARC's inflated stream)

    /// Drops every byte from `index` on (bytes the framer hands to another layer instead).
    mutating func truncate(from index: Int) {
        precondition(index >= readerIndex && index <= writerIndex, "index out of range")
        writerIndex = index
    }
}
