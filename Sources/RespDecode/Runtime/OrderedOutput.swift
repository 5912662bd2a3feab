internal import CShims
import Glibc

/// Records framed together, decoded by one worker into one buffer, written with one `write(2)`.
///
/// A batch is filled by its stream's reader, then owned by one worker until `done`, then by the stream's writer;
/// `done` and the hand-overs are guarded by the stream's monitor.
final class Batch: @unchecked Sendable {
    var items: BatchItems
    /// Bytes of the items' bodies: what makes the batch full.
    var bytes = 0
    /// Memory the items hold: what the in-flight budget counts. As `bytes`, but a lent body counts the block it keeps
    /// alive, once (``FramedItem/weigh(lastBlock:)``).
    var held = 0
    private var lastBlock: ObjectIdentifier?
    let output = OutputBuffer(capacity: 64 * 1024)
    /// The batch's CDXJ index lines (`--index-file`).
    let indexOutput = OutputBuffer(capacity: 4 * 1024)
    var tally = Tally()
    var done = false
    /// What the workers make of these items, when not the pool's own (a `serve` request with options of its own).
    var writer: (any LineWriter)?

    /// A batch with room for `capacity` records before its memory grows.
    init(capacity: Int) {
        items = BatchItems(capacity: capacity)
    }

    /// Adds record number `seq` of the input named `input` (its line's `input`), resolving a revisit against
    /// `revisits` (`--resolve-revisits`). Returns whether the batch is full now (to be handed over).
    func add(_ item: consuming FramedItem, seq: Int, input: String?, revisits: inout RevisitDigests?) -> Bool {
        if revisits != nil, case .record(var record) = item, record.warc?.payloadDigest != nil {
            revisits?.resolve(&record, origin: RecordOrigin(seq: seq, input: input, offset: item.offset))
            item = .record(record)
        }
        let source = ResultLine.Source(seq: seq, offset: item.offset, length: item.length, input: input)
        let weight = item.weigh(lastBlock: &lastBlock)
        bytes += weight.bytes
        held += weight.held
        // Moved in, not copied: a copy retains every string and array of the record once more.
        items.append(item, source)
        return items.count >= JobPool.batchRecords || bytes >= JobPool.batchBytes
    }

    func reset() {
        writer = nil
        items.removeAll()
        bytes = 0
        held = 0
        lastBlock = nil
        output.removeAll(shrinkingTo: 1 << 20)
        indexOutput.removeAll(shrinkingTo: 1 << 20)
        tally = Tally()
        done = false
    }
}

/// The items of a batch: moved in by the reader and moved out, in order, by the worker that decodes them.
///
/// Not an Array, for two measured costs of one (bench/small's 2,000 plists, `perf record -e page-faults`): an array
/// filled one record at a time grows by copies into fresh memory (a `FramedItem` is a few hundred bytes), and it can
/// only hand its elements out without copying them from the back (`popLast`), so the worker reversed each batch
/// into a second array first. Together that was about a third of the page faults of a run after start-up. Here a
/// batch's memory is sized from the stream's batches before it (``OrderedOutput/makeBatch()``), so that it seldom
/// grows, and is kept for the batch's next use.
struct BatchItems: ~Copyable {
    private var base: UnsafeMutablePointer<(item: FramedItem, source: ResultLine.Source)>
    private var capacity: Int
    /// Items held.
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = Swift.max(capacity, 1)
        base = .allocate(capacity: self.capacity)
    }

    deinit {
        base.deinitialize(count: count)
        base.deallocate()
    }

    var isEmpty: Bool { count == 0 }

    /// Moves `item` in after the others.
    mutating func append(_ item: consuming FramedItem, _ source: ResultLine.Source) {
        if count == capacity {
            let grown = UnsafeMutablePointer<(item: FramedItem, source: ResultLine.Source)>.allocate(
                capacity: capacity * 2)
            grown.moveInitialize(from: base, count: count)
            base.deallocate()
            base = grown
            capacity *= 2
        }
        (base + count).initialize(to: (item, source))
        count += 1
    }

    /// Moves every item out to `body`, first to last, and leaves none (each is freed when `body` is done with it).
    mutating func removeEach(_ body: (consuming FramedItem, ResultLine.Source) -> Void) {
        let n = count
        // Counted as gone before the first is moved out, so that nothing is freed twice.
        count = 0
        for i in 0..<n {
            let (item, source) = (base + i).move()
            body(item, source)
        }
    }

    /// Frees every item, keeping the memory.
    mutating func removeAll() {
        base.deinitialize(count: count)
        count = 0
    }
}

/// One stream's lines, written in input order: batches go to the pool as the reader fills them and are written by
/// this stream's writer thread as soon as they and all before them are decoded. Reading, decoding and writing
/// overlap; the reader waits when the window is full.
///
/// With a ``LineSink`` instead of a descriptor (a ``DecodeStream``), there is no writer thread: the worker that
/// completes the oldest batch delivers it, and every later one that is done, to the sink, one worker at a time.
final class OrderedOutput: @unchecked Sendable {
    private let pool: JobPool
    private let descriptor: Int32
    private let sink: (any LineSink)?
    /// Sink mode: a worker is delivering; the lines that `finishDelivering` waits for.
    private var delivering = false
    private var whenDelivered: (@Sendable (Tally) -> Void)?
    /// Sink mode: called (outside the lock) after each delivered batch.
    var onRetire: (@Sendable () -> Void)?
    /// Where the batches' index lines go (`--index-file`), if anywhere.
    private let indexDescriptor: Int32?
    private let statistics: Statistics
    private let monitor = Monitor()
    private var inFlight = FIFO<Batch>()
    private var inFlightBytes = 0
    private var spare: [Batch] = []
    /// Most records a batch of this stream has held: what a new batch makes room for. A stream's first batch starts
    /// with room for 64 and grows as it must; later ones seldom need to (a batch is full at `JobPool.batchRecords`
    /// records or `JobPool.batchBytes` of bodies, so its count follows the input's record sizes).
    private var batchCapacity = 64
    private var finished = false
    private var writer: WorkerThread?
    /// What this stream's writer counted.
    private(set) var tally = Tally()
    /// Set when output failed; the reader stops at its next look.
    private(set) var failure: OutputFailure?

    init(pool: JobPool, descriptor: Int32, indexDescriptor: Int32? = nil, statistics: Statistics) {
        self.pool = pool
        self.descriptor = descriptor
        self.indexDescriptor = indexDescriptor
        self.statistics = statistics
        self.sink = nil
        pool.streamOpened()
        writer = WorkerThread { [self] in writeInOrder() }
    }

    /// Sink mode: lines go to `sink` from the workers (see the type's comment).
    init(pool: JobPool, sink: any LineSink, statistics: Statistics) {
        self.pool = pool
        self.descriptor = -1
        self.indexDescriptor = nil
        self.statistics = statistics
        self.sink = sink
        pool.streamOpened()
    }

    /// Whether a batch can be submitted without waiting (sink mode: the stream holds it otherwise).
    var hasRoom: Bool {
        monitor.withLock { inFlight.isEmpty || (inFlight.count < pool.window && inFlightBytes < pool.budgetBytes) }
    }

    /// Sink mode: no batch will be submitted any more; `completion` runs (on some thread) once every batch is
    /// delivered, with the stream's counts.
    func finishDelivering(_ completion: @escaping @Sendable (Tally) -> Void) {
        let now: Bool = monitor.withLock {
            finished = true
            guard inFlight.isEmpty, !delivering else {
                whenDelivered = completion
                return false
            }
            return true
        }
        if now {
            pool.streamClosed()
            completion(tally)
        }
    }

    /// Sink mode: delivers the oldest batches that are done, in order, unless another worker is at it (which then
    /// delivers this one too: it looks again before it stops).
    private func deliverReady(to sink: any LineSink) {
        while true {
            let batch: Batch? = monitor.withLock {
                guard !delivering, let head = inFlight.first, head.done else { return nil }
                delivering = true
                return head
            }
            guard let batch else { return }
            sink.deliver(UnsafeRawBufferPointer(batch.output.bytes), report: BatchReport(batch.tally))
            tally.merge(batch.tally)
            statistics.add(batch.tally)
            let completion: (@Sendable (Tally) -> Void)? = monitor.withLock {
                _ = inFlight.removeFirst()
                inFlightBytes -= batch.held
                batch.reset()
                if spare.count < pool.window { spare.append(batch) }
                delivering = false
                guard finished, inFlight.isEmpty, let completion = whenDelivered else { return nil }
                whenDelivered = nil
                return completion
            }
            onRetire?()
            if let completion {
                pool.streamClosed()
                completion(tally)
                return
            }
        }
    }

    /// A batch to fill (recycled when one is free).
    func makeBatch() -> Batch {
        let (recycled, capacity) = monitor.withLock { (spare.popLast(), batchCapacity) }
        return recycled ?? Batch(capacity: capacity)
    }

    /// Whether output failed (the reader should stop).
    var hasFailed: Bool { monitor.withLock { failure != nil } }

    /// Hands a filled batch to the workers; waits while the window is full.
    func submit(_ batch: Batch) {
        monitor.withLock {
            while !inFlight.isEmpty && (inFlight.count >= pool.window || inFlightBytes >= pool.budgetBytes) {
                monitor.wait()
            }
            inFlight.append(batch)
            inFlightBytes += batch.held
            batchCapacity = max(batchCapacity, batch.items.count)
        }
        pool.submit(batch, from: self)
    }

    /// Called by a worker when `batch` is decoded.
    func completed(_ batch: Batch) {
        monitor.withLock {
            batch.done = true
            monitor.broadcast()
        }
        if let sink { deliverReady(to: sink) }
    }

    /// Waits until every submitted batch is written, and stops the writer.
    /// - Returns: why output failed, if it did.
    func finish() -> OutputFailure? {
        monitor.withLock {
            finished = true
            monitor.broadcast()
        }
        if writer != nil { pool.streamClosed() }
        writer?.join()
        writer = nil
        return failure
    }

    private func writeInOrder() {
        while true {
            let batch: Batch? = monitor.withLock {
                while true {
                    if let head = inFlight.first, head.done { return head }
                    if inFlight.isEmpty && finished { return nil }
                    monitor.wait()
                }
            }
            guard let batch else { return }
            // After a failure, lines are dropped but batches still retire, so that the reader never waits forever.
            let failed = monitor.withLock { failure != nil }
            var result: OutputFailure?
            if !failed { result = write(batch.output, to: descriptor) }
            if !failed, result == nil, let indexDescriptor { result = write(batch.indexOutput, to: indexDescriptor) }
            tally.merge(batch.tally)
            statistics.add(batch.tally)
            monitor.withLock {
                _ = inFlight.removeFirst()
                inFlightBytes -= batch.held
                if let result, failure == nil { failure = result }
                batch.reset()
                if spare.count < pool.window { spare.append(batch) }
                monitor.broadcast()
            }
        }
    }

    private func write(_ buffer: OutputBuffer, to descriptor: Int32) -> OutputFailure? {
        guard let error = Descriptors.writeAll(descriptor, UnsafeRawBufferPointer(buffer.bytes)) else { return nil }
        if descriptor == indexDescriptor { return .failed("the index file: \(String(cString: strerror(error)))") }
        return error == EPIPE || error == ECONNRESET ? .closed : .failed(String(cString: strerror(error)))
    }
}
