import Dispatch
import Foundation
import Glibc
import Logging
import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// A ``LineSink`` that keeps what it is given: the bytes, each report, how often each call came, whether a call came
/// after `finished` or while another was running; it can say it has no room (``setFull(_:)``) and sleep in each
/// delivery (a slow client). Never waits for ever: every wait has a deadline.
final class CollectingSink: LineSink, @unchecked Sendable {
    private let lock = NSLock()
    private var collected: [UInt8] = []
    private var reportsSeen: [BatchReport] = []
    private var deliveryCount = 0
    private var finishCount = 0
    private var wantsInputCount = 0
    private var finalSummary: RunSummary?
    private var lateCalls = 0
    private var inCall: [String] = []
    private var overlapping: [String] = []
    private var full: Bool
    /// Microseconds each delivery sleeps.
    private let deliverySleep: UInt32
    /// Turns full (once) when this many deliveries came.
    private let fullAfterDeliveries: Int?
    /// The stream, told when the sink drains.
    weak var stream: DecodeStream?

    init(full: Bool = false, deliverySleep: UInt32 = 0, fullAfterDeliveries: Int? = nil) {
        self.full = full
        self.deliverySleep = deliverySleep
        self.fullAfterDeliveries = fullAfterDeliveries
    }

    /// LineSink's contract: deliveries one at a time and `finished` after the last; `wantsInput` may come at any
    /// time (it is counted, not checked).
    private func enter(_ call: String) {
        lock.withLock {
            guard call != "wantsInput" else { return }
            if finishCount > 0 { lateCalls += 1 }
            if !inCall.isEmpty { overlapping.append("\(call) during \(inCall.joined(separator: ", "))") }
            inCall.append(call)
        }
    }

    private func leave(_ call: String) {
        lock.withLock {
            guard call != "wantsInput" else { return }
            _ = inCall.remove(at: inCall.firstIndex(of: call)!)
        }
    }

    func deliver(_ lines: UnsafeRawBufferPointer, report: BatchReport) {
        enter("deliver")
        defer { leave("deliver") }
        if deliverySleep > 0 { usleep(deliverySleep) }
        lock.withLock {
            collected.append(contentsOf: lines)
            reportsSeen.append(report)
            deliveryCount += 1
            if let fullAfterDeliveries, deliveryCount == fullAfterDeliveries { full = true }
        }
    }

    var hasRoom: Bool { lock.withLock { !full } }

    func wantsInput() {
        enter("wantsInput")
        defer { leave("wantsInput") }
        lock.withLock { wantsInputCount += 1 }
    }

    func finished(_ summary: RunSummary) {
        enter("finished")
        defer { leave("finished") }
        lock.withLock {
            finishCount += 1
            finalSummary = summary
        }
    }

    /// Says it has room (false) or not (true); on room, tells the stream (outside the sink's lock: the stream asks
    /// `hasRoom` under its own).
    func setFull(_ value: Bool) {
        lock.withLock { full = value }
        if !value { stream?.outputDrained() }
    }

    var bytes: [UInt8] { lock.withLock { collected } }
    var reports: [BatchReport] { lock.withLock { reportsSeen } }
    var deliveries: Int { lock.withLock { deliveryCount } }
    var finishes: Int { lock.withLock { finishCount } }
    var wants: Int { lock.withLock { wantsInputCount } }
    var summary: RunSummary? { lock.withLock { finalSummary } }
    /// Calls that came after `finished`.
    var callsAfterFinished: Int { lock.withLock { lateCalls } }
    /// Calls that came while another was running (which, during which).
    var overlaps: [String] { lock.withLock { overlapping } }
    var lineCount: Int { lock.withLock { collected.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) } } }

    /// Waits until `condition` holds, up to `seconds`; whether it did.
    func wait(_ seconds: Double = 60, until condition: (CollectingSink) -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition(self) {
            if Date() > deadline { return false }
            usleep(1000)
        }
        return true
    }

    func waitFinished(_ seconds: Double = 60) -> Bool { wait(seconds) { $0.finishes > 0 } }
}

/// ``DecodeStream``: bytes pushed in any chunks give exactly the lines ``StreamRunner`` writes for the same input
/// (docs/sidecar.md#semantics), in order, with backpressure on both sides, and `finished` once.
@Suite("Decode stream", .serialized)
struct DecodeStreamTests {
    static let samples = Corpora.packageRoot.appendingPathComponent("samples")

    static let sampleFiles: [String] =
        ((try? FileManager.default.contentsOfDirectory(atPath: samples.path)) ?? []).filter { !$0.hasPrefix(".") }
        .sorted()

    /// A few corpus inputs of each framing (raw HTTP, WARC, `.warc.gz`, ARC, HAR).
    static let corpusFiles = [
        "warc/warcio/data/example-iana.org-chunked.warc", "warc/warcio/data/example.warc.gz",
        "warc/warcio/data/example.arc.gz", "warc/warcio/data/example-trunc.warc", "warc/jwarc/cc.warc.gz",
        "har/mitmproxy/har_files/chrome.har",
        "http/llhttp/cases/connection--http-1-1-with-eof-terminated-200-status.http",
    ]

    /// Chunk sizes: a byte, a few, a page, a large read, whole.
    static let chunks = [1, 7, 4096, 65536, Int.max]

    static let quiet = Logger(label: "DecodeStreamTests") { _ in SwiftLogNoOpLogHandler() }

    static func configuration(jobs: Int, _ change: (inout Configuration) -> Void = { _ in }) -> Configuration {
        var configuration = Configuration()
        configuration.jobs = jobs
        change(&configuration)
        return configuration
    }

    /// What ``StreamRunner`` writes for `input` read from a descriptor (no `input` key, as a connection), and its
    /// summary.
    static func runnerOutput(_ input: [UInt8], _ configuration: Configuration) throws -> (
        lines: [UInt8], summary: RunSummary
    ) {
        try RunnerOutput.of(input, configuration: configuration, logger: quiet)
    }

    /// Feeds `input` in pieces of `chunk` bytes; what each `feed` returned. `paced`: each piece once the stream has
    /// taken the one before (up to 10 ms), so that the framing task sees the input in these pieces rather than in
    /// whatever piled up while it ran.
    @discardableResult
    static func feed(_ stream: DecodeStream, _ input: [UInt8], chunk: Int = Int.max, paced: Bool = false) -> [Bool] {
        input.withUnsafeBytes { raw in
            var results: [Bool] = []
            var start = 0
            while start < raw.count {
                let end = start + min(chunk, raw.count - start)
                results.append(stream.feed(UnsafeRawBufferPointer(rebasing: raw[start..<end])))
                start = end
                if paced {
                    let deadline = DispatchTime.now().uptimeNanoseconds + 10_000_000
                    while stream.waitingBytes > 0 && DispatchTime.now().uptimeNanoseconds < deadline { sched_yield() }
                }
            }
            return results
        }
    }

    /// A stream on `pool` with a fresh sink.
    static func makeStream(
        _ configuration: Configuration, pool: JobPool, sink: CollectingSink = CollectingSink(),
        writer: (any LineWriter)? = nil
    ) -> (DecodeStream, CollectingSink) {
        let stream = DecodeStream(
            configuration: configuration, pool: pool, statistics: Statistics(), sink: sink, writer: writer)
        sink.stream = stream
        return (stream, sink)
    }

    /// `input` through a stream in pieces of `chunk` (paced), ended; the sink once finished.
    static func streamed(
        _ input: [UInt8], chunk: Int = Int.max, _ configuration: Configuration, pool: JobPool,
        writer: (any LineWriter)? = nil, seenEOF: Bool = true
    ) throws -> CollectingSink {
        let (stream, sink) = makeStream(configuration, pool: pool, writer: writer)
        feed(stream, input, chunk: chunk, paced: true)
        stream.end(seenEOF: seenEOF)
        try #require(sink.waitFinished(), "finished was not called within 60 s (chunk \(chunk))")
        return sink
    }

    /// Where two outputs first differ, line by line; nil when they are the same bytes.
    static func difference(_ got: [UInt8], _ expected: [UInt8]) -> String? {
        guard got != expected else { return nil }
        let a = got.split(separator: 0x0A, omittingEmptySubsequences: false)
        let b = expected.split(separator: 0x0A, omittingEmptySubsequences: false)
        let k = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
        func show(_ lines: [ArraySlice<UInt8>]) -> String {
            k < lines.count ? String(decoding: lines[k].prefix(400), as: UTF8.self) : "(none)"
        }
        return "\(a.count - 1) lines against \(b.count - 1); line \(k): got \(show(a)); expected \(show(b))"
    }

    static func lines(_ bytes: [UInt8]) -> [String] {
        bytes.split(separator: 0x0A).map { String(decoding: $0, as: UTF8.self) }
    }

    /// `count` small raw HTTP responses with JSON bodies `{"s":stream,"n":N,"v":null}`.
    static func responses(_ count: Int, stream: Int = 0, from first: Int = 0, padding: Int = 0) -> [UInt8] {
        var out: [UInt8] = []
        let pad = String(repeating: "x", count: padding)
        for n in first..<first + count {
            let body = "{\"s\":\(stream),\"n\":\(n),\"v\":null,\"p\":\"\(pad)\"}"
            out += Array(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                    .utf8)
        }
        return out
    }

    /// `input` in every chunk size with `jobs` workers: the runner's bytes, and its counts.
    static func expectSameAsRunner(_ input: [UInt8], name: String, jobs: Int) throws {
        let configuration = configuration(jobs: jobs)
        let reference = try runnerOutput(input, configuration)
        let pool = JobPool(configuration: configuration)
        defer { pool.close() }
        for chunk in chunks {
            let sink = try streamed(input, chunk: chunk, configuration, pool: pool)
            let got = sink.bytes
            #expect(difference(got, reference.lines) == nil, "\(name), chunk \(chunk), jobs \(jobs)")
            #expect(sink.finishes == 1)
            let summary = try #require(sink.summary)
            #expect(summary.records == reference.summary.records, "\(name), chunk \(chunk)")
            #expect(summary.records == got.count(where: { $0 == 0x0A }), "\(name), chunk \(chunk)")
            #expect(summary.ok == reference.summary.ok, "\(name), chunk \(chunk)")
            #expect(summary.skipped == reference.summary.skipped, "\(name), chunk \(chunk)")
            #expect(sink.callsAfterFinished == 0)
        }
    }

    // MARK: - The runner's output, in any chunks

    @Test(arguments: sampleFiles, [1, 3])
    func sampleGivesTheRunnersLines(_ file: String, jobs: Int) throws {
        let input = try Corpora.bytes(Self.samples.appendingPathComponent(file))
        try Self.expectSameAsRunner(input, name: file, jobs: jobs)
    }

    @Test(
        .enabled(if: Corpora.available, Comment(rawValue: Corpora.skipMessage)), arguments: corpusFiles, [1, 3])
    func corpusFileGivesTheRunnersLines(_ path: String, jobs: Int) throws {
        let input = try Corpora.bytes(path)
        try Self.expectSameAsRunner(input, name: path, jobs: jobs)
    }

    @Test func samplesAreFound() {
        // The arguments above come from a folder listing: an empty listing would pass every test.
        #expect(Self.sampleFiles.contains("capture.http"))
        #expect(Self.sampleFiles.contains("traffic.warc.gz"))
    }

    // MARK: - Order

    @Test(arguments: [1, 3])
    func manyBatchesStayInOrder(jobs: Int) throws {
        // More records than one batch holds (JobPool.batchRecords), in pieces that cut records anywhere.
        let input = Self.responses(6_000)
        let configuration = Self.configuration(jobs: jobs)
        let reference = try Self.runnerOutput(input, configuration)
        let pool = JobPool(configuration: configuration)
        defer { pool.close() }
        let sink = try Self.streamed(input, chunk: 1_000, configuration, pool: pool)
        #expect(Self.difference(sink.bytes, reference.lines) == nil)
        let lines = Self.lines(sink.bytes)
        #expect(lines.count == 6_000)
        for (k, line) in lines.enumerated() where !line.hasPrefix("{\"seq\":\(k),") || !line.contains("\"n\":\(k),") {
            Issue.record("line \(k) is \(line.prefix(200))")
            break
        }
        #expect(sink.reports.count > 1)
    }

    @Test(arguments: [1, 3])
    func streamsSharingAPoolGetTheirOwnLines(jobs: Int) throws {
        let configuration = Self.configuration(jobs: jobs)
        let pool = JobPool(configuration: configuration)
        defer { pool.close() }
        let inputs = (0..<4).map { Self.responses(2_500 + 300 * $0, stream: $0) }
        let references = try inputs.map { try Self.runnerOutput($0, configuration).lines }
        let streams = inputs.map { _ in Self.makeStream(configuration, pool: pool) }
        // Interleaved, in pieces of different sizes, so the streams' batches are in the queue together.
        var offsets = [Int](repeating: 0, count: inputs.count)
        while offsets.enumerated().contains(where: { $0.element < inputs[$0.offset].count }) {
            for k in inputs.indices where offsets[k] < inputs[k].count {
                let end = min(inputs[k].count, offsets[k] + 997 * (k + 1))
                Self.feed(streams[k].0, Array(inputs[k][offsets[k]..<end]))
                offsets[k] = end
            }
        }
        for (stream, _) in streams { stream.end(seenEOF: true) }
        for (k, (_, sink)) in streams.enumerated() {
            try #require(sink.waitFinished(), "stream \(k) did not finish")
            #expect(Self.difference(sink.bytes, references[k]) == nil, "stream \(k)")
            #expect(sink.finishes == 1)
            #expect(sink.summary?.records == 2_500 + 300 * k)
        }
    }

    // MARK: - Backpressure

    @Test(arguments: [1, 3])
    func fullSinkStopsFramingAndDrainingResumesIt(jobs: Int) throws {
        let configuration = Self.configuration(jobs: jobs)
        let pool = JobPool(configuration: configuration)
        defer { pool.close() }
        // Records of 60 KiB: few batches (no window full), more than inputHighWater in all.
        let input = Self.responses(24, padding: 60 * 1024)
        #expect(input.count > DecodeStream.inputHighWater)
        let reference = try Self.runnerOutput(input, configuration)
        let (stream, sink) = Self.makeStream(configuration, pool: pool, sink: CollectingSink(full: true))
        var waiting = 0
        var refused = false
        for piece in stride(from: 0, to: input.count, by: 100_000) {
            let bytes = Array(input[piece..<min(input.count, piece + 100_000)])
            let accepted = Self.feed(stream, bytes)[0]
            waiting += bytes.count
            // Nothing is framed while the sink is full: every byte waits, and feed says stop past the high water.
            #expect(accepted == (waiting <= DecodeStream.inputHighWater), "after \(waiting) bytes")
            refused = refused || !accepted
        }
        #expect(refused)
        usleep(200_000)
        #expect(sink.deliveries == 0)
        #expect(stream.waitingBytes == input.count)
        #expect(sink.wants == 0)
        sink.setFull(false)
        // Once every byte is framed, the stream wants input again.
        #expect(sink.wait(20) { $0.wants == 1 })
        #expect(stream.waitingBytes == 0)
        stream.end(seenEOF: true)
        try #require(sink.waitFinished())
        #expect(Self.difference(sink.bytes, reference.lines) == nil)
        #expect(sink.wants == 1)
        #expect(sink.finishes == 1)
    }

    @Test(arguments: [1, 3])
    func sinkTurningFullStopsFurtherDeliveries(jobs: Int) throws {
        let configuration = Self.configuration(jobs: jobs)
        let pool = JobPool(configuration: configuration)
        defer { pool.close() }
        let first = Self.responses(10)
        let second = Self.responses(10, from: 10)
        let reference = try Self.runnerOutput(first + second, configuration)
        let (stream, sink) = Self.makeStream(configuration, pool: pool, sink: CollectingSink(fullAfterDeliveries: 1))
        Self.feed(stream, first)
        // The input is idle: the first records get their lines, and the sink says it is full.
        try #require(sink.wait(20) { $0.deliveries == 1 })
        Self.feed(stream, second)
        usleep(300_000)
        #expect(sink.deliveries == 1)
        #expect(stream.waitingBytes == second.count)
        sink.setFull(false)
        #expect(sink.wait(20) { $0.lineCount == 20 })
        stream.end(seenEOF: true)
        try #require(sink.waitFinished())
        #expect(Self.difference(sink.bytes, reference.lines) == nil)
        #expect(sink.wants == 0)
    }

    @Test func feedOverTheHighWaterAsksForInputOnceFramed() throws {
        let configuration = Self.configuration(jobs: 3)
        let pool = JobPool(configuration: configuration)
        defer { pool.close() }
        let input = Self.responses(20, padding: 60 * 1024)
        #expect(input.count > DecodeStream.inputHighWater)
        let (stream, sink) = Self.makeStream(configuration, pool: pool)
        #expect(Self.feed(stream, input) == [false])
        #expect(sink.wait(20) { $0.wants == 1 })
        #expect(stream.waitingBytes == 0)
        #expect(sink.wait(20) { $0.lineCount == 20 })
        // Under the high water: nobody is asked.
        #expect(Self.feed(stream, Self.responses(3, from: 20)) == [true])
        #expect(sink.wait(20) { $0.lineCount == 23 })
        stream.end(seenEOF: true)
        try #require(sink.waitFinished())
        #expect(sink.wants == 1)
    }

    // MARK: - The window

    @Test func slowSinkWithOneJobNeverDeadlocks() throws {
        // More batches than the window (2 × jobs + 2) holds, and a sink that takes its time over each.
        let configuration = Self.configuration(jobs: 1)
        let pool = JobPool(configuration: configuration)
        defer { pool.close() }
        let input = Self.responses(13_000)
        let reference = try Self.runnerOutput(input, configuration)
        let sink = CollectingSink(deliverySleep: 20_000)
        let (stream, _) = Self.makeStream(configuration, pool: pool, sink: sink)
        Self.feed(stream, input, chunk: 65536)
        stream.end(seenEOF: true)
        try #require(sink.waitFinished(), "no finish: \(sink.lineCount) lines of 13000 delivered")
        #expect(Self.difference(sink.bytes, reference.lines) == nil)
        #expect(sink.deliveries > pool.window)
    }

    /// A client that sends many records at once and waits for their lines without ending its input (docs/sidecar.md:
    /// lines are flushed whenever the input is idle) gets every line, also when framing had to hold a batch because
    /// the window was full.
    @Test(arguments: [1, 3])
    func heldBatchAndTheRecordsAfterItGoOutWithoutMoreInput(jobs: Int) throws {
        let configuration = Self.configuration(jobs: jobs)
        let pool = JobPool(configuration: configuration)
        defer { pool.close() }
        // With one job the framing task fills the window (4 batches) before any is decoded, and holds the fifth.
        let count = (pool.window + 1) * JobPool.batchRecords + 100
        let input = Self.responses(count)
        let (stream, sink) = Self.makeStream(configuration, pool: pool, sink: CollectingSink(deliverySleep: 2_000))
        Self.feed(stream, input)
        let all = sink.wait(20) { $0.lineCount == count }
        #expect(all, "\(sink.lineCount) lines of \(count) within 20 s, input not ended")
        stream.end(seenEOF: true)
        try #require(sink.waitFinished())
        #expect(sink.lineCount == count)
    }

    /// Bytes that arrive while a batch is held are framed after it, also when the records already in the buffer fill
    /// the window again as soon as the held batch goes. (They were dropped: a gap of a megabyte in a sidecar request
    /// body, found by `aRequestSentDuringALargeAnswerIsRefusedAfterIt` under load.)
    @Test func bytesThatArriveWhileABatchIsHeldAreNotLost() throws {
        let configuration = Self.configuration(jobs: 1)
        let pool = JobPool(configuration: configuration)
        defer { pool.close() }
        // The window, the held batch, and two batches more left in the buffer.
        let held = (pool.window + 3) * JobPool.batchRecords
        let first = Self.responses(held)
        let input = first + Self.responses(1000, from: held)
        let reference = try Self.runnerOutput(input, configuration)
        let sink = CollectingSink(deliverySleep: 200_000)
        let (stream, _) = Self.makeStream(configuration, pool: pool, sink: sink)
        Self.feed(stream, first)
        // The framing task takes it all and holds a batch (a delivery takes 200 ms); what comes now waits for it.
        #expect(sink.wait(20) { _ in stream.waitingBytes == 0 })
        usleep(10_000)
        #expect(sink.deliveries == 0, "the window is still full")
        Self.feed(stream, Array(input[first.count...]))
        stream.end(seenEOF: true)
        try #require(sink.waitFinished())
        #expect(Self.difference(sink.bytes, reference.lines) == nil)
        #expect(sink.lineCount == held + 1000)
    }

    // MARK: - The end

    @Test(arguments: [true, false])
    func endAfterHalfARecord(seenEOF: Bool) throws {
        let configuration = Self.configuration(jobs: 1)
        let pool = JobPool(configuration: configuration)
        defer { pool.close() }
        let complete = Self.responses(2)
        let half = Array(Self.responses(1, from: 2).dropLast(10))
        for chunk in [1, 7, Int.max] {
            let sink = try Self.streamed(complete + half, chunk: chunk, configuration, pool: pool, seenEOF: seenEOF)
            let lines = Self.lines(sink.bytes)
            if seenEOF {
                #expect(lines.count == 3, "chunk \(chunk)")
                #expect(lines.last?.contains("\"truncatedRecord\"") == true, "\(lines.last ?? "")")
                #expect(lines.last?.contains("\"seq\":2,") == true)
            } else {
                #expect(lines.count == 2, "chunk \(chunk)")
            }
            #expect(lines.prefix(2).allSatisfy { $0.contains("\"ok\":true") })
            #expect(sink.summary?.records == lines.count)
            #expect(sink.finishes == 1)
        }
        // The runner gives the same at the end of its input.
        if seenEOF {
            let sink = try Self.streamed(complete + half, configuration, pool: pool)
            #expect(Self.difference(sink.bytes, try Self.runnerOutput(complete + half, configuration).lines) == nil)
        }
    }

    @Test(arguments: [1, 3])
    func cancelMidStreamFinishesOnceAndDeliversNothingAfter(jobs: Int) throws {
        let configuration = Self.configuration(jobs: jobs)
        let pool = JobPool(configuration: configuration)
        defer { pool.close() }
        let sink = CollectingSink(deliverySleep: 5_000)
        let (stream, _) = Self.makeStream(configuration, pool: pool, sink: sink)
        Self.feed(stream, Self.responses(8_000), chunk: 4096)
        try #require(sink.wait(20) { $0.deliveries > 0 })
        stream.cancel()
        try #require(sink.waitFinished(), "finished was not called after cancel")
        let delivered = sink.deliveries
        // What comes after is ignored, and nothing more is called.
        Self.feed(stream, Self.responses(10, from: 8_000))
        stream.end(seenEOF: true)
        stream.cancel()
        stream.outputDrained()
        usleep(300_000)
        #expect(sink.finishes == 1)
        #expect(sink.deliveries == delivered)
        #expect(sink.callsAfterFinished == 0)
        // Whatever was delivered is whole lines, in order from the start.
        for (k, line) in Self.lines(sink.bytes).enumerated() where !line.hasPrefix("{\"seq\":\(k),") {
            Issue.record("line \(k): \(line.prefix(100))")
            break
        }
    }

    @Test(arguments: [1, 3])
    func endWhileTheSinkIsFullFinishesOnceItDrains(jobs: Int) throws {
        let configuration = Self.configuration(jobs: jobs)
        let pool = JobPool(configuration: configuration)
        defer { pool.close() }
        let input = Self.responses(3_000)
        let reference = try Self.runnerOutput(input, configuration)
        let (stream, sink) = Self.makeStream(configuration, pool: pool, sink: CollectingSink(full: true))
        Self.feed(stream, input, chunk: 4096)
        stream.end(seenEOF: true)
        usleep(200_000)
        #expect(sink.finishes == 0)
        #expect(sink.deliveries == 0)
        // A drain that is not one (still full) changes nothing.
        stream.outputDrained()
        usleep(100_000)
        #expect(sink.deliveries == 0)
        sink.setFull(false)
        try #require(sink.waitFinished())
        #expect(Self.difference(sink.bytes, reference.lines) == nil)
        #expect(sink.finishes == 1)
        #expect(sink.summary?.records == 3_000)
    }

    @Test(arguments: [1, 3])
    func cancelWhileTheSinkIsFullFinishes(jobs: Int) throws {
        let configuration = Self.configuration(jobs: jobs)
        let pool = JobPool(configuration: configuration)
        defer { pool.close() }
        let (stream, sink) = Self.makeStream(configuration, pool: pool, sink: CollectingSink(full: true))
        Self.feed(stream, Self.responses(100))
        stream.end(seenEOF: true)
        usleep(100_000)
        #expect(sink.finishes == 0)
        stream.cancel()
        try #require(sink.waitFinished(20))
        usleep(100_000)
        #expect(sink.finishes == 1)
        #expect(sink.deliveries == 0)
    }

    @Test(arguments: [true, false])
    func emptyStreamHasNoLinesAndFinishesOnce(seenEOF: Bool) throws {
        let configuration = Self.configuration(jobs: 1)
        let pool = JobPool(configuration: configuration)
        defer { pool.close() }
        let sink = try Self.streamed([], configuration, pool: pool, seenEOF: seenEOF)
        usleep(100_000)
        #expect(sink.bytes.isEmpty)
        #expect(sink.deliveries == 0)
        #expect(sink.finishes == 1)
        #expect(sink.summary == RunSummary())
        // Also when ended twice.
        let (stream, twice) = Self.makeStream(configuration, pool: pool)
        stream.end(seenEOF: seenEOF)
        stream.end(seenEOF: true)
        try #require(twice.waitFinished())
        usleep(100_000)
        #expect(twice.finishes == 1)
    }

    // MARK: - Framings and writers

    /// With `--input auto` or `warc` (the runner reads a WACZ with either, docs/framings.md#wacz), in any chunks.
    @Test(arguments: [InputFormat.auto, .warc], [1, 3, Int.max])
    func waczGetsOneErrorLine(input: InputFormat, chunk: Int) throws {
        let configuration = Self.configuration(jobs: 1) { $0.input = input }
        let pool = JobPool(configuration: configuration)
        defer { pool.close() }
        let warc = try Corpora.bytes(Self.samples.appendingPathComponent("traffic.warc.gz"))
        let wacz = ZipFiles.make([
            ZipFiles.Entry("datapackage.json", Array(#"{"resources":[]}"#.utf8)),
            ZipFiles.Entry("archive/traffic.warc.gz", warc),
        ])
        let sink = try Self.streamed(wacz, chunk: chunk, configuration, pool: pool)
        let lines = Self.lines(sink.bytes)
        #expect(lines.count == 1, "--input \(input), chunk \(chunk): \(lines.first?.prefix(300) ?? "")")
        #expect(lines.first?.hasPrefix("{\"seq\":0,") == true)
        #expect(lines.first?.contains("\"ok\":false") == true)
        #expect(lines.first?.contains("\"malformedRecord\"") == true, "\(lines.first?.prefix(300) ?? "")")
        // The WACZ's own error, not the WARC framer's on the ZIP's bytes.
        #expect(lines.first?.contains("WACZ") == true, "\(lines.first?.prefix(300) ?? "")")
        #expect(sink.summary?.records == 1)
        #expect(sink.summary?.ok == 0)
    }

    @Test(arguments: [("traffic.ndjson", InputFormat.http), ("capture.http", .ndjson), ("capture.http", .warc)])
    func forcedInputFramesAsTold(_ file: String, _ format: InputFormat) throws {
        let input = try Corpora.bytes(Self.samples.appendingPathComponent(file))
        let configuration = Self.configuration(jobs: 1) { $0.input = format }
        let pool = JobPool(configuration: configuration)
        defer { pool.close() }
        let reference = try Self.runnerOutput(input, configuration)
        let detected = try Self.runnerOutput(input, Self.configuration(jobs: 1))
        #expect(reference.lines != detected.lines, "the forced framing must make a difference here")
        for chunk in [1, 4096, Int.max] {
            let sink = try Self.streamed(input, chunk: chunk, configuration, pool: pool)
            #expect(Self.difference(sink.bytes, reference.lines) == nil, "\(file) as \(format), chunk \(chunk)")
        }
    }

    /// Detection decides on the first bytes however they arrive (docs/framings.md#detection): the framing, and so
    /// the lines, do not depend on the chunks, also when the first 64 bytes are white space.
    @Test(arguments: [1, 7, Int.max])
    func detectionDoesNotDependOnTheChunks(chunk: Int) throws {
        let configuration = Self.configuration(jobs: 1)
        let pool = JobPool(configuration: configuration)
        defer { pool.close() }
        let ndjson = try Corpora.bytes(Self.samples.appendingPathComponent("traffic.ndjson"))
        let input = Array(String(repeating: "\r\n", count: 40).utf8) + ndjson
        let reference = try Self.runnerOutput(input, configuration)
        #expect(Self.lines(reference.lines).first?.contains("\"ok\":true") == true, "read as ndjson")
        let sink = try Self.streamed(input, chunk: chunk, configuration, pool: pool)
        #expect(Self.difference(sink.bytes, reference.lines) == nil, "chunk \(chunk)")
    }

    /// The WARC options that change framing (every record type, no digests) and revisits resolved on the framing
    /// task (`--resolve-revisits`), against the runner's output with the same options.
    @Test(
        .enabled(if: Corpora.available, Comment(rawValue: Corpora.skipMessage)),
        arguments: ["all types", "no digests", "revisits"])
    func warcOptionsGiveTheRunnersLines(_ option: String) throws {
        for path in ["warc/warcio/data/example.warc.gz", "warc/warcio/data/example-iana.org-chunked.warc"] {
            let input = try Corpora.bytes(path)
            for jobs in [1, 3] {
                let configuration = Self.configuration(jobs: jobs) {
                    switch option {
                    case "all types": $0.warcTypes = nil
                    case "no digests": $0.verifyDigests = false
                    default: $0.resolveRevisits = true
                    }
                }
                let reference = try Self.runnerOutput(input, configuration)
                let pool = JobPool(configuration: configuration)
                defer { pool.close() }
                for chunk in [1, 4096, Int.max] {
                    let sink = try Self.streamed(input, chunk: chunk, configuration, pool: pool)
                    #expect(Self.difference(sink.bytes, reference.lines) == nil, "\(path), \(option), chunk \(chunk)")
                    #expect(sink.summary?.skipped == reference.summary.skipped)
                }
            }
        }
    }

    /// The sink's deliveries come one at a time for a stream, and `finished` after the last (LineSink's contract);
    /// `wantsInput`, which the framing task makes while workers deliver, may overlap them.
    @Test func sinkCallsNeverOverlap() throws {
        let configuration = Self.configuration(jobs: 3)
        let pool = JobPool(configuration: configuration)
        defer { pool.close() }
        var overlaps: [String] = []
        var late = 0
        for round in 0..<20 {
            let sink = CollectingSink(deliverySleep: 300)
            let (stream, _) = Self.makeStream(configuration, pool: pool, sink: sink)
            // Over the high water in one piece, then a little more once asked, then the end.
            Self.feed(stream, Self.responses(40, padding: 30 * 1024))
            try #require(sink.wait(20) { $0.wants == 1 }, "round \(round)")
            Self.feed(stream, Self.responses(5, from: 40))
            stream.end(seenEOF: true)
            try #require(sink.waitFinished(), "round \(round)")
            #expect(sink.lineCount == 45)
            overlaps += sink.overlaps
            late += sink.callsAfterFinished
        }
        #expect(overlaps.isEmpty, "calls that overlapped another in 20 streams: \(Set(overlaps))")
        #expect(late == 0)
    }

    @Test func statisticsCountTheStreamsLinesAndBytes() throws {
        let configuration = Self.configuration(jobs: 3)
        let pool = JobPool(configuration: configuration)
        defer { pool.close() }
        let statistics = Statistics()
        let input = Self.responses(3_000)
        let sinks = (0..<2).map { _ in CollectingSink() }
        let streams = sinks.map {
            DecodeStream(configuration: configuration, pool: pool, statistics: statistics, sink: $0)
        }
        for stream in streams {
            Self.feed(stream, input, chunk: 10_000)
            stream.end(seenEOF: true)
        }
        for sink in sinks { try #require(sink.waitFinished()) }
        let snapshot = statistics.snapshot
        #expect(snapshot.records == 6_000)
        #expect(snapshot.ok == 6_000)
        #expect(snapshot.bytesRead == Int64(2 * input.count))
    }

    @Test func writerOfItsOwnChangesOnlyItsStreamsLines() throws {
        let configuration = Self.configuration(jobs: 3)
        var keepNulls = configuration
        keepNulls.decoding.options.stripNulls = false
        let pool = JobPool(configuration: configuration)
        defer { pool.close() }
        let input = Self.responses(3_000)
        let plain = try Self.runnerOutput(input, configuration).lines
        let kept = try Self.runnerOutput(input, keepNulls).lines
        #expect(plain != kept)
        let (a, sinkA) = Self.makeStream(configuration, pool: pool)
        let (b, sinkB) = Self.makeStream(
            configuration, pool: pool, writer: CompoundDecoder(configuration: keepNulls))
        let (c, sinkC) = Self.makeStream(configuration, pool: pool)
        for piece in stride(from: 0, to: input.count, by: 50_000) {
            let bytes = Array(input[piece..<min(input.count, piece + 50_000)])
            Self.feed(a, bytes)
            Self.feed(b, bytes)
            Self.feed(c, bytes)
        }
        for stream in [a, b, c] { stream.end(seenEOF: true) }
        for sink in [sinkA, sinkB, sinkC] { try #require(sink.waitFinished()) }
        #expect(Self.difference(sinkA.bytes, plain) == nil)
        #expect(Self.difference(sinkB.bytes, kept) == nil)
        #expect(Self.difference(sinkC.bytes, plain) == nil)
    }

    // MARK: - Reports

    @Test func reportsCountTheirLinesAndTimeEachRecord() throws {
        let configuration = Self.configuration(jobs: 3)
        let pool = JobPool(configuration: configuration, timesRecords: true)
        defer { pool.close() }
        var input = Self.responses(5_000)
        // A few failures too.
        input += Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 3\r\n\r\n{x}".utf8)
        input += Array("HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nno".utf8)
        let reference = try Self.runnerOutput(input, configuration)
        let sink = try Self.streamed(input, chunk: 8192, configuration, pool: pool)
        let reports = sink.reports
        #expect(reports.count > 1)
        for report in reports {
            #expect(report.decodeNanoseconds.count == report.records)
            #expect(report.byDecoder.values.reduce(0) { $0 + $1.records } == report.records)
            #expect(report.records - report.ok == report.errorsByCode.values.reduce(0, +))
        }
        #expect(reports.reduce(0) { $0 + $1.records } == 5_002)
        #expect(reports.reduce(0) { $0 + $1.ok } == sink.summary?.ok)
        #expect(sink.summary?.records == 5_002)
        #expect(sink.summary?.ok == reference.summary.ok)
        #expect(reference.summary.ok < 5_002)
    }

    @Test func reportsWithoutTimingHaveNoTimes() throws {
        let configuration = Self.configuration(jobs: 1)
        let pool = JobPool(configuration: configuration)
        defer { pool.close() }
        let sink = try Self.streamed(Self.responses(50), configuration, pool: pool)
        #expect(!sink.reports.isEmpty)
        #expect(sink.reports.allSatisfy { $0.decodeNanoseconds.isEmpty && $0.records > 0 })
    }

    /// Records a `--select-…` filter skips have no line and are not `records`: nor should they be decode times
    /// (docs/sidecar.md#metrics: the histogram is of records decoded).
    @Test func skippedRecordsAreNotTimed() throws {
        let configuration = Self.configuration(jobs: 1) { $0.decoding.selection.minBodyBytes = 31 }
        let pool = JobPool(configuration: configuration, timesRecords: true)
        defer { pool.close() }
        // Bodies of 28 bytes and the digits of n: records 0 to 99 are shorter than 31.
        let sink = try Self.streamed(Self.responses(200), configuration, pool: pool)
        let reports = sink.reports
        let records = reports.reduce(0) { $0 + $1.records }
        #expect(records == sink.lineCount)
        #expect(records == 100)
        #expect(reports.reduce(0) { $0 + $1.decodeNanoseconds.count } == records)
    }
}
