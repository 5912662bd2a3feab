import Glibc

/// `respdecode health`: asks a server an empty stream — connect, half-close without sending anything — and expects
/// the connection closed cleanly with no bytes (an empty stream has no lines) within a timeout.
public enum HealthCheck {
    /// Returns when the server at `address` answered as it should within `timeout` seconds; throws why not.
    public static func probe(_ address: ListenAddress, timeout: Double) throws(HealthError) {
        let deadline = MonotonicClock.now + timeout
        func left() -> Int32 { Int32(max(0, ((deadline - MonotonicClock.now) * 1000).rounded(.up))) }
        func timedOut(_ what: String) -> HealthError {
            HealthError(.timedOut, "\(address): no answer within \(fixed(timeout, 3)) s (\(what))")
        }

        guard let fd = address.makeSocket() else {
            throw HealthError(.failed, "cannot make a socket for \(address): \(systemError())")
        }
        defer { close(fd) }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)

        // Connect. A unix socket whose backlog is full says EAGAIN at once: try again until the deadline.
        while true {
            let connected = address.socketAddress().withPointer { connect(fd, $0, $1) }
            if connected == 0 { break }
            let reason = errno
            switch reason {
            case EINTR:
                continue
            case EAGAIN:
                guard left() > 0 else { throw timedOut("its backlog is full") }
                usleep(20_000)
                continue
            case EINPROGRESS:
                var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                var polled: Int32
                repeat { polled = poll(&descriptor, 1, left()) } while polled < 0 && errno == EINTR
                guard polled > 0 else { throw timedOut("connecting") }
                var failure: Int32 = 0
                var size = socklen_t(MemoryLayout<Int32>.size)
                _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &size)
                if failure != 0 { throw connectError(failure, address) }
            default:
                throw connectError(reason, address)
            }
            break
        }

        // Send the end of an empty stream, and wait for the server to end its side.
        guard shutdown(fd, Int32(SHUT_WR)) == 0 else {
            throw HealthError(.failed, "\(address): cannot end the stream: \(systemError())")
        }
        var scratch = [UInt8](repeating: 0, count: 512)
        while true {
            var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let polled = poll(&descriptor, 1, left())
            if polled < 0 && errno == EINTR { continue }
            guard polled > 0 else { throw timedOut("the connection was not closed") }
            let n = read(fd, &scratch, scratch.count)
            if n == 0 { return }
            if n > 0 {
                throw HealthError(.unexpectedBytes, "\(address): the server sent \(n) bytes for an empty stream")
            }
            switch errno {
            case EINTR, EAGAIN: continue
            case ECONNRESET: throw HealthError(.failed, "\(address): the server reset the connection")
            default: throw HealthError(.failed, "\(address): cannot read: \(systemError())")
            }
        }
    }

    private static func connectError(_ reason: Int32, _ address: ListenAddress) -> HealthError {
        switch reason {
        case ECONNREFUSED: HealthError(.refused, "\(address): connection refused (no server listening)")
        case ENOENT: HealthError(.refused, "\(address): no such socket")
        default: HealthError(.failed, "\(address): cannot connect: \(systemError(reason))")
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
            case refused, timedOut, unexpectedBytes, failed
        }
        private let wrapped: Wrapped

        /// Nothing listens at the address (connection refused, no socket file).
        public static let refused = Code(wrapped: .refused)
        /// The connection or its close did not come within the timeout.
        public static let timedOut = Code(wrapped: .timedOut)
        /// The server wrote bytes for an empty stream.
        public static let unexpectedBytes = Code(wrapped: .unexpectedBytes)
        /// Any other failure (a reset, a system error), with the system's reason.
        public static let failed = Code(wrapped: .failed)

        public var description: String { wrapped.rawValue }
    }
}
