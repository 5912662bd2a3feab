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
    /// The memory; replaced before a write when another `FramerInput` shares it.
    private final class Storage: ByteLender, @unchecked Sendable {
        let base: UnsafeMutablePointer<UInt8>
        let capacity: Int
        /// Where the memory goes when the last input holding it is gone (nil: freed).
        let recycler: Recycler?

        init(capacity: Int, recycler: Recycler? = nil) {
            self.recycler = recycler
            (base, self.capacity) = recycler?.take(capacity) ?? (.allocate(capacity: Swift.max(capacity, 1)), capacity)
        }

        deinit {
            if let recycler { recycler.giveBack(base, capacity: capacity) } else { base.deallocate() }
        }

        var baseAddress: UnsafeMutablePointer<UInt8> { base }
    }

    /// Blocks of memory kept for reuse by one input's storage, wherever the last input holding a block lets go of it
    /// (a worker done with a span ``split(at:)`` off the input, or the input itself): a reader cutting its input into
    /// spans writes its next bytes into memory it used before, instead of touching fresh pages for every span
    /// (Runtime/MemberSpans.swift). At most `limit` free blocks are kept, none over `maxBlockBytes` (a block grown
    /// for one large record is not kept for the rest of the input); the others are freed.
    final class Recycler: @unchecked Sendable {
        /// The free blocks, guarded by `lock`: a block's last holder may let go of it on any thread.
        private var free: [(base: UnsafeMutablePointer<UInt8>, capacity: Int)] = []
        private let lock = Lock()
        let limit: Int
        let maxBlockBytes: Int

        init(limit: Int, maxBlockBytes: Int = 4 << 20) {
            self.limit = limit
            self.maxBlockBytes = maxBlockBytes
        }

        deinit {
            for block in free { block.base.deallocate() }
        }

        /// A free block of at least `capacity` bytes, or nil (the caller allocates one).
        fileprivate func take(_ capacity: Int) -> (UnsafeMutablePointer<UInt8>, Int)? {
            lock.withLock {
                // The smallest that fits.
                var best: Int?
                for (index, block) in free.enumerated() where block.capacity >= capacity {
                    if best.map({ block.capacity < free[$0].capacity }) ?? true { best = index }
                }
                return best.map { free.remove(at: $0) }
            }
        }

        fileprivate func giveBack(_ base: UnsafeMutablePointer<UInt8>, capacity: Int) {
            let kept = lock.withLock {
                guard free.count < limit && capacity <= maxBlockBytes else { return false }
                free.append((base, capacity))
                return true
            }
            if !kept { base.deallocate() }
        }

        /// Free blocks held (for the tests).
        var freeBlocks: Int { lock.withLock { free.count } }
    }

    private var storage: Storage
    /// The capacity the input was made with.
    private var baseCapacity: Int
    /// Where this input's memory comes from and goes back to (``Recycler``); nil: allocated and freed.
    private var recycler: Recycler?
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
        self.init(capacity: capacity, startingAt: offset, recycler: nil)
    }

    /// An empty input whose memory comes from `recycler` (when given) and goes back there.
    init(capacity: Int, startingAt offset: Int64 = 0, recycler: Recycler?) {
        storage = Storage(capacity: capacity, recycler: recycler)
        baseCapacity = capacity
        self.recycler = recycler
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
    /// While another input or a body shares the memory (``split(at:)``, ``lend(_:)``), nothing is moved here: the
    /// next write moves the unread bytes to memory of this input's own.
    /// - Returns: how many bytes were dropped (0 when the input was left as it was).
    @discardableResult
    public mutating func compact() -> Int {
        guard readerIndex > 0 else { return 0 }
        if readerIndex == writerIndex {
            writerIndex = 0
        } else if readerIndex >= 64 * 1024 && readerIndex * 2 >= writerIndex {
            guard isKnownUniquelyReferenced(&storage) else { return 0 }
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
        // Memory another input shares (a span, a lent body) is left to it: the unread bytes move to a block of the
        // input's first size again (or what they need), not of what a large record once grew it to.
        let capacity = unique ? Swift.max(needed, storage.capacity * 2) : Swift.max(needed, baseCapacity)
        let replacement = Storage(capacity: capacity, recycler: recycler)
        replacement.base.update(from: storage.base + readerIndex, count: unread)
        storage = replacement
        baseOffset += Int64(readerIndex)
        writerIndex = unread
        readerIndex = 0
    }

    // MARK: - Splitting (a compressed input cut into spans)

    /// Takes the unread bytes up to `end` as an input of their own, without copying them: the two share the memory,
    /// and this input's reader index moves to `end`. Neither writes into the other's bytes: this input's next write
    /// moves its unread bytes to other memory first (from its ``Recycler``, when it has one).
    mutating func split(at end: Int) -> FramerInput {
        precondition(end >= readerIndex && end <= writerIndex, "index out of range")
        var front = self
        front.writerIndex = end
        front.recycler = nil
        front.readsWithoutWaiting = false
        readerIndex = end
        return front
    }

    /// The bytes in `range` as a body that borrows them (no copy): it keeps this input's memory alive, and this input
    /// writes no more into that memory (its next write moves its unread bytes to other memory first).
    func lend(_ range: Range<Int>) -> Body {
        precondition(range.lowerBound >= 0 && range.upperBound <= writerIndex, "range out of bounds")
        return Body(lentBy: storage, start: range.lowerBound, count: range.count)
    }

    /// Takes this input's memory from `recycler` from now on (see ``Recycler``), in blocks of `blockCapacity` bytes
    /// (or what the unread bytes need) when memory another input shares is left to it.
    mutating func recycle(with recycler: Recycler, blockCapacity: Int? = nil) {
        self.recycler = recycler
        if let blockCapacity { baseCapacity = blockCapacity }
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
