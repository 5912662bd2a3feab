import Foundation
import Testing

/// `respdecode serve` and `respdecode health` on the built binary, over real unix and TCP sockets (issue 6): each
/// connection is a stream like standard input and output, many at once share the workers, a client that goes away
/// disturbs no other, SIGTERM drains and exits 0, and the limits behave as documented.
extension EndToEndTests {
    @Suite("Serve") struct ServeTests {
        /// A folder for unix sockets, removed at the end (short, so that paths fit in a `sockaddr_un`).
        final class Folder {
            let url: URL

            init() throws {
                url = FileManager.default.temporaryDirectory
                    .appendingPathComponent("rd-serve-\(UUID().uuidString.prefix(8))")
                try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            }

            func path(_ name: String) -> String { url.appendingPathComponent(name).path }

            deinit { try? FileManager.default.removeItem(at: url) }
        }

        /// A `respdecode serve` started by a test, with its standard error read as it comes; killed when the test
        /// lets go of it without stopping it. ``Server`` and ``ServeHTTPTests/Sidecar`` are the two ways to start it.
        class ServeProcess {
            let process = Process()
            private let output = Pipe()
            private let errors = Pipe()
            private var stderrBytes = Data()

            /// Starts `respdecode ARGUMENTS` in the package root.
            init(arguments: [String]) throws {
                process.executableURL = EndToEndTests.binary
                process.arguments = arguments
                process.currentDirectoryURL = EndToEndTests.packageRoot
                process.standardInput = FileHandle.nullDevice
                process.standardOutput = output
                process.standardError = errors
                try process.run()
            }

            var pid: Int32 { process.processIdentifier }

            /// Standard error so far (read up to now with ``waitForLog(_:timeout:)``).
            var stderr: String { String(decoding: stderrBytes, as: UTF8.self) }

            /// Reads standard error until a line contains `text` (at most `timeout` seconds); returns that line.
            @discardableResult
            func waitForLog(_ text: String, timeout: Double = 10) -> String? {
                let deadline = Date().addingTimeInterval(timeout)
                let fd = errors.fileHandleForReading.fileDescriptor
                while true {
                    if let line = stderr.split(separator: "\n").first(where: { $0.contains(text) }) {
                        return String(line)
                    }
                    guard Date() < deadline else { return nil }
                    var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    guard poll(&descriptor, 1, 50) > 0 else { continue }
                    var chunk = [UInt8](repeating: 0, count: 4096)
                    let n = read(fd, &chunk, chunk.count)
                    if n <= 0 { return nil }
                    stderrBytes.append(contentsOf: chunk[0..<n])
                }
            }

            /// A field of /proc/PID/status (`VmRSS` in kB, `Threads`), or nil once the process is gone.
            func status(_ field: String) -> Int? {
                guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
                let line = text.split(separator: "\n").first { $0.hasPrefix(field + ":") }
                return line.flatMap { Int($0.split(whereSeparator: { $0 == " " || $0 == "\t" })[1]) }
            }

            /// Sends `signal` (SIGTERM by default; nil: none, it was sent already) and waits for the exit (`timeout`
            /// seconds at most, then kills).
            func stop(_ signal: Int32? = SIGTERM, timeout: Double = 10) -> (
                status: Int32, stdout: Data, stderr: String, seconds: Double
            ) {
                let started = Date()
                if let signal, process.isRunning { kill(pid, signal) }
                let deadline = Date().addingTimeInterval(timeout)
                while process.isRunning && Date() < deadline { usleep(10_000) }
                if process.isRunning { kill(pid, SIGKILL) }
                process.waitUntilExit()
                let seconds = Date().timeIntervalSince(started)
                stderrBytes.append(errors.fileHandleForReading.readDataToEndOfFile())
                let stdout = output.fileHandleForReading.readDataToEndOfFile()
                return (process.terminationStatus, stdout, stderr, seconds)
            }

            deinit {
                if process.isRunning {
                    kill(pid, SIGKILL)
                    process.waitUntilExit()
                }
            }
        }

        /// `serve --listen ADDRESS`: the stream protocol only.
        final class Server: ServeProcess {
            /// The address it listens on, as `--listen` and `health` take it (a TCP port 0 replaced by the real one).
            private(set) var address = ""

            /// Starts `serve --listen listen --log-level notice ARGUMENTS` and waits for its "listening on" line.
            init(listen: String, _ arguments: [String] = []) throws {
                try super.init(arguments: ["serve", "--listen", listen, "--log-level", "notice"] + arguments)
                let line = try #require(waitForLog("listening on "), "no 'listening on' line: \(stderr)")
                address = String(line.split(separator: " ").last ?? "")
            }
        }

        /// A client connection, with blocking writes and reads bounded by a timeout.
        final class Client {
            let fd: Int32
            private(set) var received = Data()
            private(set) var ended = false
            private var closed = false

            /// Connects to `address` (`unix:PATH` or `tcp:127.0.0.1:PORT`).
            init(_ address: String) throws {
                if address.hasPrefix("unix:") {
                    fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
                    var unix = sockaddr_un()
                    unix.sun_family = sa_family_t(AF_UNIX)
                    let path = Array(address.dropFirst(5).utf8)
                    withUnsafeMutableBytes(of: &unix.sun_path) { room in
                        for (index, byte) in path.enumerated() { room[index] = byte }
                    }
                    let result = withUnsafePointer(to: &unix) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                        }
                    }
                    if result != 0 { throw ClientError.connect(address, errno) }
                } else {
                    let port = try #require(UInt16(address.split(separator: ":").last ?? ""), "\(address)")
                    fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                    var inet = sockaddr_in()
                    inet.sin_family = sa_family_t(AF_INET)
                    inet.sin_port = port.bigEndian
                    inet.sin_addr.s_addr = inet_addr("127.0.0.1")
                    let result = withUnsafePointer(to: &inet) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                        }
                    }
                    if result != 0 { throw ClientError.connect(address, errno) }
                }
            }

            enum ClientError: Error {
                case connect(String, Int32)
            }

            deinit { hangUp() }

            /// Closes the connection (as a client does once it has read the end of its lines).
            func hangUp() {
                if !closed { close(fd) }
                closed = true
            }

            /// Writes all of `data`, reading what comes back meanwhile (so that neither side can block the other).
            func send(_ data: Data) {
                var sent = 0
                let bytes = [UInt8](data)
                while sent < bytes.count {
                    var descriptors = [pollfd(fd: fd, events: Int16(POLLIN | POLLOUT), revents: 0)]
                    guard poll(&descriptors, 1, 10_000) > 0 else { return }
                    if descriptors[0].revents & Int16(POLLIN) != 0 { readSome() }
                    if descriptors[0].revents & Int16(POLLOUT) != 0 {
                        let n = bytes[sent...].withUnsafeBytes {
                            Glibc.send(fd, $0.baseAddress, min($0.count, 65536), Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                        }
                        if n > 0 { sent += n } else if n < 0 && errno != EAGAIN && errno != EINTR { return }
                    }
                }
            }

            /// Ends the stream (half-close): the server writes the remaining lines and closes.
            func finish() { shutdown(fd, Int32(SHUT_WR)) }

            private func readSome() {
                var chunk = [UInt8](repeating: 0, count: 65536)
                let n = recv(fd, &chunk, chunk.count, Int32(MSG_DONTWAIT))
                if n > 0 {
                    received.append(contentsOf: chunk[0..<n])
                } else if n == 0 || errno != EAGAIN && errno != EINTR {
                    ended = true
                }
            }

            /// Reads until `lines` lines have come, the server closed, or `timeout` seconds passed.
            @discardableResult
            func waitForLines(_ lines: Int, timeout: Double = 5) -> Int {
                let deadline = Date().addingTimeInterval(timeout)
                while lineCount < lines && !ended && Date() < deadline {
                    var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    if poll(&descriptor, 1, 20) > 0 { readSome() }
                }
                return lineCount
            }

            /// Reads until the server closes (true) or `timeout` seconds pass (false).
            func readToEnd(timeout: Double = 5) -> Bool {
                let deadline = Date().addingTimeInterval(timeout)
                while !ended && Date() < deadline {
                    var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    if poll(&descriptor, 1, 20) > 0 { readSome() }
                }
                return ended
            }

            var lineCount: Int { received.count(where: { $0 == UInt8(ascii: "\n") }) }

            /// Sends `data`, half-closes and reads everything back.
            func exchange(_ data: Data, timeout: Double = 5) -> Data {
                send(data)
                finish()
                _ = readToEnd(timeout: timeout)
                return received
            }
        }

        /// What standard input gives for `sample` (no "input" key), with `arguments`.
        static func stdinOutput(_ sample: String, _ arguments: [String] = []) throws -> Data {
            let result = try EndToEndTests.run(arguments, stdin: try EndToEndTests.sample(sample))
            #expect(result.status == 0)
            return result.stdout
        }

        static func response(_ json: String) -> Data { RuntimeTests.response(json) }

        static func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

        /// No warning, error or critical message in a server's log.
        static func quiet(_ log: String) -> Bool {
            !log.split(separator: "\n").contains { line in
                [" warning ", " error ", " critical "].contains { line.contains($0) }
            }
        }

        /// A TCP port nothing listens on (bound, then closed).
        static func closedPort() throws -> UInt16 {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var inet = sockaddr_in()
            inet.sin_family = sa_family_t(AF_INET)
            inet.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            try withUnsafeMutablePointer(to: &inet) { pointer in
                try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    try #require(bind(fd, $0, length) == 0)
                    try #require(getsockname(fd, $0, &length) == 0)
                }
            }
            return UInt16(bigEndian: inet.sin_port)
        }

        /// The golden output of capture.http, less its "input" key, equals standard input's output; one connection
        /// gets exactly that, over a unix socket and over TCP; the server writes nothing on stdout and exits 0.
        @Test(arguments: ["unix", "tcp"])
        func oneConnectionGetsWhatStandardInputGets(_ kind: String) throws {
            let folder = try Folder()
            let expected = try Self.stdinOutput("capture.http")
            let golden = Self.text(try EndToEndTests.sample("capture.expected.ndjson"))
                .replacingOccurrences(of: #""input":"samples/capture.http","#, with: "")
            #expect(Self.text(expected) == golden)

            let server = try Server(listen: kind == "unix" ? "unix:\(folder.path("s.sock"))" : "tcp:127.0.0.1:0")
            if kind == "tcp" { #expect(server.address.hasPrefix("tcp:127.0.0.1:") && !server.address.hasSuffix(":0")) }
            let client = try Client(server.address)
            let received = client.exchange(try EndToEndTests.sample("capture.http"))
            #expect(received == expected, "\(Self.text(received))")
            let result = server.stop()
            #expect(result.status == 0)
            #expect(result.stdout.isEmpty)
            #expect(Self.quiet(result.stderr), "\(result.stderr)")
        }

        /// Eight connections at once, each a different sample (every framing, --sniff given to the server), each get
        /// their own lines; --stats at the end counts them all.
        @Test func manyConnectionsAtOnceGetTheirOwnLines() throws {
            let folder = try Folder()
            let samples = [
                "capture.http", "documents.http", "images.http", "traffic.warc.gz", "traffic.har", "traffic.ndjson",
                "capture.http", "traffic.har",
            ]
            let expected = try samples.map { try Self.stdinOutput($0, ["--sniff"]) }
            let server = try Server(listen: "unix:\(folder.path("s.sock"))", ["--sniff", "--jobs", "3", "--stats"])
            let clients = try samples.map { _ in try Client(server.address) }
            // Everything sent first, then every stream ended, then read: all eight are open together.
            for (client, sample) in zip(clients, samples) { client.send(try EndToEndTests.sample(sample)) }
            for client in clients { client.finish() }
            for (index, client) in clients.enumerated() {
                #expect(client.readToEnd())
                #expect(client.received == expected[index], "\(samples[index]): \(Self.text(client.received))")
            }
            let result = server.stop()
            #expect(result.status == 0)
            let total = expected.reduce(0) { $0 + $1.count(where: { $0 == UInt8(ascii: "\n") }) }
            #expect(result.stderr.contains("respdecode: \(total) records, "), "\(result.stderr)")
        }

        /// A client that sends one record and waits gets its line while its connection stays open, and the next
        /// record's line after it.
        @Test func aSlowClientGetsEachLineWhileItsConnectionStaysOpen() throws {
            let server = try Server(listen: "tcp:127.0.0.1:0")
            let client = try Client(server.address)
            client.send(Self.response(#"{"first":1}"#))
            #expect(client.waitForLines(1) == 1)
            #expect(!client.ended)
            usleep(300_000)
            client.send(Self.response(#"{"second":2}"#))
            #expect(client.waitForLines(2) == 2)
            #expect(!client.ended)
            client.finish()
            #expect(client.readToEnd())
            let lines = try TrafficTests.lines(client.received)
            #expect(lines.map { $0["seq"] as? Int } == [0, 1])
            #expect((lines[1]["value"] as? [String: Any])?["second"] as? Int == 2)
            #expect(server.stop().status == 0)
        }

        /// Clients that vanish -- with a reset in the middle of a large stream whose lines they never read, or after
        /// half a record -- end their own connections only, quietly: another connection open all along gets every
        /// line, new ones are served, the server stays healthy.
        @Test(arguments: ["unix", "tcp"])
        func aClientThatGoesAwayDisturbsNoOther(_ kind: String) throws {
            let folder = try Folder()
            let server = try Server(
                listen: kind == "unix" ? "unix:\(folder.path("s.sock"))" : "tcp:127.0.0.1:0", ["--jobs", "2"])
            let steady = try Client(server.address)
            steady.send(Self.response(#"{"n":0}"#))
            #expect(steady.waitForLines(1) == 1)

            var big = Data()
            for i in 0..<3000 {
                big.append(Self.response("{\"n\":\(i),\"pad\":\"\(String(repeating: "x", count: 200))\"}"))
            }
            do {
                let vanishing = try Client(server.address)
                // Written without reading a line back, then reset (SO_LINGER 0) while the server is still busy.
                let written = big.prefix(400_000).withUnsafeBytes {
                    Glibc.send(vanishing.fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
                }
                #expect(written > 0)
                var reset = linger(l_onoff: 1, l_linger: 0)
                setsockopt(vanishing.fd, SOL_SOCKET, SO_LINGER, &reset, socklen_t(MemoryLayout<linger>.size))
            }
            do {
                let halfway = try Client(server.address)
                halfway.send(Data("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{\"cut".utf8))
            }
            usleep(200_000)

            for i in 1..<20 { steady.send(Self.response("{\"n\":\(i)}")) }
            steady.finish()
            #expect(steady.readToEnd())
            let lines = try TrafficTests.lines(steady.received)
            #expect(lines.count == 20)
            #expect(
                lines.enumerated().allSatisfy { ($0.element["value"] as? [String: Any])?["n"] as? Int == $0.offset })

            let later = try Client(server.address)
            #expect(later.exchange(try EndToEndTests.sample("capture.http")) == (try Self.stdinOutput("capture.http")))
            #expect(try EndToEndTests.run(["health", "--listen", server.address]).status == 0)
            let result = server.stop()
            #expect(result.status == 0)
            #expect(Self.quiet(result.stderr), "\(result.stderr)")
        }

        /// health: 0 and nothing said against a live server (unix and TCP); 1 with one line of reason against a
        /// missing socket, a closed port, a server that has stopped.
        @Test func healthTellsALiveServerFromADeadOne() throws {
            let folder = try Folder()
            let unixServer = try Server(listen: "unix:\(folder.path("s.sock"))")
            let tcpServer = try Server(listen: "tcp:127.0.0.1:0")
            for address in [unixServer.address, tcpServer.address] {
                let live = try EndToEndTests.run(["health", "--listen", address])
                #expect(live.status == 0, "\(address): \(live.stderr)")
                #expect(live.stderr.isEmpty && live.stdout.isEmpty)
            }
            #expect(unixServer.stop().status == 0)
            #expect(tcpServer.stop().status == 0)
            let dead = [
                unixServer.address, "unix:\(folder.path("nothing-here.sock"))",
                "tcp:127.0.0.1:\(try Self.closedPort())",
            ]
            for address in dead {
                let result = try EndToEndTests.run(["health", "--listen", address, "--timeout", "1"])
                #expect(result.status == 1, "\(address)")
                #expect(
                    result.stderr.hasPrefix("respdecode health: ") && result.stderr.split(separator: "\n").count == 1,
                    "\(result.stderr)")
            }
        }

        /// health times out (exit 1) against something that accepts and never answers.
        @Test func healthTimesOutAgainstASilentListener() throws {
            let folder = try Folder()
            let path = folder.path("silent.sock")
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var unix = sockaddr_un()
            unix.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &unix.sun_path) { room in
                for (index, byte) in path.utf8.enumerated() { room[index] = byte }
            }
            let bound = withUnsafePointer(to: &unix) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            try #require(bound == 0 && listen(fd, 8) == 0)
            let started = Date()
            let result = try EndToEndTests.run(["health", "--listen", "unix:\(path)", "--timeout", "0.5"])
            #expect(result.status == 1)
            #expect(result.stderr.contains("no answer within 0.500 s"), "\(result.stderr)")
            #expect(Date().timeIntervalSince(started) < 3)
        }

        /// SIGTERM (or SIGINT) while a connection is mid-stream: it gets the lines of the records it sent in full (none
        /// for the
        /// half record after them), an idle connection is closed cleanly, new connections are refused, the server
        /// exits 0 and its socket file is gone.
        @Test(arguments: [SIGTERM, SIGINT])
        func aStopSignalDrainsTheConnectionsAndExitsZero(_ signal: Int32) throws {
            let folder = try Folder()
            let path = folder.path("s.sock")
            let server = try Server(listen: "unix:\(path)", ["--jobs", "2"])
            let busy = try Client(server.address)
            let idle = try Client(server.address)
            for i in 0..<30 { busy.send(Self.response("{\"n\":\(i)}")) }
            busy.send(Data("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"half".utf8))
            #expect(busy.waitForLines(30) == 30)
            kill(server.process.processIdentifier, signal)
            #expect(busy.readToEnd())
            #expect(idle.readToEnd())
            busy.hangUp()
            idle.hangUp()
            let result = server.stop(nil)
            #expect(result.status == 0)
            #expect(result.seconds < 5)
            #expect(result.stdout.isEmpty)
            let lines = try TrafficTests.lines(busy.received)
            #expect(lines.count == 30)
            #expect(lines.allSatisfy { $0["ok"] as? Bool == true })
            #expect(idle.received.isEmpty)
            #expect(!FileManager.default.fileExists(atPath: path), "the socket file is removed")
            #expect(throws: Client.ClientError.self) { try Client("unix:\(path)") }
            #expect(result.stderr.contains("stopped"))
        }

        /// --max-connections: a connection beyond the limit waits in the backlog, unanswered, until one ends; then
        /// it is served in full.
        @Test func connectionsBeyondTheLimitWaitForOneToEnd() throws {
            let server = try Server(listen: "tcp:127.0.0.1:0", ["--max-connections", "1"])
            let first = try Client(server.address)
            first.send(Self.response(#"{"who":"first"}"#))
            #expect(first.waitForLines(1) == 1)
            #expect(server.waitForLog("new ones wait") != nil)

            let second = try Client(server.address)
            second.send(Self.response(#"{"who":"second"}"#))
            second.finish()
            #expect(second.waitForLines(1, timeout: 0.7) == 0, "not served while the first is open")
            #expect(!second.ended)

            first.finish()
            #expect(first.readToEnd())
            #expect(second.readToEnd())
            #expect(Self.text(second.received).contains(#""value":{"who":"second"}"#))
            let stopped = server.stop()
            #expect(stopped.status == 0, "\(stopped.stderr)")
        }

        /// --idle-timeout: a connection that sends nothing is closed after its lines are written (a record it left
        /// unfinished is truncatedRecord); the server goes on.
        @Test func anIdleConnectionIsClosedAfterItsLines() throws {
            let server = try Server(listen: "tcp:127.0.0.1:0", ["--idle-timeout", "0.5"])
            let quiet = try Client(server.address)
            let cut = try Client(server.address)
            let started = Date()
            quiet.send(Self.response(#"{"a":1}"#))
            cut.send(Data("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{\"cut".utf8))
            #expect(quiet.waitForLines(1) == 1)
            #expect(quiet.readToEnd())
            #expect(cut.readToEnd())
            let elapsed = Date().timeIntervalSince(started)
            quiet.hangUp()
            cut.hangUp()
            #expect(elapsed >= 0.45 && elapsed < 4, "\(elapsed)")
            #expect(Self.text(quiet.received).contains(#""value":{"a":1}"#))
            let lines = try TrafficTests.lines(cut.received)
            #expect(lines.count == 1)
            #expect((lines.first?["error"] as? [String: Any])?["code"] as? String == "truncatedRecord")
            #expect(try EndToEndTests.run(["health", "--listen", server.address]).status == 0)
            let result = server.stop()
            #expect(result.status == 0)
            #expect(result.stderr.contains("taken as its end"), "\(result.stderr)")
        }

        /// A stale socket file is replaced (and removed at the end); a regular file, a live server's socket and a TCP
        /// port in use are refused with exit 2 and left alone.
        @Test func aStaleSocketIsReplacedAndAnythingElseRefused() throws {
            let folder = try Folder()
            let stale = folder.path("stale.sock")
            let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
            var unix = sockaddr_un()
            unix.sun_family = sa_family_t(AF_UNIX)
            withUnsafeMutableBytes(of: &unix.sun_path) { room in
                for (index, byte) in stale.utf8.enumerated() { room[index] = byte }
            }
            let bound = withUnsafePointer(to: &unix) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                }
            }
            close(fd)
            try #require(bound == 0 && FileManager.default.fileExists(atPath: stale))

            let server = try Server(listen: "unix:\(stale)")
            #expect(server.stderr.contains("removed the stale socket"))
            #expect(try EndToEndTests.run(["health", "--listen", "unix:\(stale)"]).status == 0)

            let second = try EndToEndTests.run(["serve", "--listen", "unix:\(stale)"])
            #expect(second.status == 2)
            #expect(second.stderr.contains("already listening"), "\(second.stderr)")
            #expect(
                try EndToEndTests.run(["health", "--listen", "unix:\(stale)"]).status == 0, "the first one is intact")
            #expect(server.stop().status == 0)
            #expect(!FileManager.default.fileExists(atPath: stale))

            let regular = folder.path("regular")
            try Data("keep me".utf8).write(to: URL(fileURLWithPath: regular))
            let refused = try EndToEndTests.run(["serve", "--listen", "unix:\(regular)"])
            #expect(refused.status == 2)
            #expect(refused.stderr.contains("exists and is not a socket"), "\(refused.stderr)")
            #expect(refused.stdout.isEmpty)
            #expect(try Data(contentsOf: URL(fileURLWithPath: regular)) == Data("keep me".utf8))

            let tcp = try Server(listen: "tcp:127.0.0.1:0")
            let inUse = try EndToEndTests.run(["serve", "--listen", tcp.address])
            #expect(inUse.status == 2)
            #expect(inUse.stderr.contains("Address already in use"), "\(inUse.stderr)")
            #expect(tcp.stop().status == 0)
        }

        /// A config file sets the server's own options too; another command given one of those keys exits 2.
        @Test func aConfigFileCanSetTheListenAddress() throws {
            let folder = try Folder()
            let socket = folder.path("c.sock")
            let config = folder.path("serve.json")
            try Data("{\"listen\": \"unix:\(socket)\", \"max-connections\": 2, \"output\": \"pretty\"}".utf8)
                .write(to: URL(fileURLWithPath: config))
            let process = try Server(listen: "unix:\(folder.path("ignored.sock"))", ["--config", config])
            // The command line wins over the file.
            #expect(process.address == "unix:\(folder.path("ignored.sock"))")
            _ = process.stop()

            let server = Process()
            server.executableURL = EndToEndTests.binary
            server.arguments = ["serve", "--config", config]
            server.standardInput = FileHandle.nullDevice
            server.standardError = FileHandle.nullDevice
            try server.run()
            defer {
                if server.isRunning { kill(server.processIdentifier, SIGKILL) }
                server.waitUntilExit()
            }
            var healthy = false
            for _ in 0..<100 where !healthy {
                healthy = try EndToEndTests.run(["health", "--listen", "unix:\(socket)"]).status == 0
                if !healthy { usleep(50_000) }
            }
            #expect(healthy)
            let received = try Client("unix:\(socket)").exchange(try EndToEndTests.sample("capture.http"))
            #expect(received == (try Self.stdinOutput("capture.http", ["--output", "pretty"])))
            kill(server.processIdentifier, SIGTERM)
            server.waitUntilExit()
            #expect(server.terminationStatus == 0)

            let decode = try EndToEndTests.run(["--config", config, "samples/capture.http"])
            #expect(decode.status == 2)
            #expect(decode.stderr.contains("\"listen\": only 'respdecode serve' reads this key"), "\(decode.stderr)")
        }

        @Test(arguments: [
            ["serve"], ["serve", "--listen", "nowhere"], ["serve", "--listen", "tcp:host.example:80"],
            ["serve", "--listen", "tcp:127.0.0.1"], ["serve", "--listen", "tcp:127.0.0.1:65536"],
            ["serve", "--listen", "unix:"],
            ["serve", "--listen", "tcp:127.0.0.1:0", "--max-connections", "0"],
            ["serve", "--listen", "tcp:127.0.0.1:0", "--idle-timeout", "-1"],
            ["serve", "--listen", "unix:/" + String(repeating: "x", count: 120)],
            ["health", "--listen", "nowhere"], ["health", "--listen", "tcp:127.0.0.1:1", "--timeout", "0"],
        ])
        func badServeAndHealthArgumentsExitTwo(_ arguments: [String]) throws {
            let result = try EndToEndTests.run(arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty)
            #expect(!result.stderr.isEmpty)
        }

        /// The options are documented where scripts/test-container looks for them.
        @Test func helpDocumentsTheNewOptions() throws {
            let serve = Self.text(try EndToEndTests.run(["serve", "--help"]).stdout)
            for option in ["--listen", "--max-connections", "--idle-timeout", "--config", "--jobs", "--sniff"] {
                #expect(serve.contains(option), "serve --help lacks \(option)")
            }
            let health = Self.text(try EndToEndTests.run(["health", "--help"]).stdout)
            #expect(health.contains("--listen") && health.contains("--timeout"))
            let main = Self.text(try EndToEndTests.run(["--help"]).stdout)
            #expect(main.contains("  serve ") && main.contains("  health "))
        }
    }
}
