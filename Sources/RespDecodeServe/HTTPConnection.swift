internal import Glibc
import Logging
import NIOCore
import NIOHTTP1
internal import RespDecode
import Synchronization

/// One connection of the HTTP/1.1 API (docs/sidecar.md#http-api). NIO's llhttp-based decoder parses requests (its
/// parse errors are answered 400 with a JSON body here, and the connection closed); this handler routes
/// them, refuses what could smuggle or pipeline, streams a request body into a ``DecodeStream`` and its lines out as
/// the chunked body of the answer, in order, as they are decoded.
///
/// Keep-alive is kept, one request at a time: a request that arrives before the answer to the one before is complete
/// (pipelining) is answered 400 once that answer is done, and the connection is closed. Timeouts (one timer, re-armed
/// for the nearest deadline): the first byte of a request (`--first-byte-timeout`, and between requests the idle
/// timeout), the whole head from its first byte (`--header-timeout`: 408), silence in a body (`--idle-timeout`:
/// 408), and an answer the client does not read (`--idle-timeout` without progress: the connection is dropped).
final class HTTPConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    /// The handlers of an HTTP connection, in order.
    static func configure(_ pipeline: ChannelPipeline.SynchronousOperations, server: ServerContext) throws {
        let activity = ActivityHandler()
        try pipeline.addHandler(activity)
        try pipeline.addHandler(HTTPResponseEncoder())
        try pipeline.addHandler(ByteToMessageHandler(HTTPRequestDecoder(leftOverBytesStrategy: .dropBytes)))
        try pipeline.addHandler(HTTPConnectionHandler(server: server, activity: activity))
    }

    /// The routes (docs/sidecar.md#http-api).
    enum Route: String {
        case decode = "/decode"
        case decodeResponse = "/decode/response"
        case healthz = "/healthz"
        case readyz = "/readyz"
        case metrics = "/metrics"

        var methods: [HTTPMethod] {
            switch self {
            case .decode, .decodeResponse: [.POST]
            case .healthz, .readyz, .metrics: [.GET, .HEAD]
            }
        }
    }

    /// A request being received or answered.
    private final class Exchange {
        let route: Route?
        let method: HTTPMethod
        let version: HTTPVersion
        var keepAlive: Bool
        var stream: DecodeStream?
        var sink: ChannelSink?
        var holdsSlot = false
        /// `/decode/response`: the body, kept whole; and the head it is decoded with.
        var body: [UInt8] = []
        var responseHead: [UInt8] = []
        var bodyBytes = 0
        /// Most body bytes taken (`--max-request-bytes`; for `/decode/response` also a record's `--max-body-bytes`).
        var bodyLimit = Int.max
        var headSent = false
        /// Refused after the stream began: its lines, still on their way, are dropped.
        var refused = false
        /// The answer's end is written (what follows it on the connection is another answer).
        var answerEnded = false
        var contentType = "application/x-ndjson"
        /// A simple route's answer, sent at the request's end.
        var simple: (status: HTTPResponseStatus, type: String, body: [UInt8], extra: [(String, String)])?

        init(route: Route?, method: HTTPMethod, version: HTTPVersion = .http1_1, keepAlive: Bool) {
            self.route = route
            self.method = method
            self.version = version
            self.keepAlive = keepAlive
        }
    }

    private enum State {
        /// Waiting for a request's head.
        case idle
        /// Reading a request's body.
        case receiving(Exchange)
        /// The body is in; the answer is on its way.
        case responding(Exchange)
        /// Closing: nothing more is read or answered.
        case closing
    }

    private let server: ServerContext
    private let activity: ActivityHandler
    private var logger: Logger
    private var context: ChannelHandlerContext?
    private var state = State.idle
    private var id = 0
    /// A request came while one was being answered: refused once that answer is done.
    private var pipelined = false
    /// The exchange of the request being received or answered (kept until the next, then forgotten).
    private var current: Exchange?
    /// The read (ActivityHandler.reads) that brought the end of the last request: a next head from the same read
    /// was sent before its answer.
    private var endedInRead = -1
    /// When the last answer was complete on our side (waiting for the client to take it).
    private var answerWrittenSince = NIODeadline.now()
    /// A drain began: close after the answer in flight.
    private var draining = false
    /// The client half-closed: the answer in flight is finished, then the connection closes.
    private var clientEnded = false
    /// Reading is paused because the request's stream holds enough unframed input (its lines are not being read
    /// fast enough): silence then is ours, not the client's.
    private var readingPaused = false
    /// When reading last resumed after a pause (the body's silence is counted from then at the earliest).
    private var pausedUntil = NIODeadline.uptimeNanoseconds(0)
    /// When the connection became idle (waiting for a request), and whether any request was served on it yet.
    private var idleSince = NIODeadline.now()
    private var served = 0
    private var timer: Scheduled<Void>?

    init(server: ServerContext, activity: ActivityHandler) {
        self.server = server
        self.activity = activity
        logger = server.logger
    }

    func channelActive(context: ChannelHandlerContext) {
        self.context = context
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let loop = context.eventLoop
        let channel = context.channel
        id = server.opened(
            drain: { loop.execute { bound.value.drain() } }, close: { channel.close(promise: nil) })
        logger[metadataKey: "connection"] = "\(id)"
        server.metrics.connection("http", 1)
        activity.onFirstByte = { bound.value.arm() }
        becomeIdle()
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        timer?.cancel()
        switch state {
        case .receiving(let exchange), .responding(let exchange):
            exchange.stream?.cancel()
            release(exchange)
        case .idle, .closing:
            break
        }
        state = .closing
        if let current {
            // Whatever path closed the connection, the exchange's stream stops and its place is given back.
            current.stream?.cancel()
            release(current)
            forget(current)
        }
        current = nil
        // The first-byte callback holds this handler: drop it, or the two keep each other for ever.
        activity.onFirstByte = nil
        server.metrics.connection("http", -1)
        server.closed(id)
        self.context = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if case .closing = state {
            // What a connection we are closing leaves behind (a body cut off by our own close).
            logger.debug("after closing: \(error)")
        } else if let error = error as? HTTPParserError {
            logger.info("a malformed request: \(error) (answered 400)")
            return badRequest("a malformed request: \(error)", context: context)
        } else if let error = error as? IOError, error.errnoCode == ECONNRESET || error.errnoCode == EPIPE {
            logger.info("the connection was reset by the other end")
        } else {
            logger.warning("connection error: \(error)")
        }
        context.close(promise: nil)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let event = event as? ChannelEvent, event == .inputClosed else {
            return context.fireUserInboundEventTriggered(event)
        }
        clientEnded = true
        switch state {
        case .idle, .closing:
            state = .closing
            context.close(promise: nil)
        case .receiving:
            badRequest("the request ended before its body did", context: context)
        case .responding:
            break // closed after the answer (keepsAlive is false now)
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head): received(head, context: context)
        case .body(let buffer): received(buffer, context: context)
        case .end: receivedEnd(context: context)
        }
    }

    // MARK: requests

    private func received(_ head: HTTPRequestHead, context: ChannelHandlerContext) {
        guard case .idle = state else {
            if case .closing = state { return }
            // Pipelining: nothing more is read; the answer in flight finishes, then 400 and close.
            pipelined = true
            context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
            return
        }
        if served > 0 && activity.reads == endedInRead {
            // Sent with the request before it, not after its answer: pipelined.
            pipelined = true
            return badRequest("pipelined requests are not served: send one request at a time", context: context)
        }
        served += 1
        let target = head.uri
        let path = String(target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        let query = target.firstIndex(of: "?").map { String(target[target.index(after: $0)...]) } ?? ""
        let route = Route(rawValue: path)
        // HTTP/1.0 has no chunks: a decode's answer ends with the connection.
        let keepAlive =
            head.isKeepAlive && !draining
            && !(head.version.minor == 0 && (route == .decode || route == .decodeResponse))
        let exchange = Exchange(route: route, method: head.method, version: head.version, keepAlive: keepAlive)
        if let current { forget(current) }
        current = exchange
        state = .receiving(exchange)
        arm()

        if let refusal = Self.smuggling(head) {
            return refuse(exchange, .badRequest, refusal, context: context)
        }
        // The token first: without it, nothing but the probes answers, not even which paths exist.
        if route != .healthz && route != .readyz, let token = server.settings.authToken {
            guard Self.authorized(head.headers["authorization"], token: token) else {
                return refuse(
                    exchange, .unauthorized, "this server needs a bearer token", context: context, closing: false,
                    extra: [("WWW-Authenticate", "Bearer")])
            }
        }
        guard let route else {
            return refuse(exchange, .notFound, "no such path: \(path)", context: context, closing: false)
        }
        guard route.methods.contains(head.method) else {
            return refuse(
                exchange, .methodNotAllowed, "\(path) takes \(route.methods.map(\.rawValue).joined(separator: ", "))",
                context: context, closing: false,
                extra: [("Allow", route.methods.map(\.rawValue).joined(separator: ", "))])
        }
        switch route {
        case .healthz:
            exchange.simple = (.ok, "text/plain; charset=utf-8", Array("ok\n".utf8), [])
        case .readyz:
            exchange.simple =
                server.isReady
                ? (.ok, "text/plain; charset=utf-8", Array("ready\n".utf8), [])
                : (
                    .serviceUnavailable, "text/plain; charset=utf-8",
                    Array((draining || server.isDraining ? "draining\n" : "busy\n").utf8), [("Retry-After", "1")]
                )
        case .metrics:
            exchange.simple = (.ok, "text/plain; version=0.0.4; charset=utf-8", server.metrics.exposition(), [])
        case .decode, .decodeResponse:
            startDecoding(exchange, head: head, query: query, context: context)
        }
    }

    private func startDecoding(
        _ exchange: Exchange, head: HTTPRequestHead, query: String, context: ChannelHandlerContext
    ) {
        if let length = head.headers.first(name: "content-length").flatMap(Int.init),
            length > server.settings.maxRequestBytes
        {
            return refuse(
                exchange, .payloadTooLarge,
                "the body is \(length) bytes; this server takes at most \(server.settings.maxRequestBytes) (--max-request-bytes)",
                context: context)
        }
        if draining || server.isDraining {
            return refuse(
                exchange, .serviceUnavailable, "the server is stopping", context: context, extra: [("Retry-After", "1")]
            )
        }
        var configuration = server.configuration
        var writer: (any LineWriter)?
        if !query.isEmpty {
            do {
                (configuration, writer) = try server.requestOptions.configuration(query: query)
            } catch {
                return refuse(exchange, .badRequest, "\(error)", context: context)
            }
        }
        if exchange.route == .decodeResponse {
            guard let responseHead = Self.responseHead(head.headers) else {
                return refuse(
                    exchange, .badRequest, "X-Response-Status must be a status code from 100 to 999", context: context)
            }
            exchange.responseHead = responseHead
            exchange.contentType = "application/json"
            configuration.input = .http
            // The body is one record, kept whole until its end: no larger than a record may be.
            exchange.bodyLimit = min(server.settings.maxRequestBytes, configuration.limits.maxBodyBytes)
            if let length = head.headers.first(name: "content-length").flatMap(Int.init), length > exchange.bodyLimit {
                return refuse(
                    exchange, .payloadTooLarge,
                    "the body is \(length) bytes; one response here is at most \(exchange.bodyLimit) (--max-body-bytes)",
                    context: context)
            }
        }
        guard server.startDecoding() else {
            return refuse(
                exchange, .serviceUnavailable,
                "\(server.settings.maxRequests) requests are decoding (--max-requests): try again",
                context: context, extra: [("Retry-After", "1")])
        }
        exchange.holdsSlot = true
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let boundExchange = NIOLoopBound(exchange, eventLoop: context.eventLoop)
        let sink = ChannelSink(
            channel: context.channel, metrics: server.metrics,
            write: { buffer, promise in bound.value.writeLines(buffer, promise: promise, for: boundExchange.value) },
            onFinished: { _ in bound.value.finished(boundExchange.value) },
            onWantsInput: { bound.value.resumeReading() })
        let stream = DecodeStream(
            configuration: configuration, pool: server.pool, statistics: server.statistics, sink: sink, writer: writer)
        sink.attach(stream)
        exchange.sink = sink
        exchange.stream = stream
        if head.headers["expect"].contains(where: { $0.lowercased() == "100-continue" }) {
            context.writeAndFlush(
                wrapOutboundOut(.head(HTTPResponseHead(version: head.version, status: .continue))), promise: nil)
        }
    }

    private func received(_ buffer: ByteBuffer, context: ChannelHandlerContext) {
        guard case .receiving(let exchange) = state, !pipelined else { return }
        exchange.bodyBytes += buffer.readableBytes
        server.metrics.received(bytes: buffer.readableBytes)
        let limit = min(server.settings.maxRequestBytes, exchange.bodyLimit)
        guard exchange.bodyBytes <= limit else {
            exchange.stream?.cancel()
            return refuse(exchange, .payloadTooLarge, "the body is over \(limit) bytes", context: context)
        }
        guard let stream = exchange.stream else { return }
        if exchange.route == .decodeResponse {
            exchange.body.append(contentsOf: buffer.readableBytesView)
            return
        }
        let more = buffer.withUnsafeReadableBytes { stream.feed($0) }
        if !more {
            readingPaused = true
            arm()
            context.channel.setOption(ChannelOptions.autoRead, value: false).whenComplete { _ in }
        }
    }

    private func receivedEnd(context: ChannelHandlerContext) {
        endedInRead = activity.reads
        guard case .receiving(let exchange) = state, !pipelined else { return }
        state = .responding(exchange)
        if let simple = exchange.simple {
            return answer(exchange, simple.status, type: simple.type, body: simple.body, extra: simple.extra)
        }
        guard let stream = exchange.stream else { return }
        if exchange.route == .decodeResponse {
            // The one response: its head from the request's headers, then the body as it came.
            let head = exchange.responseHead + Array("Content-Length: \(exchange.body.count)\r\n\r\n".utf8)
            head.withUnsafeBytes { _ = stream.feed($0) }
            exchange.body.withUnsafeBytes { _ = stream.feed($0) }
            exchange.body = []
        }
        stream.end(seenEOF: true)
        arm()
    }

    // MARK: answers

    /// A batch of lines for `exchange` (on the loop): the head first, once.
    private func writeLines(_ buffer: ByteBuffer, promise: EventLoopPromise<Void>, for exchange: Exchange) {
        guard let context, exchange.route != nil, !exchange.refused else {
            promise.fail(ChannelError.ioOnClosedChannel)
            return
        }
        sendHead(exchange, context: context)
        context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: promise)
    }

    private func sendHead(_ exchange: Exchange, context: ChannelHandlerContext) {
        guard !exchange.headSent else { return }
        exchange.headSent = true
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: exchange.contentType)
        headers.add(name: "Connection", value: keepsAlive(exchange) ? "keep-alive" : "close")
        // HTTP/1.0 has no chunks: its answer ends with the connection (which is not kept alive).
        if exchange.version.minor >= 1 { headers.add(name: "Transfer-Encoding", value: "chunked") }
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: exchange.version, status: .ok, headers: headers))),
            promise: nil)
    }

    /// Every line of `exchange` is written (on the loop).
    private func finished(_ exchange: Exchange) {
        release(exchange)
        guard let context, case .responding(let current) = state, current === exchange else {
            // Cancelled (the client went away, or the body was refused): nothing to finish.
            return
        }
        server.metrics.answered(route: exchange.route?.rawValue ?? "other", status: 200)
        sendHead(exchange, context: context)
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: promise)
        afterAnswer(exchange, written: promise.futureResult)
    }

    /// Answers `exchange` with a small body; `closing`: then close the connection (the body is not read).
    private func refuse(
        _ exchange: Exchange, _ status: HTTPResponseStatus, _ message: String, context: ChannelHandlerContext,
        closing: Bool = true, extra: [(String, String)] = []
    ) {
        let body = Array(("{\"error\":{\"code\":\"\(status.code)\",\"message\":" + jsonString(message) + "}}\n").utf8)
        if closing {
            state = .responding(exchange)
            answer(exchange, status, type: "application/json", body: body, extra: extra, close: true)
        } else {
            // The body (if any) is read and dropped; answered at its end.
            exchange.simple = (status, "application/json", body, extra)
        }
    }

    private func answer(
        _ exchange: Exchange, _ status: HTTPResponseStatus, type: String, body: [UInt8], extra: [(String, String)],
        close: Bool = false
    ) {
        guard let context else { return }
        guard !exchange.headSent else {
            // The answer has begun (lines went out): a refusal now can only cut it short.
            logger.info("\(status.code) after the answer began: the connection is closed")
            exchange.stream?.cancel()
            release(exchange)
            state = .closing
            context.close(promise: nil)
            return
        }
        exchange.headSent = true
        exchange.refused = true
        server.metrics.answered(route: exchange.route?.rawValue ?? "other", status: Int(status.code))
        let keep = !close && keepsAlive(exchange)
        var headers = HTTPHeaders()
        headers.add(name: "Content-Type", value: type)
        headers.add(name: "Content-Length", value: String(body.count))
        headers.add(name: "Connection", value: keep ? "keep-alive" : "close")
        for (name, value) in extra { headers.add(name: name, value: value) }
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))), promise: nil)
        if exchange.method != .HEAD {
            context.write(
                wrapOutboundOut(.body(.byteBuffer(context.channel.allocator.buffer(bytes: body)))), promise: nil)
        }
        let promise = context.eventLoop.makePromise(of: Void.self)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: promise)
        if close {
            exchange.stream?.cancel()
            release(exchange)
            state = .closing
            let channel = context.channel
            promise.futureResult.whenComplete { _ in channel.close(promise: nil) }
            return
        }
        afterAnswer(exchange, written: promise.futureResult)
    }

    private func keepsAlive(_ exchange: Exchange) -> Bool {
        exchange.keepAlive && !draining && !pipelined && !clientEnded
    }

    /// After an answer: once it is written, the next request (or a pipelined request's 400); or the close. The
    /// connection waits for the next request only once the client has taken the answer, so that a slow reader of a
    /// large answer is not taken for an idle connection.
    private func afterAnswer(_ exchange: Exchange, written: EventLoopFuture<Void>) {
        exchange.answerEnded = true
        guard let context else { return }
        let channel = context.channel
        guard keepsAlive(exchange) || pipelined else {
            state = .closing
            written.whenComplete { _ in channel.close(promise: nil) }
            return
        }
        answerWrittenSince = .now()
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let boundExchange = NIOLoopBound(exchange, eventLoop: context.eventLoop)
        written.whenComplete { _ in bound.value.answerWritten(boundExchange.value) }
        arm()
    }

    private func answerWritten(_ exchange: Exchange) {
        guard let context, case .responding(let current) = state, current === exchange else { return }
        // Bytes that came after the request's end, before its answer was written, are a pipelined request (NIO's
        // decoder holds them unparsed until the next read, which may never come).
        if pipelined || activity.reads > endedInRead {
            pipelined = true
            return badRequest("pipelined requests are not served: send one request at a time", context: context)
        }
        if draining || clientEnded {
            state = .closing
            context.close(promise: nil)
            return
        }
        becomeIdle()
    }

    /// Answers 400 with `message` and closes: a request that cannot be read on (or a pipelined one).
    private func badRequest(_ message: String, context: ChannelHandlerContext) {
        let exchange: Exchange
        switch state {
        case .receiving(let receiving) where !receiving.headSent:
            receiving.stream?.cancel()
            exchange = receiving
        case .responding(let answering) where answering.headSent && !answering.answerEnded:
            // In the middle of an answer: a 400 cannot follow it; the decode stops and the connection closes.
            answering.stream?.cancel()
            release(answering)
            state = .closing
            context.close(promise: nil)
            return
        case .idle, .responding:
            exchange = Exchange(route: nil, method: .GET, keepAlive: false)
        case .receiving, .closing:
            state = .closing
            context.close(promise: nil)
            return
        }
        if case .responding(let answered) = state { release(answered) }
        state = .responding(exchange)
        refuse(exchange, .badRequest, message, context: context)
    }

    /// The exchange is over (answered, refused, cut off): its slot goes back, and it lets go of its sink, whose
    /// callbacks hold the exchange (the stream keeps the sink while it still delivers).
    private func release(_ exchange: Exchange) {
        if exchange.holdsSlot {
            exchange.holdsSlot = false
            server.endDecoding()
        }
    }

    /// Lets go of the exchange's sink and stream, whose callbacks hold the exchange: once the next request comes, or
    /// the connection closes.
    private func forget(_ exchange: Exchange) {
        exchange.sink = nil
        exchange.stream = nil
    }

    private func becomeIdle() {
        if let current { forget(current) }
        current = nil
        state = .idle
        idleSince = .now()
        activity.reset()
        // A body whose end came while reading was paused (its stream was full) left reading off, and the stream,
        // ended, asks for no more input: the next request would never be read.
        if readingPaused { resumeReading() } else { arm() }
    }

    private func resumeReading() {
        readingPaused = false
        pausedUntil = .now()
        guard let context else { return }
        arm()
        let channel = context.channel
        channel.setOption(ChannelOptions.autoRead, value: true).whenSuccess { channel.read() }
    }

    /// A drain (SIGTERM): an idle connection closes now; a request in flight is finished, then the connection closes.
    private func drain() {
        draining = true
        guard let context else { return }
        if case .idle = state {
            state = .closing
            context.close(promise: nil)
        }
    }

    // MARK: timeouts

    /// How long the connection may wait for a request's first byte: the first-byte timeout on a new connection, the
    /// idle timeout (or the first-byte one, if shorter) between requests; nil: for ever.
    private var waitingLimit: Double? {
        let settings = server.settings
        if served == 0 { return settings.firstByteTimeout }
        return [settings.idleTimeout, settings.firstByteTimeout].compactMap { $0 }.min()
    }

    private func arm() {
        guard let context else { return }
        timer?.cancel()
        let settings = server.settings
        var deadlines: [NIODeadline] = []
        switch state {
        case .idle:
            if activity.bytes == 0 {
                if let limit = waitingLimit { deadlines.append(idleSince + ServerContext.amount(limit)) }
                // The first byte re-arms the timer (ActivityHandler.onFirstByte): an idle connection costs no wake-ups.
            } else if let header = settings.headerTimeout {
                deadlines.append(activity.firstByte + ServerContext.amount(header))
            }
        case .receiving:
            if let idle = settings.idleTimeout {
                // Paused by us: the answer's progress is watched instead, once a second.
                deadlines.append(
                    readingPaused
                        ? .now() + .seconds(1) : max(activity.lastRead, pausedUntil) + ServerContext.amount(idle))
            }
        case .responding:
            if settings.idleTimeout != nil { deadlines.append(.now() + .seconds(1)) }
        case .closing:
            return
        }
        guard let next = deadlines.min() else { return }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        timer = context.eventLoop.scheduleTask(deadline: next) { bound.value.timerFired() }
    }

    private func timerFired() {
        guard let context else { return }
        let settings = server.settings
        let now = NIODeadline.now()
        switch state {
        case .idle:
            if activity.bytes == 0 {
                if let limit = waitingLimit, now >= idleSince + ServerContext.amount(limit) {
                    logger.info(
                        served == 0 ? "the client sent nothing for \(limit) s: closed" : "idle for \(limit) s: closed")
                    state = .closing
                    context.close(promise: nil)
                    return
                }
            } else if let header = settings.headerTimeout, now >= activity.firstByte + ServerContext.amount(header) {
                logger.info("a request head took more than \(header) s (--header-timeout): 408")
                let exchange = Exchange(route: nil, method: .GET, keepAlive: false)
                state = .responding(exchange)
                answer(
                    exchange, .requestTimeout, type: "application/json",
                    body: Array(
                        "{\"error\":{\"code\":\"408\",\"message\":\"the request head did not arrive in time\"}}\n".utf8),
                    extra: [], close: true)
                return
            }
        case .receiving(let exchange):
            if let idle = settings.idleTimeout, readingPaused, let sink = exchange.sink, sink.pending > 0,
                Double(sink.stalledFor) / 1e9 >= idle
            {
                logger.warning("the client read none of its answer for \(idle) s: dropped")
                exchange.stream?.cancel()
                state = .closing
                context.close(promise: nil)
                return
            }
            if let idle = settings.idleTimeout, !readingPaused,
                now >= max(activity.lastRead, pausedUntil) + ServerContext.amount(idle)
            {
                logger.info("a request body stalled for \(idle) s: 408")
                exchange.stream?.cancel()
                if exchange.headSent {
                    state = .closing
                    context.close(promise: nil)
                } else {
                    refuse(exchange, .requestTimeout, "the request body stalled for \(idle) s", context: context)
                }
                return
            }
        case .responding(let exchange):
            let stalled: Bool
            if let sink = exchange.sink {
                stalled = sink.pending > 0 && Double(sink.stalledFor) / 1e9 >= (settings.idleTimeout ?? .infinity)
            } else {
                // A small answer, written whole: the client has the idle timeout to take it.
                stalled =
                    exchange.headSent && now >= answerWrittenSince + ServerContext.amount(settings.idleTimeout ?? 1e9)
            }
            if let idle = settings.idleTimeout, stalled {
                logger.warning("the client read none of its answer for \(idle) s: dropped")
                exchange.stream?.cancel()
                state = .closing
                context.close(promise: nil)
                return
            }
        case .closing:
            return
        }
        arm()
    }

    // MARK: checks

    /// Why a head could smuggle a request past a proxy in front of us, or nil (docs/sidecar.md#protection): both
    /// Content-Length and Transfer-Encoding, more than one Content-Length, a Transfer-Encoding other than chunked, a
    /// header value that folds onto a next line (obs-fold) or holds a control character.
    static func smuggling(_ head: HTTPRequestHead) -> String? {
        let lengths = head.headers["content-length"]
        let codings = head.headers["transfer-encoding"]
        if !lengths.isEmpty && !codings.isEmpty { return "Content-Length with Transfer-Encoding" }
        if lengths.count > 1 { return "more than one Content-Length" }
        if let length = lengths.first, length.isEmpty || !length.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) {
            return "a Content-Length that is not a number"
        }
        if codings.count > 1 || codings.contains(where: { $0.lowercased() != "chunked" }) {
            return "a Transfer-Encoding other than chunked"
        }
        for (name, value) in head.headers {
            if value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) || name.isEmpty {
                return "a header field folded or with a control character (\(name))"
            }
        }
        if head.version.major != 1 { return "HTTP/\(head.version.major).\(head.version.minor) is not served" }
        return nil
    }

    /// Whether `header` is `Bearer TOKEN` with the token, compared in constant time (for tokens of its length).
    static func authorized(_ header: [String], token: [UInt8]) -> Bool {
        guard header.count == 1, let value = header.first else { return false }
        let parts = value.split(separator: " ", maxSplits: 1)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return false }
        let given = Array(parts[1].utf8)
        var difference = UInt8(given.count == token.count ? 0 : 1)
        for index in 0..<token.count {
            difference |= token[index] ^ (index < given.count ? given[index] : 0)
        }
        return difference == 0
    }

    /// The head of `/decode/response`'s one response, from the request's headers: `X-Response-Status` (200 if not
    /// given), the request's `Content-Type` and `Content-Encoding`, and every `X-Response-Header: NAME: VALUE`.
    static func responseHead(_ headers: HTTPHeaders) -> [UInt8]? {
        var status = 200
        if let given = headers.first(name: "x-response-status") {
            guard given.count == 3, let code = Int(given), (100...999).contains(code) else { return nil }
            status = code
        }
        var text = "HTTP/1.1 \(status) \r\n"
        for name in ["content-type", "content-encoding"] {
            for value in headers[name] { text += "\(name): \(value)\r\n" }
        }
        for field in headers["x-response-header"] {
            guard let colon = field.firstIndex(of: ":"), colon != field.startIndex else { return nil }
            text += String(field.drop { $0 == " " }) + "\r\n"
        }
        return Array(text.utf8)
    }

    private func jsonString(_ text: String) -> String {
        var out = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20:
                let hex = Array("0123456789abcdef")
                out += "\\u00" + String(hex[Int(scalar.value >> 4)]) + String(hex[Int(scalar.value & 15)])
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// First in an HTTP connection's pipeline: notes when bytes arrive (for the first-byte, header and body timeouts)
/// and passes them on.
final class ActivityHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// Bytes since the last ``reset()`` (a new request).
    private(set) var bytes = 0
    /// Reads so far: requests that came in one read with the end of the one before were pipelined.
    private(set) var reads = 0
    private(set) var firstByte = NIODeadline.now()
    private(set) var lastRead = NIODeadline.now()

    /// Called when a request's first byte arrives (after a reset), on the loop.
    var onFirstByte: (() -> Void)?

    func reset() { bytes = 0 }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let count = unwrapInboundIn(data).readableBytes
        let now = NIODeadline.now()
        reads += 1
        let first = bytes == 0 && count > 0
        if first { firstByte = now }
        bytes += count
        lastRead = now
        if first { onFirstByte?() }
        context.fireChannelRead(data)
    }
}
