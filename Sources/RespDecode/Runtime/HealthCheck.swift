import Glibc

/// `respdecode health` (docs/sidecar.md#respdecode-health): asks a server whether it is alive, in one of two ways.
/// - The stream protocol (`serve --listen`): connect, half-close without sending anything, and expect the connection
///   closed cleanly with no bytes (an empty stream has no lines).
/// - HTTP (`serve --http`): `GET /healthz` and expect a `200` status line.
///
/// With no address given, the server to ask is the one PID 1 runs, read from its command line
/// (docs/container.md#healthcheck).
public enum HealthCheck {
    /// What to probe, and how.
    public enum Target: Sendable, Hashable, CustomStringConvertible {
        /// The stream protocol of `serve --listen`.
        case stream(ListenAddress)
        /// The HTTP API of `serve --http`: `GET /healthz`.
        case http(ListenAddress)

        public var description: String {
            switch self {
            case .stream(let address): "--listen \(address)"
            case .http(let address): "--http \(address)"
            }
        }
    }

    /// Returns when `target` answered as it should within `timeout` seconds; throws why not.
    public static func probe(_ target: Target, timeout: Double) throws(HealthError) {
        switch target {
        case .stream(let address): try probe(address, timeout: timeout)
        case .http(let address): try probeHTTP(address, timeout: timeout)
        }
    }

    /// Returns when the stream listener at `address` answered an empty stream as it should within `timeout` seconds;
    /// throws why not.
    public static func probe(_ address: ListenAddress, timeout: Double) throws(HealthError) {
        let connection = try Connection(address, timeout: timeout)
        defer { close(connection.fd) }

        // Send the end of an empty stream, and wait for the server to end its side.
        guard shutdown(connection.fd, Int32(SHUT_WR)) == 0 else {
            throw HealthError(.failed, "\(address): cannot end the stream: \(systemError())")
        }
        var scratch = [UInt8](repeating: 0, count: 512)
        while true {
            let n = try connection.read(into: &scratch, waiting: "the connection was not closed")
            if n == 0 { return }
            throw HealthError(.unexpectedBytes, "\(address): the server sent \(n) bytes for an empty stream")
        }
    }

    /// The request `probeHTTP` sends.
    static let healthzRequest = Array("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".utf8)
    /// The longest status line read: `HTTP/1.1 200 ` and a reason phrase fit many times over.
    static let maxStatusLine = 1024

    /// Returns when the HTTP listener at `address` answered `GET /healthz` with a `200` status line within `timeout`
    /// seconds; throws why not (another status, no status line, no answer). The rest of the answer is not read.
    public static func probeHTTP(_ address: ListenAddress, timeout: Double) throws(HealthError) {
        let connection = try Connection(address, timeout: timeout)
        defer { close(connection.fd) }
        try connection.write(healthzRequest)

        var line: [UInt8] = []
        var scratch = [UInt8](repeating: 0, count: 512)
        while !line.contains(UInt8(ascii: "\n")) {
            let n = try connection.read(into: &scratch, waiting: "no HTTP status line")
            if n == 0 {
                throw HealthError(
                    .failed,
                    line.isEmpty
                        ? "\(address): the server closed the connection without answering GET /healthz"
                        : "\(address): the server closed the connection in its status line")
            }
            line.append(contentsOf: scratch[0..<n])
            guard line.count <= maxStatusLine || line[0..<maxStatusLine].contains(UInt8(ascii: "\n")) else {
                throw HealthError(
                    .unexpectedBytes, "\(address): no HTTP status line in the first \(maxStatusLine) bytes")
            }
        }
        let end = line.firstIndex(of: UInt8(ascii: "\n"))!
        var statusLine = Array(line[..<end])
        if statusLine.last == UInt8(ascii: "\r") { statusLine.removeLast() }
        switch parseStatusLine(statusLine) {
        case 200?:
            return
        case let status?:
            let reason = printable(Array(statusLine.dropFirst(13)))
            throw HealthError(
                .httpStatus,
                "\(address): GET /healthz answered HTTP status \(status)\(reason.isEmpty ? "" : " (\(reason))")")
        case nil:
            throw HealthError(
                .unexpectedBytes, "\(address): not an HTTP status line: \(printable(Array(statusLine.prefix(80))))")
        }
    }

    /// The status code of `HTTP/1.x NNN[ reason]`, nil when the line is not one.
    static func parseStatusLine(_ line: [UInt8]) -> Int? {
        let prefix = Array("HTTP/1.".utf8)
        guard line.count >= 12, line.starts(with: prefix), (0x30...0x39).contains(line[7]), line[8] == 0x20 else {
            return nil
        }
        let digits = line[9..<12]
        guard digits.allSatisfy({ (0x30...0x39).contains($0) }), line.count == 12 || line[12] == 0x20 else {
            return nil
        }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    /// Bytes as text for a message: printable ASCII kept, anything else as `?`.
    private static func printable(_ bytes: [UInt8]) -> String {
        String(decoding: bytes.map { (0x20..<0x7F).contains($0) ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
    }

    // MARK: - The server PID 1 runs

    /// The server to probe when `health` is given no address (docs/container.md#healthcheck): when PID 1 is
    /// `respdecode serve …` (argv[0]'s base name `respdecode`, argv[1] `serve`), its `--http` address (preferred) or its
    /// `--listen` address, from its arguments or from the `--config` file they name. Nil when PID 1 is something else,
    /// as in a batch run: then there is nothing to check.
    ///
    /// - Parameters:
    ///   - cmdlinePath: the file holding PID 1's arguments, each ended by a NUL (`/proc/1/cmdline`; tests name
    ///     another).
    ///   - workingDirectory: where PID 1's relative paths (a unix socket, the config file) start (`/proc/1/cwd`, the
    ///     link to PID 1's working directory); nil: this process's working directory.
    /// - Returns: what to probe; nil when PID 1 is not `respdecode serve`.
    /// - Throws: `HealthError` when the file cannot be read, or PID 1 is a `serve` whose address cannot be had.
    public static func targetOfPID1(
        cmdlinePath: String = "/proc/1/cmdline", workingDirectory: String? = "/proc/1/cwd"
    ) throws(HealthError) -> Target? {
        // (A file in /proc says size 0: read until the end.)
        let fd = open(cmdlinePath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw HealthError(.failed, "cannot read \(cmdlinePath): \(systemError())") }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while bytes.count <= 1 << 20 {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw HealthError(.failed, "cannot read \(cmdlinePath): \(systemError())") }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
        }
        var arguments = bytes.split(separator: 0, omittingEmptySubsequences: false).map {
            String(decoding: $0, as: UTF8.self)
        }
        if arguments.last == "" { arguments.removeLast() } // the NUL that ends the last argument
        guard arguments.count >= 2, arguments[0].split(separator: "/").last == "respdecode", arguments[1] == "serve"
        else { return nil }
        return try target(ofServeArguments: Array(arguments.dropFirst(2)), workingDirectory: workingDirectory)
    }

    /// The address to probe of a `serve` given `arguments` (those after `serve`): `--http` (preferred) or `--listen`,
    /// as `--http X` or `--http=X`, the last one given winning, up to a `--`; either from the `--config` file when the
    /// arguments have none (its "http" and "listen" keys).
    static func target(ofServeArguments arguments: [String], workingDirectory: String?) throws(HealthError) -> Target? {
        var values: [String: String] = [:]
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--" { break }
            for name in ["--http", "--listen", "--config"] {
                if argument == name, index < arguments.count {
                    values[name] = arguments[index]
                    index += 1
                } else if argument.hasPrefix(name + "=") {
                    values[name] = String(argument.dropFirst(name.count + 1))
                }
            }
        }
        var http = values["--http"]
        var listen = values["--listen"]
        if let config = values["--config"], http == nil || listen == nil {
            let path = resolve(config, in: workingDirectory)
            let file: ConfigFile
            do {
                file = try ConfigFile.read(path: path)
            } catch {
                throw HealthError(.failed, "PID 1's config file: \(error)")
            }
            for entry in file.entries where ["http", "listen"].contains(entry.key) {
                guard case .string(let value) = entry.value else { continue } // serve refuses it; not ours to say
                if entry.key == "http" && http == nil { http = value }
                if entry.key == "listen" && listen == nil { listen = value }
            }
        }
        func address(_ text: String, _ option: String) throws(HealthError) -> ListenAddress {
            do {
                switch try ListenAddress(parsing: text) {
                case .unix(let path): return try ListenAddress(parsing: "unix:" + resolve(path, in: workingDirectory))
                case let tcp: return tcp
                }
            } catch {
                throw HealthError(.failed, "PID 1 is respdecode serve with \(option) \(error)")
            }
        }
        if let http { return .http(try address(http, "--http")) }
        if let listen { return .stream(try address(listen, "--listen")) }
        throw HealthError(.failed, "PID 1 is respdecode serve with neither --http nor --listen on its command line")
    }

    /// `path` made relative to `directory` when it is relative and a directory is given.
    private static func resolve(_ path: String, in directory: String?) -> String {
        guard let directory, !path.hasPrefix("/") else { return path }
        return directory.hasSuffix("/") ? directory + path : directory + "/" + path
    }

    // MARK: - The connection

    /// A non-blocking connection to a server, and the deadline of everything done on it.
    private struct Connection {
        let fd: Int32
        let address: ListenAddress
        let timeout: Double
        let deadline: Double

        /// Connects to `address` within `timeout` seconds.
        init(_ address: ListenAddress, timeout: Double) throws(HealthError) {
            self.address = address
            self.timeout = timeout
            deadline = MonotonicClock.now + timeout
            guard let fd = address.makeSocket() else {
                throw HealthError(.failed, "cannot make a socket for \(address): \(systemError())")
            }
            self.fd = fd
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)

            // A unix socket whose backlog is full says EAGAIN at once: try again until the deadline.
            while true {
                let connected = address.socketAddress().withPointer { connect(fd, $0, $1) }
                if connected == 0 { return }
                let reason = errno
                switch reason {
                case EINTR:
                    continue
                case EAGAIN:
                    guard left() > 0 else {
                        close(fd)
                        throw timedOut("its backlog is full")
                    }
                    usleep(20_000)
                    continue
                case EINPROGRESS:
                    do {
                        try wait(for: POLLOUT, "connecting")
                    } catch {
                        close(fd)
                        throw error
                    }
                    var failure: Int32 = 0
                    var size = socklen_t(MemoryLayout<Int32>.size)
                    _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &size)
                    if failure != 0 {
                        close(fd)
                        throw Self.connectError(failure, address)
                    }
                    return
                default:
                    close(fd)
                    throw Self.connectError(reason, address)
                }
            }
        }

        /// Milliseconds left until the deadline, for poll(2).
        func left() -> Int32 { Int32(max(0, ((deadline - MonotonicClock.now) * 1000).rounded(.up))) }

        func timedOut(_ what: String) -> HealthError {
            HealthError(.timedOut, "\(address): no answer within \(fixed(timeout, 3)) s (\(what))")
        }

        /// Waits until `event` (POLLIN or POLLOUT) or the deadline, which throws `timedOut(what)`.
        func wait(for event: Int32, _ what: String) throws(HealthError) {
            while true {
                var descriptor = pollfd(fd: fd, events: Int16(event), revents: 0)
                let polled = poll(&descriptor, 1, left())
                if polled < 0 && errno == EINTR { continue }
                guard polled > 0 else { throw timedOut(what) }
                return
            }
        }

        /// Writes all of `bytes` by the deadline.
        func write(_ bytes: [UInt8]) throws(HealthError) {
            var sent = 0
            while sent < bytes.count {
                try wait(for: POLLOUT, "sending the request")
                let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n > 0 {
                    sent += n
                    continue
                }
                switch errno {
                case EINTR, EAGAIN: continue
                case ECONNRESET, EPIPE: throw HealthError(.failed, "\(address): the server reset the connection")
                default: throw HealthError(.failed, "\(address): cannot send: \(systemError())")
                }
            }
        }

        /// Reads what comes by the deadline into `buffer` (0: the server closed its side); `what` names what the
        /// timeout missed.
        func read(into buffer: inout [UInt8], waiting what: String) throws(HealthError) -> Int {
            while true {
                try wait(for: POLLIN, what)
                let n = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                if n >= 0 { return n }
                switch errno {
                case EINTR, EAGAIN: continue
                case ECONNRESET: throw HealthError(.failed, "\(address): the server reset the connection")
                default: throw HealthError(.failed, "\(address): cannot read: \(systemError())")
                }
            }
        }

        static func connectError(_ reason: Int32, _ address: ListenAddress) -> HealthError {
            switch reason {
            case ECONNREFUSED: HealthError(.refused, "\(address): connection refused (no server listening)")
            case ENOENT: HealthError(.refused, "\(address): no such socket")
            default: HealthError(.failed, "\(address): cannot connect: \(systemError(reason))")
            }
        }
    }
}

/// Why a health check failed.
public struct HealthError: Error, Hashable, Sendable, CustomStringConvertible {
    public var code: Code
    /// What happened, for people (one line).
    public var message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }

    /// The stable error codes.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Wrapped: String, Hashable, Sendable {
            case refused, timedOut, unexpectedBytes, httpStatus, failed
        }
        private let wrapped: Wrapped

        /// Nothing listens at the address (connection refused, no socket file).
        public static let refused = Code(wrapped: .refused)
        /// The connection, its close or the HTTP status line did not come within the timeout.
        public static let timedOut = Code(wrapped: .timedOut)
        /// The stream listener wrote bytes for an empty stream, or the HTTP listener answered something that is not
        /// an HTTP status line.
        public static let unexpectedBytes = Code(wrapped: .unexpectedBytes)
        /// The HTTP listener answered `GET /healthz` with a status other than 200.
        public static let httpStatus = Code(wrapped: .httpStatus)
        /// Any other failure (a reset, a system error, PID 1's command line or config file unreadable), with the
        /// reason.
        public static let failed = Code(wrapped: .failed)

        public var description: String { wrapped.rawValue }
    }
}
