internal import Glibc
import NIOConcurrencyHelpers
import NIOCore
internal import RespDecode
import Synchronization

/// A ``DecodeStream``'s lines on their way to a connection: called by the workers, it copies each batch's lines and
/// hands them to the connection's event loop (`write`, which the connection's handler supplies: raw bytes for the
/// stream protocol, chunks of an HTTP response for the API). It counts the bytes not yet taken by the socket: above
/// ``highWater`` the stream frames nothing more until they fall below ``lowWater`` (a client that reads nothing holds
/// a bounded amount of memory), and the handler's timer drops a client whose bytes have not moved for the idle
/// timeout.
final class ChannelSink: LineSink, @unchecked Sendable {
    /// Unwritten bytes above which the stream pauses.
    static let highWater = 1 << 20
    /// …and below which it resumes.
    static let lowWater = 256 << 10

    private let eventLoop: any EventLoop
    private let allocator: ByteBufferAllocator
    private let metrics: ServeMetrics
    private let write: @Sendable (ByteBuffer, EventLoopPromise<Void>) -> Void
    private let onFinished: @Sendable (RunSummary) -> Void
    private let onWantsInput: @Sendable () -> Void
    private let pendingBytes = Atomic<Int>(0)
    private let full = Atomic<Bool>(false)
    private let lastProgress = Atomic<UInt64>(0)
    private let stream = NIOLockedValueBox<DecodeStream?>(nil)

    /// - Parameters:
    ///   - channel: the connection.
    ///   - metrics: where delivered batches are counted.
    ///   - write: writes one buffer of lines (on the event loop), completing the promise when the socket took it.
    ///   - onFinished: the stream's last line was delivered (on the event loop).
    ///   - onWantsInput: the stream wants input again (on the event loop).
    init(
        channel: any Channel, metrics: ServeMetrics,
        write: @escaping @Sendable (ByteBuffer, EventLoopPromise<Void>) -> Void,
        onFinished: @escaping @Sendable (RunSummary) -> Void, onWantsInput: @escaping @Sendable () -> Void
    ) {
        eventLoop = channel.eventLoop
        allocator = channel.allocator
        self.metrics = metrics
        self.write = write
        self.onFinished = onFinished
        self.onWantsInput = onWantsInput
        lastProgress.store(Self.now, ordering: .relaxed)
    }

    /// The stream this sink serves (set once, right after both are made).
    func attach(_ stream: DecodeStream) { self.stream.withLockedValue { $0 = stream } }

    var hasRoom: Bool { pendingBytes.load(ordering: .acquiring) < Self.highWater }

    /// Bytes handed to the event loop and not yet taken by the socket.
    var pending: Int { pendingBytes.load(ordering: .acquiring) }

    /// Nanoseconds (monotonic) since the socket last took bytes, or since the sink was made.
    var stalledFor: UInt64 { Self.now &- lastProgress.load(ordering: .relaxed) }

    /// Largest piece written at once: each piece's completion is progress, so a client that reads slowly but
    /// steadily is never taken for one that reads nothing (a batch's lines can be megabytes).
    static let pieceBytes = 64 << 10

    func deliver(_ lines: UnsafeRawBufferPointer, report: BatchReport) {
        metrics.delivered(report, bytes: lines.count)
        guard !lines.isEmpty else { return }
        let before = pendingBytes.wrappingAdd(lines.count, ordering: .acquiringAndReleasing).oldValue
        if before == 0 { lastProgress.store(Self.now, ordering: .relaxed) }
        if before + lines.count >= Self.highWater { full.store(true, ordering: .sequentiallyConsistent) }
        var pieces: [(ByteBuffer, Int)] = []
        var start = 0
        while start < lines.count {
            let end = min(start + Self.pieceBytes, lines.count)
            pieces.append((allocator.buffer(bytes: UnsafeRawBufferPointer(rebasing: lines[start..<end])), end - start))
            start = end
        }
        let write = write
        let sendable = pieces
        // The promises are made on the loop, in the task: a task a stopped loop drops leaves no promise behind.
        eventLoop.execute { [self] in
            for (buffer, count) in sendable {
                let promise = eventLoop.makePromise(of: Void.self)
                promise.futureResult.whenComplete { [self] _ in written(count) }
                write(buffer, promise)
            }
        }
    }

    /// `count` bytes were taken by the socket (or dropped with the connection).
    private func written(_ count: Int) {
        lastProgress.store(Self.now, ordering: .relaxed)
        let left = pendingBytes.wrappingSubtract(count, ordering: .acquiringAndReleasing).newValue
        if left < Self.lowWater, full.exchange(false, ordering: .sequentiallyConsistent) {
            stream.withLockedValue { $0 }?.outputDrained()
        }
    }

    func wantsInput() { eventLoop.execute(onWantsInput) }

    func finished(_ summary: RunSummary) {
        let onFinished = onFinished
        stream.withLockedValue { $0 = nil }
        eventLoop.execute { onFinished(summary) }
    }

    static var now: UInt64 { MonotonicClock.nanoseconds }
}
