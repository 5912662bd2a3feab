/*
 Inflating a `.warc.gz` on the workers (docs/framings.md#parallel-inflate).

 One thread reading, inflating and framing a `.warc.gz` while the workers decode caps a run at that thread's speed:
 two jobs were no faster than one. So with more than one job the reader only reads, and cuts the compressed input into
 spans of about `MemberSpans.target` bytes at gzip member headers (1F 8B 08, then a flag byte with its reserved bits
 clear). A worker inflates and frames each span with a WARC framer of its own, as if the span were a file, and the
 reader takes the spans' items back in input order, numbers them and hands them to the workers to decode, as it
 would items it had framed itself.

 A header found by that scan may be a false one (the bytes 1F 8B 08 inside compressed data), and a record may not
 end with its member. Neither can be told before inflating, so a span's framing is only believed when everything
 before it was framed to a member boundary at the span's start: the worker framing the span before ended between
 records, at the end of a gzip member, with all its input used (``WARCFramer/isAtMemberBoundary``). Where that is
 not so, the reader goes on with that worker's framer itself, feeding it the next spans' bytes (the workers' framing
 of those is dropped), until the framer stands at such a boundary at the end of a span; spans after it are the
 workers' again. The items are therefore those of one framer reading the whole input; the only thing a framer started
 in the middle of a file cannot know is how long the decompressed stream was before it, which the offset of a record
 that does not start its member is counted in: the reader knows it (it adds up each span's decompressed length) and
 tells a framer that continues (``WARCFramer/decompressedOffsetCorrection``), and a span whose worker reported such
 an offset is framed again by the reader. A framer the reader starts at a later span reads gzip members from its first
 byte, whatever that byte is (``WARCFramer/assumeGzipMembers()``), as one framer still would there. Input that goes
 quiet has its rest cut at once and framed by the reader, so that its last member, which no header closes yet, gets
 its lines while the input waits.

 Cost: the scan is a search for 1F from the end of the buffer. A span whose worker stopped short of a member boundary
 costs its successor's inflating twice (once on the worker, dropped, once by the reader). gzip as a whole (one
 member) has no header to cut at: spans are cut where `MemberSpans.maximum` bytes end, and framed by the reader,
 as before.

 Memory: a worker stops framing a span once its items hold `MemberSpans.heldBytes` bytes of bodies (the reader goes on
 from there), and at most `MemberSpans.inFlight(jobs:)` spans are in flight: with J jobs, (J + 2) × (target + what
 its records hold). A span shares the reader's buffer (`FramerInput.split(at:)`), which reads on into other memory;
 the blocks of spans that are done come back for the next reads (`FramerInput.Recycler`, J + 4 free blocks at most).
 Copying each span out of the buffer, into fresh pages every time, cost about 2 % of the CPU of bench/crawl's peers'
 job.
 */
import Glibc

/// A span of a compressed WARC input, framed on a worker (or by the reader) into items. See the file comment.
final class MemberSpan: @unchecked Sendable {
    /// The span's compressed bytes (the input offset of its first is `start`).
    let input: FramerInput
    let start: Int64
    /// The input ends with this span; `seenEOF`: it ended, rather than reading stopped (as in `decodeLast`).
    let isLast: Bool
    let seenEOF: Bool
    /// Framed by a worker: the span starts at a gzip member header. Otherwise the reader frames it when its turn comes.
    let delegated: Bool

    // Set by the worker before `framed`, read by the reader after it.
    /// The items, in order.
    private(set) var items: [FramedItem] = []
    /// The worker's framer and what is left of its input, to go on with.
    private(set) var framer: WARCFramer?
    private(set) var rest = FramerInput()
    /// The framer gave every item it could (it was not stopped by `MemberSpans.heldBytes`).
    private(set) var exhausted = false

    private let monitor = Monitor()
    private var framed = false

    init(input: FramerInput, isLast: Bool, seenEOF: Bool, delegated: Bool) {
        self.input = input
        start = input.readerOffset
        self.isLast = isLast
        self.seenEOF = seenEOF
        self.delegated = delegated
    }

    /// Whether the worker's framing ends at a member boundary, with all the span's bytes used: a span after this one
    /// starts where a new framer may.
    var endsAtMemberBoundary: Bool {
        !isLast && exhausted && rest.readableBytes == 0 && framer?.isAtMemberBoundary == true
    }

    /// Frames the span as a file of its own (on a worker).
    func frame(configuration: Configuration) {
        var framer = WARCFramer(
            limits: configuration.limits, types: configuration.warcTypes, verifyDigests: configuration.verifyDigests)
        var input = self.input
        var held = 0
        var lastBlock: ObjectIdentifier?
        var exhausted = false
        while held < MemberSpans.heldBytes {
            guard
                let item = isLast
                    ? framer.decodeLast(buffer: &input, seenEOF: seenEOF) : framer.decode(buffer: &input)
            else {
                exhausted = true
                break
            }
            held += item.weigh(lastBlock: &lastBlock).held
            items.append(item)
        }
        monitor.withLock {
            self.framer = framer
            self.rest = input
            self.exhausted = exhausted
            framed = true
            monitor.broadcast()
        }
    }

    /// Whether the span can be taken back without waiting: framed, or the reader's to frame.
    var isDone: Bool { !delegated || monitor.withLock { framed } }

    /// Waits for the worker to finish `frame`.
    func waitUntilFramed() {
        monitor.withLock {
            while !framed { monitor.wait() }
        }
    }

    /// Lets go of the worker's results (their bodies).
    func dropResults() {
        items = []
        framer = nil
        rest = FramerInput()
    }
}

/// How a compressed input is cut into spans. See the file comment.
enum MemberSpans {
    /// A span is cut once this many compressed bytes are buffered…
    static let target = 512 << 10
    /// …at the last member header in them; with none, where this many end.
    static let maximum = 4 << 20
    /// Spans in flight with `jobs` workers: one for each, and two more being cut and taken back.
    static func inFlight(jobs: Int) -> Int { jobs + 2 }
    /// A worker stops framing a span when its items hold this many body bytes; the reader goes on from there.
    static let heldBytes = 16 << 20

    /// Cuts the next span from `buffer`, moving its reader index past it.
    /// - Parameters:
    ///   - buffer: the compressed input read so far.
    ///   - ended: no more input will come: the rest is the last span, even when empty.
    ///   - seenEOF: the input ended, rather than reading stopped (as in `decodeLast`).
    ///   - idle: no more input can be read right now: the rest is cut too, for the reader to frame.
    ///   - target: the size from which a span is cut (``target``; tests make it small).
    ///   - maximum: the size at which a span is cut without a member header (``maximum``).
    /// - Returns: the span, or nil while the buffer is to grow.
    static func cut(
        from buffer: inout FramerInput, ended: Bool, seenEOF: Bool, idle: Bool, target: Int = target,
        maximum: Int = maximum
    ) -> MemberSpan? {
        let available = buffer.readableBytes
        var end: Int
        // Idle input: what is left after the spans cut at member headers is framed by the reader at once (its last
        // member, which no header after it closes, must give its lines while the input waits).
        var toReader = false
        if ended {
            end = buffer.writerIndex
        } else if available >= target, let header = GzipMembers.lastMemberHeader(in: buffer) {
            end = header
        } else if available >= maximum || idle && available > 0 {
            end = buffer.writerIndex
            toReader = available < maximum
        } else {
            return nil
        }
        let delegated =
            !toReader && buffer.withUnsafeBufferPointer { GzipMembers.isMemberHeader($0, at: buffer.readerIndex) }
        // The span shares the buffer's memory; the buffer's next read moves the bytes after the span elsewhere.
        return MemberSpan(input: buffer.split(at: end), isLast: ended, seenEOF: seenEOF, delegated: delegated)
    }

    /// Whether an input that starts with `buffer`'s unread bytes is read in spans: a gzip member first.
    static func startsWithMember(_ buffer: FramerInput) -> Bool {
        buffer.withUnsafeBufferPointer { GzipMembers.isMemberHeader($0, at: buffer.readerIndex) }
    }
}

/// Takes spans back in input order and gives their items: a worker's when its span starts at a member boundary and its
/// framing can be believed, else by framing on here (the reader's thread). See the file comment.
final class SpanAssembler {
    private let configuration: Configuration
    /// The framer that goes on while spans do not start at a member boundary, and its input.
    private var continuation: (framer: WARCFramer, input: FramerInput)?
    /// Without a continuation: how long the decompressed stream is up to the next span's start (where the input's
    /// first member starts: offset 0 of the stream, as for one framer reading the whole input).
    private var streamOffset: Int64
    /// Records read and not yielded, by type (the framers' ``WARCFramer/skippedRecords``, added up).
    private(set) var skippedRecords: [String: Int] = [:]
    /// Spans whose workers' framing was taken, and spans framed here (for the tests).
    private(set) var spansTaken = 0
    private(set) var spansFramedHere = 0

    /// - Parameters:
    ///   - configuration: how records are framed.
    ///   - streamOffset: the input offset of the first span.
    init(configuration: Configuration, streamOffset: Int64) {
        self.configuration = configuration
        self.streamOffset = streamOffset
    }

    /// Takes the next span in input order (waiting for its worker), giving its items to `emit`.
    func take(_ span: MemberSpan, emit: (FramedItem) -> Void) {
        if continuation == nil && span.delegated {
            span.waitUntilFramed()
            defer { span.dropResults() }
            let correction = streamOffset - span.start
            // A worker's framer knows nothing of the decompressed stream before the span: where it reported an offset
            // in it, or read ARC (whose offsets may be in it) after the first span, the span is framed again here.
            if var framer = span.framer, framer.decompressedOffsetsReported == 0, !framer.isARC || correction == 0 {
                spansTaken += 1
                for item in span.items { emit(item) }
                if span.endsAtMemberBoundary || span.isLast && span.exhausted {
                    streamOffset += framer.streamEnd - span.start
                    skippedRecords.merge(framer.skippedRecords, uniquingKeysWith: +)
                } else {
                    framer.decompressedOffsetCorrection = correction
                    continuation = (framer, span.rest)
                    goOn(after: span, emit: emit)
                }
                return
            }
        }
        spansFramedHere += 1
        if continuation == nil {
            var framer = WARCFramer(
                limits: configuration.limits, types: configuration.warcTypes,
                verifyDigests: configuration.verifyDigests)
            framer.decompressedOffsetCorrection = streamOffset - span.start
            // Where a later span does not start a member (plain bytes after one, or a cut without a header), one
            // framer reading the whole input would still be reading gzip members there.
            if spansTaken + spansFramedHere > 1 { framer.assumeGzipMembers() }
            continuation = (framer, FramerInput(startingAt: span.start))
        }
        span.input.withBytes(in: span.input.readerIndex..<span.input.writerIndex) { continuation!.input.write($0) }
        goOn(after: span, emit: emit)
    }

    /// Frames what the continuing framer can of its input (all of it after the last span); lets it go when it stands
    /// at a member boundary with its input used up, so that the spans after are the workers' again.
    private func goOn(after span: MemberSpan, emit: (FramedItem) -> Void) {
        guard var (framer, input) = continuation else { return }
        continuation = nil
        while let item =
            span.isLast ? framer.decodeLast(buffer: &input, seenEOF: span.seenEOF) : framer.decode(buffer: &input)
        {
            emit(item)
        }
        if span.isLast || framer.isAtMemberBoundary && input.readableBytes == 0 {
            streamOffset = framer.streamEnd + framer.decompressedOffsetCorrection
            skippedRecords.merge(framer.skippedRecords, uniquingKeysWith: +)
        } else {
            continuation = (framer, input)
        }
    }
}

/// Frames a whole compressed WARC input in spans, as the runner does with several jobs, every span framed where it is
/// cut (for tests and the fuzz target, which compare the items with one framer's).
public enum SpanFraming {
    /// The items of `input` framed in spans of about `target` bytes, read `chunk` bytes at a time, with the input
    /// idle (cut at its last member header) every `idleEvery` reads (0: never).
    public static func items(
        of input: [UInt8], target: Int, chunk: Int, idleEvery: Int = 0, configuration: Configuration = Configuration()
    ) -> (items: [FramedItem], skipped: [String: Int], taken: Int) {
        var buffer = FramerInput()
        buffer.recycle(with: FramerInput.Recycler(limit: 4))
        let assembler = SpanAssembler(configuration: configuration, streamOffset: 0)
        var items: [FramedItem] = []
        var position = 0
        var reads = 0
        while true {
            let ended = position == input.count
            let idle = idleEvery > 0 && reads % idleEvery == 0
            while let span = MemberSpans.cut(
                from: &buffer, ended: ended, seenEOF: true, idle: idle, target: max(1, target),
                maximum: 8 * max(1, target))
            {
                if span.delegated { span.frame(configuration: configuration) }
                assembler.take(span) { items.append($0) }
                if span.isLast { break }
            }
            if ended { break }
            let n = min(max(1, chunk), input.count - position)
            buffer.write(input[position..<position + n])
            position += n
            reads += 1
        }
        return (items, assembler.skippedRecords, assembler.spansTaken)
    }
}
