internal import Glibc
import Logging
import NIOCore
internal import RespDecode

/// One connection of the stream protocol (docs/sidecar.md#semantics): bytes in, one ``DecodeStream``, lines out on
/// the same connection; the client's half-close ends the stream, and the server closes once every line is written.
///
/// Everything here runs on the connection's event loop; framing and decoding run on the pool. Timeouts are one timer
/// per connection, re-armed for the nearest deadline: the first byte (`--first-byte-timeout`), silence in the middle
/// of the stream (`--idle-timeout`: taken as the end of the input, as before), and lines the client does not read
/// (`--idle-timeout` without progress: the connection is dropped).
final class StreamConnectionHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    /// How long a connection that is done may still send before it is closed anyway (its input is read and dropped
    /// meanwhile, so that closing does not reset it while its last lines are on the way).
    static let closingGrace = 2.0

    private let server: ServerContext
    private var logger: Logger
    private var context: ChannelHandlerContext?
    private var stream: DecodeStream?
    private var sink: ChannelSink?
    private var id = 0
    private var connectedAt = NIODeadline.now()
    private var lastRead = NIODeadline.now()
    private var sawByte = false
    private var inputEnded = false
    /// The client half-closed (not only: reading stopped).
    private var clientEnded = false
    private var finished = false
    private var closing = false
    /// Every line was written and our side of the connection ended.
    private var outputDone = false
    /// Reading is paused because the stream holds enough unframed input: silence then is ours, not the client's.
    private var readingPaused = false
    private var timer: Scheduled<Void>?

    init(server: ServerContext) {
        self.server = server
        logger = server.logger
    }

    func channelActive(context: ChannelHandlerContext) {
        self.context = context
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let channel = context.channel
        let sink = ChannelSink(
            channel: channel, metrics: server.metrics,
            write: { buffer, promise in channel.writeAndFlush(buffer, promise: promise) },
            onFinished: { summary in bound.value.streamFinished(summary) },
            onWantsInput: { bound.value.resumeReading() })
        let stream = DecodeStream(
            configuration: server.configuration, pool: server.pool, statistics: server.statistics, sink: sink)
        sink.attach(stream)
        self.sink = sink
        self.stream = stream
        let loop = context.eventLoop
        id = server.opened(
            drain: { loop.execute { bound.value.drain() } }, close: { channel.close(promise: nil) })
        logger[metadataKey: "connection"] = "\(id)"
        logger.debug("accepted")
        server.metrics.connection("stream", 1)
        connectedAt = .now()
        lastRead = connectedAt
        arm()
        context.fireChannelActive()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        guard !inputEnded, let stream else { return } // after the end: read and dropped (the closing grace)
        sawByte = true
        lastRead = .now()
        server.metrics.received(bytes: buffer.readableBytes)
        let more = buffer.withUnsafeReadableBytes { stream.feed($0) }
        if !more {
            readingPaused = true
            context.channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if let event = event as? ChannelEvent, event == .inputClosed {
            clientEnded = true
            if outputDone {
                // Done and the client has closed too.
                context.close(promise: nil)
            } else if finished {
                // Closed once the last lines are written (outputClosed).
            } else if !inputEnded {
                inputEnded = true
                stream?.end(seenEOF: true)
            }
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        if !finished {
            if !inputEnded || (sink?.pending ?? 0) > 0 {
                logger.info("the client went away before all its lines were written")
            }
            stream?.cancel()
        }
        // The sink's callbacks hold this handler: drop it, or handler and sink keep each other for ever.
        stream = nil
        sink = nil
        server.metrics.connection("stream", -1)
        server.closed(id)
        logger.debug("closed")
        self.context = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if let error = error as? IOError, error.errnoCode == ECONNRESET || error.errnoCode == EPIPE {
            logger.info("the connection was reset by the other end")
        } else {
            logger.warning("connection error: \(error)")
        }
        context.close(promise: nil)
    }

    /// Every line is delivered: end our side, then let the client close (or close after the grace).
    private func streamFinished(_ summary: RunSummary) {
        finished = true
        stream = nil
        logger.debug("\(summary.records) lines")
        guard let context, !closing else { return }
        closing = true
        let channel = context.channel
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        // The lines go first: an empty write completes after every write queued before it (NIO completes writes in
        // order, and closing fails the writes still pending); then the end of our output. Until then the timer
        // still drops a client that takes none of its lines for the idle timeout (a drain does not cut a slow
        // reader short, and one that never reads does not stay for ever).
        channel.writeAndFlush(channel.allocator.buffer(capacity: 0)).flatMap {
            channel.close(mode: .output)
        }.whenComplete { _ in bound.value.outputClosed() }
        arm()
    }

    /// Every line is written and our side ended: close, or read and drop what the client may still send for the
    /// grace at most.
    private func outputClosed() {
        outputDone = true
        guard let context else { return }
        let channel = context.channel
        timer?.cancel()
        if clientEnded {
            channel.close(promise: nil)
            return
        }
        channel.setOption(ChannelOptions.autoRead, value: true).whenComplete { _ in channel.read() }
        timer = context.eventLoop.scheduleTask(in: ServerContext.amount(Self.closingGrace)) {
            channel.close(promise: nil)
        }
    }

    private func resumeReading() {
        readingPaused = false
        lastRead = .now()
        guard let context, !inputEnded else { return }
        let channel = context.channel
        channel.setOption(ChannelOptions.autoRead, value: true).whenSuccess { channel.read() }
    }

    /// A drain (SIGTERM): stop reading; the records received in full get their lines, then the connection closes.
    private func drain() {
        guard let context, !inputEnded else { return }
        inputEnded = true
        context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
        stream?.end(seenEOF: false)
    }

    /// Arms the timer for the nearest deadline that applies now.
    private func arm() {
        guard let context, !outputDone else { return }
        timer?.cancel()
        var deadlines: [NIODeadline] = []
        if !sawByte, let first = server.settings.firstByteTimeout {
            deadlines.append(connectedAt + ServerContext.amount(first))
        }
        if let idle = server.settings.idleTimeout {
            if !inputEnded && !readingPaused { deadlines.append(lastRead + ServerContext.amount(idle)) }
            // Lines waiting for the client: looked at once a second (an idle connection costs no wake-ups).
            if inputEnded || readingPaused || (sink?.pending ?? 0) > 0 { deadlines.append(.now() + .seconds(1)) }
        }
        guard let next = deadlines.min() else { return }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: next) { bound.value.timerFired() }
    }

    private func timerFired() {
        guard let context, !outputDone else { return }
        let now = NIODeadline.now()
        if !sawByte, !inputEnded, let first = server.settings.firstByteTimeout,
            now >= connectedAt + ServerContext.amount(first)
        {
            logger.info("the client sent nothing for \(first) s: closed")
            stream?.cancel()
            context.close(promise: nil)
            return
        }
        if let idle = server.settings.idleTimeout {
            if !inputEnded, !readingPaused, now >= lastRead + ServerContext.amount(idle) {
                logger.notice("nothing from the connection for \(idle) s: taken as its end")
                inputEnded = true
                context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
                stream?.end(seenEOF: true)
            }
            if let sink, sink.pending > 0, Double(sink.stalledFor) / 1e9 >= idle {
                logger.warning("the client read none of its lines for \(idle) s: dropped")
                stream?.cancel()
                context.close(promise: nil)
                return
            }
        }
        arm()
    }
}
