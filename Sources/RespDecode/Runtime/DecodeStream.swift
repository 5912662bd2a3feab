import Glibc

/// Where a ``DecodeStream``'s lines go: `serve`'s connections and HTTP requests, on their event loop.
///
/// Every call comes from a worker thread. ``deliver(_:report:)`` calls come one at a time for a stream, in order, and
/// ``finished(_:)`` after the last of them; ``wantsInput()`` may come from another worker at any time, during a
/// delivery or even after `finished` (a sink ignores it then). A sink hands the bytes to its event loop (copying
/// them: they are reused after the call) and returns.
public protocol LineSink: AnyObject, Sendable {
    /// One batch's lines, in input order after every batch delivered before.
    /// - Parameters:
    ///   - lines: the lines, each ending in a line feed; valid during the call only.
    ///   - report: what they hold, for metrics.
    func deliver(_ lines: UnsafeRawBufferPointer, report: BatchReport)

    /// Whether the sink can take more lines now. While it cannot, the stream frames no more records, until
    /// ``DecodeStream/outputDrained()``: a client that reads nothing holds at most a window of lines. A sink that
    /// turns this false must call `outputDrained()` once it is true again.
    var hasRoom: Bool { get }

    /// The stream wants input again: its unframed bytes fell below ``DecodeStream/inputHighWater``.
    func wantsInput()

    /// Every line was delivered (after ``DecodeStream/end(seenEOF:)`` or ``DecodeStream/cancel()``); nothing is
    /// called after this.
    func finished(_ summary: RunSummary)
}

/// What one delivered batch held: `serve`'s metrics.
public struct BatchReport: Sendable {
    /// Result lines (records decoded or failed; not the stubs of skipped records).
    public var records = 0
    /// Lines with `"ok":true`.
    public var ok = 0
    /// Lines and lines with `"ok":false`, by decoder.
    public var byDecoder: [String: (records: Int, errors: Int)] = [:]
    /// Lines by `error.code`.
    public var errorsByCode: [String: Int] = [:]
    /// Each record's decode time, in nanoseconds, when the pool times records (``JobPool/init(configuration:writer:indexWriter:timesRecords:)``).
    public var decodeNanoseconds: [UInt64] = []

    init(_ tally: Tally) {
        records = tally.records
        ok = tally.ok
        for (name, count) in tally.byDecoder { byDecoder[name] = (count.records, count.errors) }
        errorsByCode = tally.errorsByCode
        decodeNanoseconds = tally.decodeNanoseconds
    }
}

/// One stream of records pushed in as its bytes arrive (a `serve` connection, an HTTP request body), rather than
/// read from a descriptor by a thread of its own as ``StreamRunner`` does: no thread waits on a client.
///
/// The caller (an event loop) hands over bytes with ``feed(_:)`` and the end with ``end(seenEOF:)``. Framing runs as
/// a task on the ``JobPool``'s workers, one task at a time per stream, over every byte that has arrived; records go
/// in batches to the same workers, and the lines come back through the ``LineSink`` in input order. The output is
/// that of ``StreamRunner`` on the same bytes: framing detected from the first bytes, `seq` from 0, no `input` key,
/// a batch handed over whenever the bytes that have arrived are framed (the stream's input is idle).
///
/// Nothing blocks: when a stream's window of batches is full, or its sink is full, framing stops and resumes when a
/// batch is delivered or the sink drains; bytes wait meanwhile, and the caller stops reading once more than
/// ``inputHighWater`` of them wait (``feed(_:)`` says so). A `.warc.gz` is framed in one task at a time here, not in
/// spans; a WACZ (a ZIP file) needs random access and gets one error line.
public final class DecodeStream: @unchecked Sendable {
    /// Unframed bytes past which ``feed(_:)`` asks the caller to stop reading (until ``LineSink/wantsInput()``).
    public static let inputHighWater = 1 << 20

    private let configuration: Configuration
    private let pool: JobPool
    private let statistics: Statistics
    private let sink: any LineSink
    private let output: OrderedOutput
    private let writer: (any LineWriter)?
    private let monitor = Monitor()

    // Guarded by `monitor`: what the caller hands over, and the task's state.
    private var inbox: [UInt8] = []
    private var ended = false
    private var seenEOF = false
    private var cancelled = false
    private var taskScheduled = false
    private var askedToPause = false
    private var finishing = false
    /// A full batch waits for room in the window (set by the task, read by retires).
    private var held = false

    // Owned by the framing task (one at a time).
    // Grown on first use: an idle connection's stream holds no buffer.
    private var buffer = FramerInput()
    private var framer: (any RecordFramer)?
    private var discarding = false
    private var seq = 0
    private var batch: Batch
    private var summary = RunSummary()
    private var revisits: RevisitDigests?

    /// - Parameters:
    ///   - configuration: how records are framed and decoded (its `input` forces a framing).
    ///   - pool: the workers, shared with every other stream.
    ///   - statistics: where the counts go.
    ///   - sink: where the lines go.
    ///   - writer: what the workers make of this stream's records; nil: the pool's (its decoder).
    public init(
        configuration: Configuration, pool: JobPool, statistics: Statistics, sink: any LineSink,
        writer: (any LineWriter)? = nil
    ) {
        self.configuration = configuration
        self.pool = pool
        self.statistics = statistics
        self.sink = sink
        self.writer = writer
        output = OrderedOutput(pool: pool, sink: sink, statistics: statistics)
        batch = output.makeBatch()
        if configuration.resolveRevisits { revisits = RevisitDigests(capacity: configuration.maxRevisitDigests) }
        output.onRetire = { [weak self] in self?.batchRetired() }
    }

    /// Hands over bytes read from the client.
    /// - Returns: false when the caller should stop reading until ``LineSink/wantsInput()``.
    @discardableResult
    public func feed(_ bytes: UnsafeRawBufferPointer) -> Bool {
        statistics.addBytesRead(bytes.count)
        return monitor.withLock {
            guard !ended, !cancelled else { return true }
            inbox.append(contentsOf: bytes.bindMemory(to: UInt8.self))
            scheduleLocked()
            if inbox.count > Self.inputHighWater {
                askedToPause = true
                return false
            }
            return true
        }
    }

    /// No more bytes will come. `seenEOF`: the client ended its input (a record it left unfinished is
    /// `truncatedRecord`); false: reading stopped (a drain, a timeout), and a record cut short gets no line.
    public func end(seenEOF: Bool) {
        monitor.withLock {
            guard !ended, !cancelled else { return }
            ended = true
            self.seenEOF = seenEOF
            scheduleLocked()
        }
    }

    /// The client is gone: frame nothing more; the batches in flight are still decoded (the sink may drop their
    /// lines), then ``LineSink/finished(_:)``.
    public func cancel() {
        monitor.withLock {
            guard !cancelled else { return }
            cancelled = true
            inbox = []
            scheduleLocked()
        }
    }

    /// The sink can take lines again (after ``LineSink/hasRoom`` was false).
    public func outputDrained() {
        monitor.withLock { scheduleLocked() }
    }

    /// Bytes handed over and not framed yet.
    public var waitingBytes: Int { monitor.withLock { inbox.count } }

    private func scheduleLocked() {
        guard !taskScheduled, !finishing else { return }
        taskScheduled = true
        pool.perform { [self] in frameTask() }
    }

    /// A batch was delivered: a held batch may go now.
    private func batchRetired() {
        monitor.withLock { if held { scheduleLocked() } }
    }

    /// The framing task: takes every byte that has arrived, frames it, hands the records to the pool; ends the stream
    /// once its input ended and everything is framed.
    private func frameTask() {
        while true {
            let (bytes, isEnd, eof, isCancelled, blocked) = monitor.withLock {
                () -> ([UInt8], Bool, Bool, Bool, Bool) in
                if cancelled { return ([], false, false, true, false) }
                if !sink.hasRoom || (held && !output.hasRoom) {
                    // Stop; a retire or a drain schedules the task again (both look at these under the lock).
                    taskScheduled = false
                    return ([], false, false, false, true)
                }
                let bytes = inbox
                inbox = []
                return (bytes, ended, seenEOF, false, false)
            }
            if blocked { return }
            if isCancelled {
                // Nobody wants the lines of what is framed and not handed over: dropped.
                buffer = FramerInput()
                batch.reset()
                monitor.withLock { held = false }
                finish()
                return
            }
            // Into the buffer at once: taken from the inbox, they are nowhere else (framing may stop below).
            if !bytes.isEmpty { buffer.write(bytes) }
            let wasHeld = monitor.withLock { held }
            if wasHeld {
                output.submit(batch)
                batch = output.makeBatch()
                monitor.withLock { held = false }
            }
            // The records after a held batch are still in the buffer: framed now, not when more comes.
            if (wasHeld || !bytes.isEmpty) && !frame(last: false) { continue }
            if isEnd {
                if !frame(last: true, seenEOF: eof) || !submitBatch() { continue }
                if let framer { summary.skipped.merge(framer.skippedRecords, uniquingKeysWith: +) }
                finish()
                return
            }
            // The input is idle: what is framed gets its lines now.
            if !submitBatch() { continue }
            let (done, wake) = monitor.withLock { () -> (Bool, Bool) in
                guard inbox.isEmpty, !ended, !cancelled else { return (false, false) }
                taskScheduled = false
                defer { askedToPause = false }
                return (true, askedToPause)
            }
            if done {
                if wake { sink.wantsInput() }
                return
            }
        }
    }

    /// Frames what `buffer` holds. Returns false when it stopped because the window is full (a batch is held).
    private func frame(last: Bool, seenEOF: Bool = false) -> Bool {
        if framer == nil && !discarding {
            guard decide(last: last) else { return true }
        }
        if discarding {
            buffer.moveReaderIndex(forwardBy: buffer.readableBytes)
            _ = buffer.compact()
            return true
        }
        return drain(&framer!, last: last, seenEOF: seenEOF)
    }

    private func drain(_ framer: inout some RecordFramer, last: Bool, seenEOF: Bool) -> Bool {
        while !monitor.withLock({ held }) {
            guard
                let item = last ? framer.decodeLast(buffer: &buffer, seenEOF: seenEOF) : framer.decode(buffer: &buffer)
            else { return true }
            add(consume item)
        }
        return false
    }

    /// Picks the framing once enough bytes arrived (as the runner does); a ZIP gets its error line and the rest of
    /// the input is dropped. Returns false while undecided.
    private func decide(last: Bool) -> Bool {
        let decision = buffer.withBytes(in: buffer.readerIndex..<buffer.writerIndex, InputDetection.decide)
        // As the runner does: while the bytes cannot decide, wait for more (up to a bound), so that the decision does
        // not depend on how the input was cut.
        if !last && (configuration.input == .auto || configuration.input == .warc) && decision == .undecided
            && buffer.readableBytes < InputDetection.maxUndecidedBytes
        {
            return false
        }
        if buffer.readableBytes == 0 && last { return false }
        if configuration.input == .auto || configuration.input == .warc, decision == .zip {
            let error = RecordError(
                .malformedRecord, "a WACZ (a ZIP file) needs random access: it cannot be read from a stream")
            add(.failure(FramingFailure(offset: 0, error: error)))
            discarding = true
            return true
        }
        var format = configuration.input
        if format == .auto {
            format = buffer.withBytes(in: buffer.readerIndex..<buffer.writerIndex, InputDetection.detect) ?? .http
        }
        framer = InputDetection.framer(
            for: format, limits: configuration.limits, warcTypes: configuration.warcTypes,
            verifyDigests: configuration.verifyDigests)
        return true
    }

    private func add(_ item: consuming FramedItem) {
        let full = batch.add(item, seq: seq, input: nil, revisits: &revisits)
        seq += 1
        if full { _ = submitBatch() }
    }

    /// Hands the batch to the pool; when the window is full it is held instead (false), and framing stops.
    private func submitBatch() -> Bool {
        guard !batch.items.isEmpty else { return true }
        batch.writer = writer
        guard output.hasRoom else {
            monitor.withLock { held = true }
            return false
        }
        output.submit(batch)
        batch = output.makeBatch()
        return true
    }

    private func finish() {
        monitor.withLock {
            finishing = true
            taskScheduled = false
        }
        let summary = summary
        output.finishDelivering { [sink] tally in
            var summary = summary
            summary.records = tally.records
            summary.ok = tally.ok
            sink.finished(summary)
        }
    }
}
