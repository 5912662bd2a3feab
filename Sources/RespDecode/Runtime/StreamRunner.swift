import Glibc
public import Logging

/// Where records come from.
public enum InputSource: Sendable, Hashable {
    case standardInput
    case file(String)
    /// An open descriptor the caller owns (a `serve` connection).
    case descriptor(Int32)

    /// The name written as `input` on each line (none for standard input or a connection).
    var lineName: String? {
        switch self {
        case .standardInput, .descriptor: nil
        case .file(let path): path
        }
    }

    /// A file the runner opens (and closes) itself.
    var isFile: Bool { if case .file = self { true } else { false } }

    /// The name used in log messages.
    var logName: String { lineName ?? (self == .standardInput ? "standard input" : "the connection") }
}

/// Why output stopped.
public enum OutputFailure: Error, Sendable, Equatable {
    /// The reader went away (EPIPE). The worker stops quietly.
    case closed
    /// Writing failed otherwise (ENOSPC, EIO, …), with the system's message.
    case failed(String)
}

/// What a run did, for the exit status and statistics.
public struct RunSummary: Sendable, Equatable {
    /// Lines written.
    public var records = 0
    /// Lines with `"ok":true`.
    public var ok = 0
    /// Inputs that could not be opened or read to the end.
    public var failedInputs = 0
    /// Records read and deliberately not decoded (WARC record types not chosen), by kind.
    public var skipped: [String: Int] = [:]
    /// The signal (SIGTERM, SIGINT) that stopped reading while input was left unread, if one did.
    public var interruptedBy: Int32?
}

/// Reads inputs in large chunks and frames them on the calling thread; a ``JobPool`` decodes the records in
/// batches; a writer thread writes their lines in input order (``OrderedOutput``).
///
/// A batch is handed over when it is full and whenever input is idle (nothing more to read right now), so a reader
/// downstream sees each line without waiting for more input; each batch is one `write(2)`, whose errors, unlike
/// `print`'s, are reported. SIGTERM/SIGINT (``Shutdown``) stop the reading: every record already framed still gets
/// its line.
public final class StreamRunner {
    private let configuration: Configuration
    private let logger: Logger
    private let pool: JobPool
    private let ownsPool: Bool
    private let statistics: Statistics
    private let output: OrderedOutput
    private let idleTimeout: Double?
    private let readSize = 256 * 1024
    private var summary = RunSummary()
    private var seq = 0
    private var batch: Batch
    private var stopped = false
    /// What the workers frame, in input order: spans of `.warc.gz` inputs (Runtime/MemberSpans.swift), each with its
    /// input's assembler and name, and other inputs framed in pieces (Runtime/FramingChain.swift).
    private enum Pending {
        case span(MemberSpan, SpanAssembler, name: String?)
        case chain(FramingChain)
    }
    private var pending = FIFO<Pending>()
    private var spansInFlight = 0
    private var chainsInFlight = 0
    /// A stop cut an input framed in pieces short: what the workers framed of later inputs is dropped, so that the
    /// lines stay a prefix of those of a whole run.
    private var cutShort = false
    /// Standard input (a regular file) is being framed on the workers: read again (`-` named twice), it must wait for
    /// them, as the two share one file offset.
    private var standardInputChained = false
    /// `--resolve-revisits`: the digests of the responses read so far (in input order, here on the reading thread).
    private var revisits: RevisitDigests?

    /// - Parameters:
    ///   - configuration: how records are framed, decoded and written.
    ///   - logger: where the runner's messages go.
    ///   - outputDescriptor: where lines go. Default: standard output.
    ///   - pool: the workers to share (serve's connections share one); by default the runner starts its own
    ///     (`configuration.jobs`) and stops them at the end of `run`.
    ///   - statistics: where the counts go (`--stats`, SIGUSR1).
    ///   - idleTimeout: seconds an input may send nothing before it is taken to have ended (a log line says so; a
    ///     record it left unfinished is `truncatedRecord`, as at any end of input). Default: nil, wait for ever.
    ///   - writer: what the runner's own pool makes of each item (``RecordLineWriter`` for `frame`). Default: decode.
    ///   - indexDescriptor: where a CDXJ index of the records goes (`--index-file`), written in the same pass by the
    ///     runner's own pool; nil: none.
    public init(
        configuration: Configuration, logger: Logger, outputDescriptor: Int32 = 1, pool: JobPool? = nil,
        statistics: Statistics = Statistics(), idleTimeout: Double? = nil, writer: (any LineWriter)? = nil,
        indexDescriptor: Int32? = nil
    ) {
        self.configuration = configuration
        self.logger = logger
        self.idleTimeout = idleTimeout
        let indexWriter = indexDescriptor.map { _ in CDXJWriter(types: configuration.warcTypes) }
        self.pool = pool ?? JobPool(configuration: configuration, writer: writer, indexWriter: indexWriter)
        self.ownsPool = pool == nil
        self.statistics = statistics
        self.output = OrderedOutput(
            pool: self.pool, descriptor: outputDescriptor, indexDescriptor: pool == nil ? indexDescriptor : nil,
            statistics: statistics)
        self.batch = output.makeBatch()
        if configuration.resolveRevisits { revisits = RevisitDigests(capacity: configuration.maxRevisitDigests) }
    }

    /// Decodes every input in turn, then (`--files-from`) every file named in `list`, as its lines arrive
    /// (``FileList``); `seq` runs on across inputs.
    /// - Throws: ``OutputFailure`` when lines can no longer be written.
    public func run(_ inputs: [InputSource], thenFilesNamedIn list: InputSource? = nil) throws(OutputFailure)
        -> RunSummary
    {
        statistics.expect(bytes: list == nil ? Self.totalSize(of: inputs) : nil)
        for (index, input) in inputs.enumerated() where !stopped {
            run(input, moreFollow: index < inputs.count - 1 || list != nil)
        }
        if let list, !stopped { runFiles(namedIn: list) }
        takePending(all: true)
        submitBatch()
        let failure = output.finish()
        if ownsPool { pool.close() }
        summary.records = output.tally.records
        summary.ok = output.tally.ok
        if let failure { throw failure }
        return summary
    }

    /// The sum of the inputs' sizes when every one is a regular file (for progress), else nil.
    private static func totalSize(of inputs: [InputSource]) -> Int64? {
        var total: Int64 = 0
        for input in inputs {
            var info = stat()
            switch input {
            case .standardInput: guard fstat(STDIN_FILENO, &info) == 0 else { return nil }
            case .file(let path): guard stat(path, &info) == 0 else { return nil }
            case .descriptor: return nil
            }
            guard info.st_mode & S_IFMT == S_IFREG else { return nil }
            total += Int64(info.st_size)
        }
        return total
    }

    /// The descriptor to read `input` from (opened for a file, which the caller closes); nil, logged and counted, when
    /// it cannot be opened.
    private func open(_ input: InputSource) -> Int32? {
        switch input {
        case .standardInput:
            return STDIN_FILENO
        case .descriptor(let descriptor):
            return descriptor
        case .file(let path):
            let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                logger.error("cannot open \(path): \(String(cString: strerror(errno)))")
                summary.failedInputs += 1
                return nil
            }
            return fd
        }
    }

    /// Reads the names in `list` as they arrive and decodes each file in turn. A line that names no local file is
    /// logged and counted as a failed input, like a file that cannot be opened.
    private func runFiles(namedIn list: InputSource) {
        guard let fd = open(list) else { return }
        defer { if case .file = list { close(fd) } }
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 1)
        defer { chunk.deallocate() }
        var line: [UInt8] = []
        var overlong = false
        func take() {
            defer {
                line.removeAll(keepingCapacity: true)
                overlong = false
            }
            if overlong {
                logger.error("a line of \(list.logName) is longer than \(FileList.maxLineBytes) bytes: not a file name")
                summary.failedInputs += 1
                return
            }
            switch FileList.entry(line) {
            case .none: return
            case .path(let path): run(.file(path), moreFollow: true)
            case .invalid(let why):
                logger.error("\(list.logName): '\(String(decoding: line.prefix(200), as: UTF8.self))': \(why)")
                summary.failedInputs += 1
            }
        }
        while !stopped {
            // About to block on a list with no name in it: the files named so far get their lines now.
            if !inputReady(fd) {
                takePending(all: true)
                submitBatch()
            }
            let n = readSome(fd, into: chunk, input: list, counting: false)
            if n <= 0 { break }
            var rest = UnsafeBufferPointer(rebasing: chunk.bindMemory(to: UInt8.self)[0..<n])
            while !rest.isEmpty && !stopped {
                let end = rest.firstIndex(of: 0x0A)
                let piece = UnsafeBufferPointer(rebasing: rest[..<(end ?? rest.endIndex)])
                if line.count + piece.count > FileList.maxLineBytes {
                    overlong = true
                } else {
                    line.append(contentsOf: piece)
                }
                guard let end else { break }
                take()
                rest = UnsafeBufferPointer(rebasing: rest[(end + 1)...])
            }
        }
        // The last name needs no line end; a stop leaves the rest of the list unread.
        if !stopped && (!line.isEmpty || overlong) { take() }
    }

    /// Decodes `input`; `moreFollow`: other inputs may come after it (a chain is worth starting only when it can be
    /// framed beside another input).
    private func run(_ input: InputSource, moreFollow: Bool) {
        // Lines of the inputs before this one that are ready.
        takePending(all: input == .standardInput && standardInputChained)
        if input == .standardInput { standardInputChained = false }
        // A stop cut an input before this one short: nothing after it is read.
        if cutShort { return }
        guard let fd = open(input) else { return }
        // A chain (several inputs at once) closes its input itself once it is framed.
        var chained = false
        defer { if input.isFile && !chained { close(fd) } }

        // The input's bytes, read straight into (no copy per chunk) and lent to the framer. Bodies may borrow its
        // memory (`FramerInput.lend`): the blocks they held come back for later reads, as many as the in-flight
        // budget can hold.
        var buffer = FramerInput(
            capacity: readSize, recycler: FramerInput.Recycler(limit: pool.window + pool.budgetBytes / readSize))
        // (Also what decides below whether the input may be framed on a worker: one fstat per input.)
        buffer.readsWithoutWaiting = isRegularFile(fd)
        // Detection wants the first bytes; a pipe may deliver them a few at a time. An idle pipe gets decided on
        // what it has sent, so its lines are not held back — unless what it has sent cannot decide yet (`WAR`, `{`):
        // then reading blocks for more.
        var ended = false
        func decision() -> InputDetection.Decision {
            buffer.withBytes(in: buffer.readerIndex..<buffer.writerIndex, InputDetection.decide)
        }
        let detecting = configuration.input == .auto || configuration.input == .warc
        while buffer.readableBytes < InputDetection.prefixLength && (buffer.readableBytes == 0 || inputReady(fd))
            || detecting && buffer.readableBytes < InputDetection.maxUndecidedBytes && decision() == .undecided
        {
            let n = readSome(fd, into: &buffer, input: input)
            if n <= 0 {
                // As in `pump`: a stop is not the end of the input, so a record it cuts is not reported truncated.
                ended = n == 0 || !stopped
                break
            }
        }
        if stopped && buffer.readableBytes == 0 { return }
        if configuration.input == .auto || configuration.input == .warc, decision() == .zip {
            takePending(all: true)
            if cutShort { return }
            runArchive(input, descriptor: fd, counted: buffer.readableBytes)
            return
        }
        var format = configuration.input
        if format == .auto {
            let detected = buffer.withBytes(in: buffer.readerIndex..<buffer.writerIndex, InputDetection.detect)
            if detected == nil && buffer.readableBytes >= 5 {
                logger.warning("\(input.logName) does not start like any known framing; reading it as raw HTTP")
            }
            format = detected ?? .http
        }
        if format == .warc && pool.jobs > 1 && MemberSpans.startsWithMember(buffer) {
            runSpans(&buffer, fd: fd, ended: ended, input: input)
            return
        }
        var framer = InputDetection.framer(
            for: format, limits: configuration.limits, warcTypes: configuration.warcTypes,
            verifyDigests: configuration.verifyDigests)
        // A chain pays only beside another input: one input alone is framed one piece after another wherever that
        // happens, and handing its pieces from a worker to the reader cost 7-16 % more CPU on bench/small's streams of
        // small records (docs/framings.md#several-inputs-at-once). So the reader frames an input itself unless more
        // inputs follow or earlier ones are still being framed or inflated on the workers.
        if pool.jobs > 1 && !stopped && (moreFollow || !pending.isEmpty) && buffer.readsWithoutWaiting {
            // At most `jobs` inputs are framed at once: wait for the oldest when as many are.
            takePending(makingRoom: true)
            if cutShort { return }
            let chain = FramingChain(
                framer: framer, buffer: buffer, ended: ended, descriptor: fd, closesDescriptor: input.isFile,
                readSize: readSize, statistics: statistics, logger: logger, name: input.lineName,
                logName: input.logName)
            chained = true
            if input == .standardInput { standardInputChained = true }
            pending.append(.chain(chain))
            chainsInFlight += 1
            chain.start(on: pool)
            return
        }
        // The records of inputs before this one come first.
        takePending(all: true)
        if cutShort { return }
        // (The framer is opened from the existential once: `pump` calls it directly, once per item.)
        pump(&framer, &buffer, fd: fd, ended: ended, input: input)
    }

    /// Whether `fd` is a regular file (always ready, never idle): such an input may be framed on the workers.
    private func isRegularFile(_ fd: Int32) -> Bool {
        var info = stat()
        return fstat(fd, &info) == 0 && info.st_mode & S_IFMT == S_IFREG
    }

    /// Reads the WACZ in `descriptor` (docs/framings.md#wacz): each WARC entry, in name order, is an input of its own
    /// to the WARC framer, named `NAME#ENTRY` (`-#ENTRY` on standard input). An archive that cannot be read is one
    /// error line; so is an entry that a limit refuses or that cannot be read to its end (after the lines of the
    /// records read before).
    /// - Parameters:
    ///   - input: the input, a regular file (standard input redirected from one will do).
    ///   - descriptor: its descriptor.
    ///   - counted: how many of its bytes the statistics have counted already.
    private func runArchive(_ input: InputSource, descriptor: Int32, counted: Int) {
        let archive: WACZArchive
        do {
            archive = try WACZArchive.open(descriptor: descriptor, limits: configuration.limits)
        } catch {
            add(.failure(FramingFailure(offset: 0, error: error)), name: input.lineName)
            return
        }
        var progress = ArchiveProgress(counted: Int64(counted))
        let prefix = input.lineName ?? "-"
        for entry in archive.entries {
            if checkStop() { break }
            let name = prefix + "#" + entry.name
            do {
                let reader = try archive.open(entry)
                var framer = InputDetection.framer(
                    for: .warc, limits: configuration.limits, warcTypes: configuration.warcTypes,
                    verifyDigests: configuration.verifyDigests)
                pump(&framer, reader, name: name, progress: &progress)
            } catch {
                add(.failure(FramingFailure(offset: 0, error: error, bytes: entry.size)), name: name)
            }
        }
        progress.advance(to: archive.byteCount, statistics)
    }

    /// How far reading an archive has come, for the statistics, which count archive bytes as stored; the bytes that
    /// detection read first were counted then.
    private struct ArchiveProgress {
        var counted: Int64
        var position: Int64 = 0

        /// Counts the archive as read up to `position` (what is not counted yet of it).
        mutating func advance(to position: Int64, _ statistics: Statistics) {
            self.position = max(self.position, position)
            if self.position > counted {
                statistics.addBytesRead(Int(self.position - counted))
                counted = self.position
            }
        }

        mutating func advance(by count: Int64, _ statistics: Statistics) { advance(to: position + count, statistics) }
    }

    /// Feeds the entry `reader` reads through `framer`, as `pump` does an input's descriptor; an entry that cannot be
    /// read to its end gives the lines of what was read (a record cut short is `truncatedRecord`), then one error line
    /// at the offset where reading stopped.
    /// - Parameters:
    ///   - framer: a WARC framer.
    ///   - reader: the entry.
    ///   - name: the entry's `input`.
    ///   - progress: the archive's statistics (a stored entry counts as it is read, a compressed one when it ends).
    private func pump<Framer: RecordFramer>(
        _ framer: inout Framer, _ reader: WACZArchive.EntryReader, name: String, progress: inout ArchiveProgress
    ) {
        var buffer = FramerInput(capacity: readSize)
        // An entry is read from the archive's file (a WACZ is only read from a file, never from a pipe).
        buffer.readsWithoutWaiting = true
        var failure: RecordError?
        while failure == nil && !checkStop() {
            let n = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: readSize) { spare -> Int in
                do throws(RecordError) {
                    return try reader.read(into: UnsafeMutableRawBufferPointer(rebasing: spare[..<readSize]))
                } catch {
                    failure = error
                    return 0
                }
            }
            if n == 0 { break }
            if reader.entry.stored { progress.advance(by: Int64(n), statistics) }
            drain(&framer, &buffer, name: name)
        }
        if !reader.entry.stored && failure == nil && !stopped {
            progress.advance(by: reader.entry.compressedSize, statistics)
        }
        drain(&framer, &buffer, name: name, last: true, seenEOF: !stopped)
        summary.skipped.merge(framer.skippedRecords, uniquingKeysWith: +)
        if let failure {
            let left = max(reader.entry.size - reader.delivered, 0)
            add(.failure(FramingFailure(offset: reader.delivered, error: failure, bytes: left)), name: name)
        }
    }

    /// Feeds the rest of the input through `framer`, handing every item to the pool, and counts what it skipped.
    /// After a stop (a signal, or output gone) the records already complete still get their lines; the partial one
    /// at the end is left unread rather than reported as truncated.
    private func pump<Framer: RecordFramer>(
        _ framer: inout Framer, _ buffer: inout FramerInput, fd: Int32, ended: Bool, input: InputSource
    ) {
        drain(&framer, &buffer, name: input.lineName)
        var ended = ended
        while !ended && !stopped {
            // About to block on a pipe with nothing in it: let the reader downstream have what is done.
            if !batch.items.isEmpty && !inputReady(fd) { submitBatch() }
            let n = readSome(fd, into: &buffer, input: input)
            if n <= 0 {
                ended = n == 0 || !stopped
                break
            }
            drain(&framer, &buffer, name: input.lineName)
        }
        drain(&framer, &buffer, name: input.lineName, last: true, seenEOF: ended)
        summary.skipped.merge(framer.skippedRecords, uniquingKeysWith: +)
    }

    /// Reads a `.warc.gz` whose spans are inflated and framed on the workers (Runtime/MemberSpans.swift, docs/
    /// framings.md#parallel-inflate); the items come back in input order and are decoded like any others. The spans
    /// still in flight at the end are taken back later (``takePending(all:)``), so that the next input is read while
    /// the workers inflate this one's last spans.
    private func runSpans(_ buffer: inout FramerInput, fd: Int32, ended: Bool, input: InputSource) {
        let name = input.lineName
        let configuration = configuration
        let assembler = SpanAssembler(configuration: configuration, streamOffset: buffer.readerOffset)
        // Spans share the buffer's memory (`MemberSpans.cut`); the blocks they held come back for the next reads.
        buffer.recycle(
            with: FramerInput.Recycler(limit: MemberSpans.inFlight(jobs: pool.jobs) + 2),
            blockCapacity: MemberSpans.target + 2 * readSize)
        var ended = ended
        var seenEOF = ended
        while true {
            let idle = !ended && !inputReady(fd)
            while let span = MemberSpans.cut(from: &buffer, ended: ended, seenEOF: seenEOF, idle: idle) {
                if span.delegated { pool.perform { span.frame(configuration: configuration) } }
                pending.append(.span(span, assembler, name: name))
                spansInFlight += 1
                takePending()
                if span.isLast { break }
            }
            if ended { break }
            if idle {
                // About to block on a pipe with nothing in it: everything cut so far gets its lines now.
                takePending(all: true)
                submitBatch()
            }
            let n = readSome(fd, into: &buffer, input: input)
            if n <= 0 {
                // As in `pump`: a stop is not the end of the input, so a record it cuts is not reported truncated.
                ended = true
                seenEOF = n == 0 || !stopped
            }
        }
    }

    /// Takes back what the workers framed, in input order: the spans and pieces that are done, waiting for the oldest
    /// while more spans than the window, or more inputs than jobs, are in flight; `all`: everything (before records of
    /// another input are added, and at the end); `makingRoom`: until fewer inputs than jobs are framed on the workers.
    /// After a stop, an input framed in pieces and not framed to its end gives what is framed of it, and everything
    /// after it is dropped.
    private func takePending(all: Bool = false, makingRoom: Bool = false) {
        while let head = pending.first {
            let waiting =
                all || spansInFlight > MemberSpans.inFlight(jobs: pool.jobs)
                || chainsInFlight >= (makingRoom ? pool.jobs : pool.jobs + 1)
            switch head {
            case .span(let span, let assembler, let name):
                guard waiting || span.isDone || cutShort else { return }
                _ = pending.removeFirst()
                spansInFlight -= 1
                if cutShort { continue }
                assembler.take(span) { add($0, name: name) }
                if span.isLast { summary.skipped.merge(assembler.skippedRecords, uniquingKeysWith: +) }
            case .chain(let chain):
                if cutShort {
                    // After an input cut short, nothing of a later one, however much of it is framed.
                    _ = chain.halt()
                } else if !chain.isFinished && checkStop() {
                    // (A chain framed to its end is taken whole: a stop then leaves nothing of it unread.)
                    let (pieces, cut) = chain.halt()
                    for piece in pieces { add(piece, of: chain) }
                    if cut { cutShort = true }
                } else {
                    switch chain.take(waiting: waiting, pool: pool) {
                    case .piece(let piece):
                        add(piece, of: chain)
                        continue
                    case .notReady:
                        return
                    case .done:
                        break
                    }
                }
                _ = pending.removeFirst()
                chainsInFlight -= 1
            }
        }
    }

    /// Puts the items of a piece framed on a worker in the batch, and counts what it says of its input.
    private func add(_ piece: FramedPiece, of chain: FramingChain) {
        for item in piece.items { add(item, name: chain.name) }
        if piece.readFailed { summary.failedInputs += 1 }
        if piece.isLast { summary.skipped.merge(piece.skippedRecords, uniquingKeysWith: +) }
    }

    /// Reads up to `readSize` bytes into `buffer`'s spare capacity (see the other `readSome`).
    private func readSome(_ fd: Int32, into buffer: inout FramerInput, input: InputSource) -> Int {
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: readSize) { spare in
            readSome(fd, into: UnsafeMutableRawBufferPointer(rebasing: spare[..<readSize]), input: input)
        }
    }

    /// Reads up to a chunk; 0 at end of input (or after `idleTimeout` seconds without any); -1 after a read error
    /// (logged, counted) or when a stop was requested (`stopped` is then set, and `summary.interruptedBy` when it was
    /// a signal).
    /// - Parameters:
    ///   - fd: the descriptor to read.
    ///   - chunk: where the bytes go.
    ///   - input: the input being read, for messages.
    ///   - counting: whether the bytes are input for the statistics (not a `--files-from` list's).
    /// - Returns: the number of bytes read, 0 at end of input, -1 after an error or a stop.
    private func readSome(
        _ fd: Int32, into chunk: UnsafeMutableRawBufferPointer, input: InputSource, counting: Bool = true
    ) -> Int {
        let deadline = idleTimeout.map { MonotonicClock.now + $0 }
        while true {
            if checkStop() { return -1 }
            var timeout: Int32 = -1
            if let deadline, let idleTimeout {
                let left = deadline - MonotonicClock.now
                if left <= 0 {
                    logger.notice("nothing from \(input.logName) for \(fixed(idleTimeout, 3)) s: taken as its end")
                    return 0
                }
                timeout = Int32(min((left * 1000).rounded(.up), 3_600_000))
            }
            // Wait for input or for a stop, whichever comes first (a regular file is always ready).
            var descriptors = [
                pollfd(fd: fd, events: Int16(POLLIN), revents: 0),
                pollfd(fd: Shutdown.shared.wakeDescriptor, events: Int16(POLLIN), revents: 0),
            ]
            let polled = poll(&descriptors, 2, timeout)
            if checkStop() { return -1 }
            // Interrupted by a signal whose stop the signal thread has not posted yet: poll again, and see it then
            // (a read now could block for good). Should poll itself fail, reading blocks as it would without it.
            // A timeout comes back here too, and the deadline is looked at again.
            if polled < 0 && errno == EINTR || polled >= 0 && descriptors[0].revents == 0 { continue }
            let n = read(fd, chunk.baseAddress, chunk.count)
            if n > 0 && counting { statistics.addBytesRead(n) }
            if n >= 0 { return n }
            if errno == EINTR || errno == EAGAIN { continue }
            // A peer that reset its connection has gone away, like a reader that closed its end of the output
            // (EPIPE): nothing anyone needs to be told about.
            if case .descriptor = input, errno == ECONNRESET {
                logger.info("\(input.logName) was reset by the other end")
            } else {
                logger.error("cannot read \(input.logName): \(String(cString: strerror(errno)))")
            }
            summary.failedInputs += 1
            return -1
        }
    }

    /// Whether reading must stop: a signal asked for it, or output is gone.
    private func checkStop() -> Bool {
        if stopped { return true }
        if let signal = Shutdown.shared.requested {
            stopped = true
            summary.interruptedBy = signal
        } else if output.hasFailed {
            stopped = true
        }
        return stopped
    }

    /// Whether more input can be read without blocking.
    private func inputReady(_ fd: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0
    }

    /// Hands every item `framer` can make of `buffer` to the pool; `last`: no more input will come (`seenEOF`: it
    /// ended, rather than reading stopped).
    private func drain(
        _ framer: inout some RecordFramer, _ buffer: inout FramerInput, name: String?, last: Bool = false,
        seenEOF: Bool = false
    ) {
        while let item = last ? framer.decodeLast(buffer: &buffer, seenEOF: seenEOF) : framer.decode(buffer: &buffer) {
            add(consume item, name: name)
        }
    }

    /// Puts `item` of the input named `name` (its line's `input`) in the batch.
    private func add(_ item: consuming FramedItem, name: String?) {
        let full = batch.add(item, seq: seq, input: name, revisits: &revisits)
        seq += 1
        if full { submitBatch() }
    }

    private func submitBatch() {
        guard !batch.items.isEmpty else { return }
        output.submit(batch)
        batch = output.makeBatch()
    }
}
