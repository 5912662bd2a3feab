import Glibc
public import Logging

/// `respdecode serve`: every accepted connection is one stream in the protocol of standard input and output — the
/// client writes records, the server writes their lines back on the same connection, in order, flushed whenever the
/// connection's input is idle; when the client half-closes, the remaining lines are written and the connection is
/// closed.
///
/// Each connection has a thread that reads and frames (a ``StreamRunner``) and the runner's writer thread; all of them
/// share one ``JobPool``, which decodes, and one ``Statistics``. At most `maxConnections` are served at once: the
/// server stops accepting until one ends, so further clients wait in the listen backlog. A stop (``Shutdown``,
/// SIGTERM/SIGINT) closes the listening socket; each connection stops reading, writes the lines of the records it
/// framed and closes; then `run` returns.
public final class Server: @unchecked Sendable {
    /// Where the server listens, as bound (a TCP port 0 replaced by the port the system chose).
    public let address: ListenAddress

    private let configuration: Configuration
    private let logger: Logger
    private let statistics: Statistics
    private let maxConnections: Int
    private let idleTimeout: Double?
    private let listening: Int32
    /// The unix socket's path and identity, to remove it at the end only if it is still ours.
    private let socketFile: (path: String, device: UInt, inode: UInt)?
    /// Written by a connection's thread when it ends: wakes the accepting thread to join it.
    private let events: (read: Int32, write: Int32)
    private let monitor = Monitor()
    private var ended: [Int] = []

    /// How long a connection that is done may still send before it is closed anyway (its input is read and dropped
    /// meanwhile, so that closing does not reset it while its last lines are on the way).
    static let closingGrace = 2.0

    /// Binds the address and listens (connections wait in the backlog until `run`). For a unix socket, a stale socket
    /// file (no server answers on it) is replaced; anything else at the path is an error.
    /// - Parameters:
    ///   - address: a unix socket path or a TCP address.
    ///   - configuration: how each connection's records are decoded.
    ///   - logger: where the server's messages go.
    ///   - statistics: where every connection's counts go.
    ///   - maxConnections: connections served at once.
    ///   - idleTimeout: seconds a connection may send nothing (or read none of its lines) before it is closed;
    ///     nil: no limit.
    /// - Throws: ``ServeError`` when the address cannot be bound or listened on.
    public init(
        listeningOn address: ListenAddress, configuration: Configuration, logger: Logger, statistics: Statistics,
        maxConnections: Int, idleTimeout: Double?
    ) throws(ServeError) {
        self.configuration = configuration
        self.logger = logger
        self.statistics = statistics
        self.maxConnections = max(1, maxConnections)
        self.idleTimeout = idleTimeout

        if case .unix(let path) = address { try Self.clearStaleSocket(path, logger: logger) }
        guard let fd = address.makeSocket() else {
            throw ServeError(.cannotListen, "cannot make a socket for \(address): \(systemError())")
        }
        func fail(_ what: String) -> ServeError {
            let error = ServeError(.cannotListen, "cannot \(what) \(address): \(systemError())")
            close(fd)
            return error
        }
        if case .tcp = address {
            var on: Int32 = 1
            _ = setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, socklen_t(MemoryLayout<Int32>.size))
        }
        let bound = address.socketAddress().withPointer { bind(fd, $0, $1) }
        guard bound == 0 else { throw fail("bind") }
        var file: (String, UInt, UInt)?
        if case .unix(let path) = address {
            var info = stat()
            if lstat(path, &info) == 0 { file = (path, UInt(info.st_dev), UInt(info.st_ino)) }
        }
        func removeFile() { if let file { Self.removeSocketFile(file) } }
        guard listen(fd, SOMAXCONN) == 0 else {
            let error = fail("listen on")
            removeFile()
            throw error
        }
        // accept(2) must not block when a client went away between poll and accept (accepted sockets do not inherit
        // O_NONBLOCK).
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        guard let events = Descriptors.makePipe() else {
            let error = fail("make a pipe to serve")
            removeFile()
            throw error
        }

        if case .tcp(let host, _) = address {
            var actual = SocketAddress()
            actual.family = address.socketAddress().family
            actual.length = socklen_t(MemoryLayout<sockaddr_storage>.size)
            _ = withUnsafeMutableBytes(of: &actual.storage) { bytes in
                getsockname(fd, bytes.baseAddress!.assumingMemoryBound(to: sockaddr.self), &actual.length)
            }
            self.address = .tcp(host: host, port: actual.port)
        } else {
            self.address = address
        }
        listening = fd
        socketFile = file
        self.events = events
    }

    /// Accepts and serves connections until a stop is requested (``Shutdown``); then stops accepting, waits for the
    /// open connections to write their lines and close, stops the workers and removes the unix socket file.
    public func run() {
        let pool = JobPool(configuration: configuration)
        logger.notice("listening on \(address)")
        var connections: [Int: WorkerThread] = [:]
        var nextID = 1
        var full = false
        while Shutdown.shared.requested == nil {
            for id in monitor.withLock({
                defer { ended.removeAll() }
                return ended
            }) {
                connections.removeValue(forKey: id)?.join()
            }
            if connections.count >= maxConnections {
                if !full { logger.notice("\(connections.count) connections open (--max-connections): new ones wait") }
                full = true
            } else {
                full = false
            }
            // A negative descriptor is ignored by poll: while full, the backlog holds new connections.
            var descriptors = [
                pollfd(fd: Shutdown.shared.wakeDescriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: events.read, events: Int16(POLLIN), revents: 0),
                pollfd(fd: full ? -1 : listening, events: Int16(POLLIN), revents: 0),
            ]
            guard poll(&descriptors, 3, -1) >= 0 else {
                if errno != EINTR {
                    logger.error("cannot wait for connections: \(systemError())")
                    usleep(100_000)
                }
                continue
            }
            if descriptors[1].revents != 0 {
                var scratch = [UInt8](repeating: 0, count: 64)
                _ = read(events.read, &scratch, scratch.count)
            }
            guard descriptors[2].revents != 0, Shutdown.shared.requested == nil else { continue }
            let fd = accept(listening, nil, nil)
            guard fd >= 0 else {
                switch errno {
                case EAGAIN, EWOULDBLOCK, EINTR, ECONNABORTED, EPROTO:
                    break
                default:
                    // Out of descriptors or memory: the connection stays in the backlog; try again shortly.
                    logger.error("cannot accept a connection: \(systemError())")
                    usleep(100_000)
                }
                continue
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            let id = nextID
            nextID += 1
            connections[id] = WorkerThread { [self] in serve(fd, id: id, pool: pool) }
        }

        close(listening)
        if let socketFile { Self.removeSocketFile(socketFile) }
        logger.notice("stopping: no new connections; waiting for \(connections.count) open ones to finish")
        for thread in connections.values { thread.join() }
        pool.close()
        close(events.read)
        close(events.write)
        logger.notice("stopped")
    }

    /// One connection, on its own thread: a stream like standard input and output.
    private func serve(_ fd: Int32, id: Int, pool: JobPool) {
        var logger = logger
        logger[metadataKey: "connection"] = "\(id)"
        logger.debug("accepted")
        if let idleTimeout {
            // A client that reads none of its lines for that long is dropped: its writer must not wait for ever.
            var limit = timeval(
                tv_sec: Int(idleTimeout), tv_usec: Int((idleTimeout - idleTimeout.rounded(.down)) * 1e6))
            _ = setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        }
        let runner = StreamRunner(
            configuration: configuration, logger: logger, outputDescriptor: fd, pool: pool, statistics: statistics,
            idleTimeout: idleTimeout)
        do throws(OutputFailure) {
            let summary = try runner.run([.descriptor(fd)])
            logger.debug("\(summary.records) lines written")
        } catch {
            switch error {
            case .closed:
                logger.info("the client went away before all its lines were written")
            case .failed(let message) where idleTimeout != nil && message == systemError(EAGAIN):
                logger.warning("the client read none of its lines for \(fixed(idleTimeout ?? 0, 3)) s: dropped")
            case .failed(let message):
                logger.warning("cannot write to the connection: \(message)")
            }
        }
        Self.closeGracefully(fd)
        logger.debug("closed")
        monitor.withLock { ended.append(id) }
        var byte: UInt8 = 1
        _ = write(events.write, &byte, 1)
    }

    /// Sends the end of the stream, then reads and drops what the client may still send (for `closingGrace` seconds
    /// at most) until it closes too: closing a socket with unread input would reset it, and the client could lose
    /// the last lines.
    private static func closeGracefully(_ fd: Int32) {
        _ = shutdown(fd, Int32(SHUT_WR))
        let deadline = MonotonicClock.now + closingGrace
        var scratch = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let left = deadline - MonotonicClock.now
            guard left > 0 else { break }
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let polled = poll(&descriptor, 1, Int32((left * 1000).rounded(.up)))
            if polled < 0 && errno == EINTR { continue }
            guard polled > 0 else { break }
            let n = read(fd, &scratch, scratch.count)
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { break }
        }
        close(fd)
    }

    /// Removes a socket file that no server answers on; refuses anything else at `path`.
    private static func clearStaleSocket(_ path: String, logger: Logger) throws(ServeError) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw ServeError(.pathInUse, "\(path) exists and is not a socket: not replacing it")
        }
        let address = ListenAddress.unix(path: path)
        guard let probe = address.makeSocket() else {
            throw ServeError(.cannotListen, "cannot make a socket for \(address): \(systemError())")
        }
        _ = fcntl(probe, F_SETFL, O_NONBLOCK)
        let connected = address.socketAddress().withPointer { connect(probe, $0, $1) }
        let reason = errno
        close(probe)
        // EAGAIN: a server whose backlog is full.
        if connected == 0 || reason == EAGAIN {
            throw ServeError(.alreadyListening, "a server is already listening on \(address)")
        }
        guard reason == ECONNREFUSED else {
            throw ServeError(.cannotListen, "cannot tell whether \(address) is in use: \(systemError(reason))")
        }
        guard unlink(path) == 0 || errno == ENOENT else {
            throw ServeError(.cannotListen, "cannot remove the stale socket \(path): \(systemError())")
        }
        logger.notice("removed the stale socket \(path)")
    }

    private static func removeSocketFile(_ file: (path: String, device: UInt, inode: UInt)) {
        var info = stat()
        guard lstat(file.path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK, UInt(info.st_dev) == file.device,
            UInt(info.st_ino) == file.inode
        else { return }
        unlink(file.path)
    }
}
