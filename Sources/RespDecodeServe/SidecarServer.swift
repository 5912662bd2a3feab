internal import Glibc
public import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
public import RespDecode

/// `respdecode serve` (docs/sidecar.md): the stream protocol and the HTTP API on SwiftNIO's event loops, decoding on
/// one ``JobPool`` shared by every connection.
///
/// No thread waits on a client: a connection costs its socket and a few kilobytes, so thousands of idle ones cost
/// memory, not threads, and none delays another. Each listener takes at most `maxConnections` connections at once;
/// beyond, it stops accepting and new clients wait in the listen backlog. A stop (``Shutdown``, SIGTERM/SIGINT)
/// closes the listeners and removes the unix sockets; stream connections stop reading and write the lines of the
/// records they received in full; HTTP requests in flight are finished, idle keep-alive connections closed; then
/// `run` returns (after `drainTimeout` at the latest).
public final class SidecarServer: Sendable {
    /// Where the stream listener and the HTTP listener are, as bound (a TCP port 0 replaced by the port chosen).
    public let streamAddress: ListenAddress?
    public let httpAddress: ListenAddress?

    private let context: ServerContext
    private let group: MultiThreadedEventLoopGroup
    private let listeners: [Listener]

    /// One listening socket and its count of open connections.
    final class Listener: Sendable {
        let name: String
        let channel: any Channel
        let socketFile: UnixSocketFile?
        private let open = NIOLockedValueBox((count: 0, paused: false, closed: false))
        private let limit: Int
        private let logger: Logger

        init(name: String, channel: any Channel, socketFile: UnixSocketFile?, limit: Int, logger: Logger) {
            self.logger = logger
            self.name = name
            self.channel = channel
            self.socketFile = socketFile
            self.limit = limit
        }

        /// A connection was accepted: at the limit, stop accepting (new clients wait in the backlog). The count and
        /// the listener's option change together on the listener's loop, so that a pause and a resume can never
        /// land in the other order.
        func accepted() {
            if open.withLockedValue({ $0.closed }) { return }
            let channel = channel
            channel.eventLoop.execute { [self] in
                let pause = open.withLockedValue { state -> Bool in
                    state.count += 1
                    guard state.count >= limit, !state.paused, !state.closed else { return false }
                    state.paused = true
                    return true
                }
                if pause {
                    logger.notice(
                        "\(limit) connections open on the \(name) listener (--max-connections): new ones wait")
                    channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in }
                }
            }
        }

        /// A connection closed: below the limit again, accept again (on the listener's loop, as `accepted`). Once the
        /// listener is closed nothing is scheduled: connections that close as the loops shut down (their close
        /// callbacks may run after the listener's loop has stopped) would each make SwiftNIO print an error -- 449
        /// lines after 4,000 connections, enough to fill a stderr pipe nobody reads during the stop and hang it.
        func ended() {
            if open.withLockedValue({ $0.closed }) { return }
            let channel = channel
            channel.eventLoop.execute { [self] in
                let resume = open.withLockedValue { state -> Bool in
                    state.count -= 1
                    guard state.count < limit, state.paused, !state.closed else { return false }
                    state.paused = false
                    return true
                }
                if resume {
                    channel.setOption(ChannelOptions.autoRead, value: true).whenSuccess { channel.read() }
                }
            }
        }

        /// Stops listening; the listener's channel is not touched again (a connection ending after this must not
        /// turn accepting back on, on a loop that may be shutting down).
        func close() {
            open.withLockedValue { $0.closed = true }
            channel.close(promise: nil)
            socketFile?.remove()
        }
    }

    /// Binds the addresses and listens.
    /// - Throws: ``ServeError`` when an address cannot be bound (another server on a unix socket, a file there that
    ///   is not a socket, a port in use).
    public init(settings: ServeSettings, configuration: Configuration, logger: Logger, statistics: Statistics)
        throws(ServeError)
    {
        let pool = JobPool(configuration: configuration, timesRecords: true)
        let context = ServerContext(
            settings: settings, configuration: configuration, pool: pool, statistics: statistics, logger: logger)
        self.context = context
        // Event loops only move bytes and run the protocols' state machines; decoding is on the pool.
        group = MultiThreadedEventLoopGroup(numberOfThreads: max(1, min(2, System.coreCount)))
        var listeners: [Listener] = []
        var streamAddress: ListenAddress?
        var httpAddress: ListenAddress?
        do throws(ServeError) {
            if let address = settings.stream {
                let listener = try Self.bind(address, name: "stream", group: group, context: context)
                listeners.append(listener)
                streamAddress = Self.bound(address, listener.channel)
            }
            if let address = settings.http {
                let listener = try Self.bind(address, name: "http", group: group, context: context)
                listeners.append(listener)
                httpAddress = Self.bound(address, listener.channel)
            }
        } catch {
            // Closed as a stop closes them (``Listener/close()``), so that a client that connected meanwhile schedules
            // nothing on the loops as they shut down.
            for listener in listeners {
                listener.close()
                try? listener.channel.closeFuture.wait()
            }
            try? group.syncShutdownGracefully()
            pool.close()
            throw error
        }
        self.listeners = listeners
        self.streamAddress = streamAddress
        self.httpAddress = httpAddress
    }

    /// Serves until a stop is requested (``Shutdown``), then drains and returns.
    public func run() {
        let logger = context.logger
        if let streamAddress { logger.notice("listening on \(streamAddress)") }
        if let httpAddress { logger.notice("listening for HTTP on \(httpAddress)") }
        for address in [streamAddress, httpAddress].compactMap({ $0 }) {
            if case .tcp(let host, _) = address, !Self.isLoopback(host) {
                let token = context.settings.authToken == nil ? " (and no --auth-token-file)" : ""
                logger.warning(
                    "\(address) is not a loopback address: anyone who can reach it can use the server\(token)")
            }
        }
        let stopped = group.next().makePromise(of: Void.self)
        let once = NIOLockedValueBox(false)
        let stop: @Sendable () -> Void = {
            if once.withLockedValue({ done in
                defer { done = true }
                return !done
            }) {
                stopped.succeed()
            }
        }
        let context = context
        let listeners = listeners
        Shutdown.shared.whenRequested { _ in
            logger.notice("stopping: no new connections; finishing the ones open")
            for listener in listeners { listener.close() }
            let deadline = context.settings.drainTimeout
            let timeout = stopped.futureResult.eventLoop.scheduleTask(in: ServerContext.amount(deadline)) {
                logger.warning("connections still open after \(deadline) s (--drain-timeout): exiting anyway")
                stop()
            }
            context.drain {
                timeout.cancel()
                stop()
            }
        }
        try? stopped.futureResult.wait()
        // What the drain left open is closed; the workers finish while the loops still run (a batch in flight
        // delivers to its connection's loop), then the loops stop.
        context.closeAll(within: 2)
        context.pool.close()
        try? group.syncShutdownGracefully()
        logger.notice("stopped")
    }

    private static func bind(
        _ address: ListenAddress, name: String, group: MultiThreadedEventLoopGroup, context: ServerContext
    )
        throws(ServeError) -> Listener
    {
        let listenerBox = NIOLockedValueBox<Listener?>(nil)
        let bootstrap = ServerBootstrap(group: group)
            .serverChannelOption(ChannelOptions.backlog, value: Int32(SOMAXCONN))
            .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(ChannelOptions.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in
                let listener = listenerBox.withLockedValue { $0 }
                listener?.accepted()
                channel.closeFuture.whenComplete { _ in listener?.ended() }
                return channel.eventLoop.makeCompletedFuture {
                    if name == "http" {
                        try HTTPConnectionHandler.configure(channel.pipeline.syncOperations, server: context)
                    } else {
                        try channel.pipeline.syncOperations.addHandler(StreamConnectionHandler(server: context))
                    }
                }
            }
        let channel: any Channel
        var socketFile: UnixSocketFile?
        switch address {
        case .unix(let path):
            try UnixSocketFile.clearStale(path, logger: context.logger)
            // Created 0600: only the server's user (and root) may connect (docs/sidecar.md#security).
            let saved = umask(0o177)
            defer { umask(saved) }
            do {
                channel = try bootstrap.bind(unixDomainSocketPath: path, cleanupExistingSocketFile: false).wait()
            } catch {
                throw ServeError(.cannotListen, "cannot listen on \(address): \(error)")
            }
            socketFile = UnixSocketFile.identity(of: path)
        case .tcp(let host, let port):
            do {
                channel = try bootstrap.bind(host: host == "localhost" ? "127.0.0.1" : host, port: Int(port)).wait()
            } catch {
                throw ServeError(.cannotListen, "cannot listen on \(address): \(error)")
            }
        }
        let listener = Listener(
            name: name, channel: channel, socketFile: socketFile, limit: max(1, context.settings.maxConnections),
            logger: context.logger)
        listenerBox.withLockedValue { $0 = listener }
        return listener
    }

    private static func bound(_ address: ListenAddress, _ channel: any Channel) -> ListenAddress {
        guard case .tcp(let host, _) = address, let port = channel.localAddress?.port else { return address }
        return .tcp(host: host, port: UInt16(port))
    }

    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.") || host == "::ffff:127.0.0.1"
    }
}
