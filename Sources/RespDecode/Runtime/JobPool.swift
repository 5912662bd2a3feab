internal import CShims
import Glibc

/// The decoding workers (`--jobs`): threads that take batches from any stream, first come first served, and write
/// their lines. Shared by every stream of a run and every connection of `serve`.
public final class JobPool: @unchecked Sendable {
    /// How many batches a stream may have in flight, and how many bytes they hold: enough to keep every worker busy
    /// while the reader frames ahead and the writer writes behind, and no more (docs/reliability.md#limits: memory
    /// bounded by the limits
    /// and the jobs).
    let window: Int
    let budgetBytes: Int
    /// Workers.
    public let jobs: Int
    /// Whether each record's decode time goes into its batch's report (``BatchReport/decodeNanoseconds``).
    let timesRecords: Bool

    private let monitor = Monitor()
    /// What a worker takes: a batch of one stream's records to decode, or a task (framing a span of a compressed
    /// input: Runtime/MemberSpans.swift).
    private enum Work {
        case batch(Batch, OrderedOutput)
        case task(@Sendable () -> Void)
    }
    private var queue = FIFO<Work>()
    /// Framing tasks, taken before any batch: what they frame feeds every worker, and a reader waits for them in input
    /// order, while the batches queued are bounded by their streams' windows anyway.
    private var tasks = FIFO<Work>()
    private var closing = false
    /// Each worker's own wake-up, and the idle workers, the most recently idle last. A new batch wakes that one, and
    /// only when no worker is busy or batches pile up: when one worker keeps up (tiny records, where the reader is the
    /// bottleneck) the others stay asleep instead of taking turns, and the work stays on one warm core, as with one
    /// job.
    private var wakeUps: [Monitor.Condition] = []
    private var idle: [Int] = []
    private var isIdle: [Bool] = []
    /// Streams open on the pool.
    private var streams = 0
    private var threads: [WorkerThread] = []

    /// Starts `jobs` workers writing lines with `writer`; by default they decode with `configuration`
    /// (``CompoundDecoder``), or write CDXJ index lines for `--output cdxj` (``CDXJWriter``).
    /// - Parameters:
    ///   - configuration: the settings of decoding and output.
    ///   - writer: what the workers make of each item. Default: as `configuration.outputStyle` says.
    ///   - indexWriter: also write each item's line with this into its batch's `indexOutput` (`--index-file`).
    ///   - timesRecords: time each record's decoding, for ``LineSink``s' reports (`serve`'s latency histogram).
    public init(
        configuration: Configuration, writer: (any LineWriter)? = nil, indexWriter: (any LineWriter)? = nil,
        timesRecords: Bool = false
    ) {
        jobs = max(1, configuration.jobs)
        self.timesRecords = timesRecords
        window = 2 * jobs + 2
        budgetBytes = jobs * Self.budgetBytesPerJob
        let decoder: any LineWriter =
            writer
            ?? (configuration.outputStyle == .cdxj
                ? CDXJWriter(types: configuration.warcTypes) : CompoundDecoder(configuration: configuration))
        let pretty = writer == nil && configuration.outputStyle == .pretty
        wakeUps = (0..<jobs).map { _ in monitor.makeCondition() }
        isIdle = Array(repeating: false, count: jobs)
        for worker in 0..<jobs {
            threads.append(
                WorkerThread { [self] in work(worker, decoder: decoder, index: indexWriter, pretty: pretty) })
        }
    }

    /// How much lower the workers' priority is than the reader's (nice steps).
    static let workerNice: Int32 = 3

    /// Bytes held in flight per job before a reader waits: bodies, a lent body's block whole (`Batch.held`).
    static let budgetBytesPerJob = 2 << 20
    /// A batch is handed to the workers when it holds this many records…
    static let batchRecords = 2048
    /// …or this many body bytes.
    static let batchBytes = 256 * 1024

    /// Stops the workers once the queue is empty. Call when no stream will submit again.
    public func close() {
        monitor.withLock {
            closing = true
            for wakeUp in wakeUps { wakeUp.signal() }
        }
        for thread in threads { thread.join() }
        threads = []
    }

    /// Work waiting for a worker (batches and framing tasks): `serve`'s queue depth.
    public var queueDepth: Int { monitor.withLock { queue.count + tasks.count } }

    /// Whether more work waits than the workers can take up soon: four streams' windows of batches queued
    /// (`serve`'s `/readyz`).
    public var isSaturated: Bool { queueDepth >= 4 * window }

    func streamOpened() { monitor.withLock { streams += 1 } }
    func streamClosed() { monitor.withLock { streams -= 1 } }

    func submit(_ batch: Batch, from stream: OrderedOutput) {
        monitor.withLock {
            queue.append(.batch(batch, stream))
            // A worker is woken when none is busy, or when batches are piling up: while one busy worker keeps up,
            // the next batch waits for it rather than for a second worker to take a core from the reader. With
            // several streams (serve's connections) every batch wakes a worker, so that one connection's long
            // batch never holds up another's.
            if idle.count == jobs || queue.count > 1 || streams > 1, let worker = idle.popLast() {
                isIdle[worker] = false
                wakeUps[worker].signal()
            }
        }
    }

    /// Runs `task` on a worker, before the batches waiting: a stream's reader hands it work that would otherwise be done
    /// on its own thread (inflating and framing a span of a `.warc.gz`), and waits for the result itself. An idle
    /// worker is always woken: the reader needs the result.
    func perform(_ task: @escaping @Sendable () -> Void) {
        monitor.withLock {
            tasks.append(.task(task))
            if let worker = idle.popLast() {
                isIdle[worker] = false
                wakeUps[worker].signal()
            }
        }
    }

    /// Writes the line of `item` (and its index line, with `index`) into `batch`'s outputs; with `scratch`, the line is
    /// written there first and pretty-printed into the batch.
    private static func write(
        _ item: FramedItem, source: ResultLine.Source, decoder: any LineWriter, index: (any LineWriter)?,
        scratch: OutputBuffer?, into batch: Batch
    ) -> LineOutcome {
        let outcome: LineOutcome
        if let scratch {
            scratch.removeAll()
            outcome = decoder.writeLine(for: item, source: source, into: scratch)
            // A record skipped by --select-… has no line (docs/output.md#selecting-records).
            if scratch.count > 0 {
                PrettyPrinter.append(
                    UnsafeBufferPointer(start: scratch.base, count: scratch.count - 1), to: batch.output)
            }
        } else {
            outcome = decoder.writeLine(for: item, source: source, into: batch.output)
        }
        if let index { _ = index.writeLine(for: item, source: source, into: batch.indexOutput) }
        return outcome
    }

    private func work(_ worker: Int, decoder: any LineWriter, index: (any LineWriter)?, pretty: Bool) {
        // The reader feeds every worker; when there are more busy threads than cores (tiny records: framing costs
        // about what decoding does), it must not be the one that waits for a core, or more jobs make the run slower.
        // Workers therefore run at a slightly lower priority (nice +workerNice, this thread only: Linux threads have
        // their own nice value); with decoding-heavy input the reader is mostly blocked and workers get every core.
        _ = respdecode_lower_this_thread(Self.workerNice)
        let scratch = OutputBuffer()
        while true {
            let next: Work? = monitor.withLock {
                while queue.isEmpty && tasks.isEmpty && !closing {
                    if !isIdle[worker] {
                        isIdle[worker] = true
                        idle.append(worker)
                    }
                    wakeUps[worker].wait()
                }
                if isIdle[worker] {
                    isIdle[worker] = false
                    idle.removeAll { $0 == worker }
                }
                return tasks.removeFirst() ?? queue.removeFirst()
            }
            guard let next else { return }
            guard case .batch(let batch, let stream) = next else {
                if case .task(let task) = next { task() }
                continue
            }
            // A stream with options of its own (a `serve` request) brings its own decoder.
            let decoder = batch.writer ?? decoder
            // The items are moved out of the batch in order, never copied: a record copied (as a for-in loop over
            // an array does) retains and releases each of its strings and arrays once more, a few per cent of a run
            // of small records. Each one's body is freed as soon as its line is written, and the batch keeps its
            // memory for its next use.
            let lineScratch = pretty ? scratch : nil
            batch.items.removeEach { framed, source in
                let started = timesRecords ? MonotonicClock.nanoseconds : 0
                let outcome: LineOutcome
                // The WARC payload digest is checked here, on the workers, not on the one reading thread.
                if decoder.checksPayloadDigests {
                    outcome = Self.write(
                        framed, source: source, decoder: decoder, index: index, scratch: lineScratch, into: batch)
                } else {
                    outcome = Self.write(
                        framed.checkingPayloadDigest(), source: source, decoder: decoder, index: index,
                        scratch: lineScratch, into: batch)
                }
                batch.tally.count(outcome)
                // One time per record the report counts (not the skipped ones, nor those written undecoded).
                if timesRecords && outcome.skippedBy == nil && outcome.decoded {
                    batch.tally.decodeNanoseconds.append(MonotonicClock.nanoseconds &- started)
                }
            }
            stream.completed(batch)
        }
    }
}
