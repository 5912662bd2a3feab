import Glibc
import Logging
import RespDecode
import RespDecodeServe

/// `respdecode serve`'s HTTP API (docs/sidecar.md#http-api), end to end: one server in the process, on a unix socket,
/// with short timeouts; each input is sent on a new connection as the bytes of one client, which then half-closes.
/// Whatever the bytes, the server answers with complete HTTP responses (each starting `HTTP/1.x NNN`) or closes
/// without one, within a few seconds; and every so often a well-formed request on another connection is answered
/// 200 (the server is still serving).
enum ServeTarget {
    private static let path = "/tmp/respdecode-fuzz-serve-\(getpid()).sock"
    nonisolated(unsafe) private static var runs = 0 // libFuzzer calls the target from one thread

    /// Starts the server once (a thread runs it for the life of the process).
    private static let started: Bool = {
        var settings = ServeSettings { options in
            // The executable's option parser is not here: `keep-nulls` stands for the allow list.
            var configuration = FuzzLimits.configuration()
            for (name, value) in options {
                guard name == "keep-nulls" else { throw RequestOptionError("'\(name)' is not allowed") }
                configuration.decoding.options.stripNulls = value != "true"
            }
            return configuration
        }
        settings.http = .unix(path: path)
        settings.firstByteTimeout = 2
        settings.headerTimeout = 2
        settings.idleTimeout = 2
        settings.maxRequestBytes = 1 << 20
        settings.maxRequests = 4
        var configuration = FuzzLimits.configuration()
        configuration.jobs = 2
        let logger = Logger(label: "fuzz") { _ in SwiftLogNoOpLogHandler() }
        guard
            let server = try? SidecarServer(
                settings: settings, configuration: configuration, logger: logger, statistics: Statistics())
        else { violated("the server did not start on \(path)") }
        FuzzThread.start { server.run() }
        // The server runs until the process exits, so its socket file would stay in /tmp after every fuzz run and
        // every test run of the regressions.
        atexit { unlink(ServeTarget.path) }
        return true
    }()

    static func run(_ data: UnsafeBufferPointer<UInt8>) {
        _ = started
        let answer = exchange(Array(data), timeout: 8)
        guard let answer else { violated("no answer and no close within 8 s") }
        check(answer)
        runs += 1
        if runs % 64 == 1 {
            let probe = Array("GET /healthz HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\n\r\n".utf8)
            guard let health = exchange(probe, timeout: 8), health.starts(with: Array("HTTP/1.1 200".utf8)) else {
                violated("the server stopped answering /healthz")
            }
        }
    }

    /// The answer is a sequence of responses, each starting with a status line; a body is not checked (chunked
    /// lines are the decoders', which the other targets check).
    private static func check(_ answer: [UInt8]) {
        guard !answer.isEmpty else { return }
        let prefix = Array(answer.prefix(12))
        guard prefix.count == 12, prefix.starts(with: Array("HTTP/1.".utf8)), prefix[7] == 0x30 || prefix[7] == 0x31,
            prefix[8] == 0x20, prefix[9...11].allSatisfy({ $0 >= 0x30 && $0 <= 0x39 })
        else {
            violated(
                "an answer that does not start with a status line: \(String(decoding: answer.prefix(80), as: UTF8.self))"
            )
        }
    }

    /// Sends `request`, half-closes, reads until the server closes; nil after `timeout` seconds.
    private static func exchange(_ request: [UInt8], timeout: Double) -> [UInt8]? {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { violated("socket: \(errno)") }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.prefix(raw.count - 1).enumerated() { raw[i] = byte }
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard connected == 0 else { violated("cannot connect to the server: \(errno)") }
        let deadline = now() + timeout
        var sent = 0
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var halfClosed = false
        while true {
            if sent == request.count && !halfClosed {
                shutdown(fd, Int32(SHUT_WR))
                halfClosed = true
            }
            let left = deadline - now()
            guard left > 0 else { return nil }
            var descriptor = pollfd(
                fd: fd, events: Int16(POLLIN) | (halfClosed ? 0 : Int16(POLLOUT)), revents: 0)
            guard poll(&descriptor, 1, Int32(left * 1000)) >= 0 else { continue }
            if descriptor.revents & Int16(POLLOUT) != 0 && !halfClosed {
                let n = request.withUnsafeBytes {
                    send(fd, $0.baseAddress! + sent, request.count - sent, Int32(MSG_NOSIGNAL))
                }
                if n > 0 {
                    sent += n
                } else if n < 0 && errno != EAGAIN && errno != EINTR {
                    // The server closed on us (a refusal): what it answered is still to be read.
                    sent = request.count
                    halfClosed = true
                }
            }
            if descriptor.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0 {
                let n = read(fd, &buffer, buffer.count)
                if n > 0 {
                    answer += buffer[..<n]
                } else if n == 0 || (errno != EAGAIN && errno != EINTR) {
                    return answer
                }
            }
        }
    }

    private static func now() -> Double { MonotonicClock.now }
}

/// A detached thread (the fuzz targets have no other).
enum FuzzThread {
    private final class Box {
        let body: () -> Void
        init(_ body: @escaping () -> Void) { self.body = body }
    }

    static func start(_ body: @escaping () -> Void) {
        let box = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let created = pthread_create(
            &thread, nil,
            { raw in
                let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
                box.body()
                return nil
            }, box)
        guard created == 0 else { violated("pthread_create: \(created)") }
        pthread_detach(thread)
    }
}
