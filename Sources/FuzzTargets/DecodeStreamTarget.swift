import Foundation
import Logging
import RespDecode
import RespDecodeTestSupport

/// `serve`'s push-driven stream (``DecodeStream``, docs/sidecar.md#semantics): an input fed in the chunks a schedule
/// says, with the sink saying "no room" now and then, gives exactly the bytes the same input gives fed whole, and
/// exactly those ``StreamRunner`` writes reading it from a descriptor; `finished` comes once, and nothing after it.
///
/// The fuzz input is `n`, then `n` schedule bytes, then the input (`n` at most what follows). A schedule byte `b`
/// is a chunk of `b + 1` bytes below 0x80, of `(b - 0x7F) × 509` bytes from 0x80 to 0xFE (at least 1/1024 of the
/// input); 0xFF turns the sink full, or back to having room. The schedule repeats; none: the input in one piece. Each
/// piece is fed once the stream has taken the one before, so that framing sees the input in these pieces.
enum DecodeStreamTarget {
    /// Two workers, shared by every run, as `serve`'s connections share theirs.
    static let configuration: Configuration = {
        var configuration = FuzzLimits.configuration()
        configuration.jobs = 2
        return configuration
    }()
    static let pool = JobPool(configuration: configuration)
    static let quiet = Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() }

    static func run(_ data: UnsafeBufferPointer<UInt8>) {
        guard !data.isEmpty else { return }
        let n = min(Int(data[0]), data.count - 1)
        let schedule = Array(data[1..<(1 + n)])
        let input = Array(data[(1 + n)...])
        let chunked = streamed(input, schedule: schedule)
        let whole = streamed(input, schedule: [])
        compare(chunked.lines, whole.lines, "chunked (schedule \(schedule.prefix(20))) against whole")
        guard chunked.summary == whole.summary else {
            violated("summaries: chunked \(chunked.summary), whole \(whole.summary)")
        }
        // A WACZ needs random access: the runner reads it, a stream gives one error line.
        let zip = input.withUnsafeBufferPointer { InputDetection.decide(UnsafeBufferPointer(rebasing: $0.prefix(64))) }
        if zip == .zip { return }
        let runner = runnerOutput(input)
        compare(whole.lines, runner.lines, "whole against the runner")
        guard whole.summary.records == runner.summary.records, whole.summary.ok == runner.summary.ok,
            whole.summary.skipped == runner.summary.skipped
        else {
            violated("summaries: stream \(whole.summary), runner \(runner.summary)")
        }
        for sink in [chunked.sink, whole.sink] {
            guard sink.finishes == 1, sink.lateCalls == 0 else {
                violated("finished \(sink.finishes) times, \(sink.lateCalls) calls after it")
            }
        }
    }

    private static func compare(_ got: [UInt8], _ expected: [UInt8], _ what: String) {
        guard got != expected else { return }
        let a = got.split(separator: 0x0A, omittingEmptySubsequences: false)
        let b = expected.split(separator: 0x0A, omittingEmptySubsequences: false)
        let k = zip(a, b).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(a.count, b.count)
        func show(_ lines: [ArraySlice<UInt8>]) -> String {
            k < lines.count ? String(decoding: lines[k].prefix(300), as: UTF8.self) : "(none)"
        }
        violated("\(what): \(a.count - 1) lines against \(b.count - 1); line \(k): \(show(a)) against \(show(b))")
    }

    private static func streamed(_ input: [UInt8], schedule: [UInt8]) -> (
        lines: [UInt8], summary: RunSummary, sink: Sink
    ) {
        let sink = Sink()
        weak var released: DecodeStream?
        let summary: RunSummary? = {
            let stream = DecodeStream(configuration: configuration, pool: pool, statistics: Statistics(), sink: sink)
            released = stream
            sink.stream = stream
            feed(input, schedule: schedule, into: stream, sink: sink)
            sink.setFull(false)
            stream.end(seenEOF: true)
            return sink.waitFinished(seconds: 8) ? sink.summary : nil
        }()
        guard let summary else { violated("no finish within 8 s (schedule \(schedule.prefix(20)))") }
        // The worker that finished the stream lets go of it a moment after `finished`: wait for that, so that
        // libFuzzer's leak check between inputs does not take the stream in flight (its weak-reference side table,
        // which LeakSanitizer cannot follow) for a leak; a stream never freed is a violation.
        var waited = 0
        while released != nil && waited < 8_000 {
            usleep(1000)
            waited += 1
        }
        if released != nil { violated("the stream was not freed within 8 s of its finish") }
        return (sink.bytes, summary, sink)
    }

    /// Feeds `input` to `stream` after `schedule`.
    private static func feed(_ input: [UInt8], schedule: [UInt8], into stream: DecodeStream, sink: Sink) {
        // A schedule of nothing but toggles feeds the input whole after them.
        let cuts = schedule.contains { $0 != 0xFF }
        input.withUnsafeBytes { raw in
            var start = 0
            var step = 0
            while start < raw.count {
                var size = raw.count - start
                if !schedule.isEmpty {
                    let b = schedule[step % schedule.count]
                    step += 1
                    if b == 0xFF {
                        sink.setFull(!sink.hasRoom)
                        if cuts { continue }
                    } else {
                        // At most about 1,024 feeds, so that a large input fed a byte at a time stays fast.
                        let chunk = max(b < 0x80 ? Int(b) + 1 : Int(b - 0x7F) * 509, raw.count / 1024)
                        size = min(size, chunk)
                    }
                }
                stream.feed(UnsafeRawBufferPointer(rebasing: raw[start..<(start + size)]))
                start += size
                // Until the framing task has taken the piece (unless the sink holds it up): it then sees the input in
                // these pieces, not in whatever piled up meanwhile.
                var spins = 0
                while !schedule.isEmpty && sink.hasRoom && stream.waitingBytes > 0 && spins < 10_000 {
                    sched_yield()
                    spins += 1
                }
            }
        }
    }

    /// What the runner writes reading `input` from a descriptor (a temporary file), with the same pool.
    private static func runnerOutput(_ input: [UInt8]) -> (lines: [UInt8], summary: RunSummary) {
        do {
            return try RunnerOutput.of(input, configuration: configuration, pool: pool, logger: quiet)
        } catch {
            violated("the runner failed: \(error)")
        }
    }

    /// Keeps the lines; can say it has no room.
    final class Sink: LineSink, @unchecked Sendable {
        private let condition = NSCondition()
        private var collected: [UInt8] = []
        private var full = false
        private(set) var finishes = 0
        private(set) var lateCalls = 0
        private(set) var summary: RunSummary?
        weak var stream: DecodeStream?

        func deliver(_ lines: UnsafeRawBufferPointer, report: BatchReport) {
            condition.withLock {
                if finishes > 0 { lateCalls += 1 }
                collected.append(contentsOf: lines)
            }
        }

        var hasRoom: Bool { condition.withLock { !full } }

        func wantsInput() { condition.withLock { if finishes > 0 { lateCalls += 1 } } }

        func finished(_ summary: RunSummary) {
            condition.withLock {
                if finishes > 0 { lateCalls += 1 }
                finishes += 1
                self.summary = summary
                condition.broadcast()
            }
        }

        func setFull(_ value: Bool) {
            condition.withLock { full = value }
            if !value { stream?.outputDrained() }
        }

        var bytes: [UInt8] { condition.withLock { collected } }

        func waitFinished(seconds: Double) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            return condition.withLock {
                while finishes == 0 { if !condition.wait(until: deadline) { return finishes > 0 } }
                return true
            }
        }
    }
}
