import Foundation
import Testing

/// `respdecode health --http` and its PID-1 mode on the built binary (issue 23), against fake servers of this file: a
/// listening socket on 127.0.0.1 that answers a status, a stream's clean close, or nothing. No real `serve` is needed.
extension EndToEndTests {
    @Suite("Health") struct HealthTests {
        /// What a fake server does with each connection it accepts.
        enum Behaviour: Sendable {
            /// Reads the request head, writes these bytes, closes.
            case answer(String)
            /// Reads until the client half-closes, then closes: what `serve --listen` does with an empty stream.
            case streamEnd
            /// Accepts and never answers; the connection is held open until the server stops.
            case silent

            /// An HTTP answer with `status` and a body "ok".
            static func status(_ status: Int) -> Behaviour {
                .answer(
                    "HTTP/1.1 \(status) Whatever\r\nContent-Type: text/plain\r\nContent-Length: 3\r\n"
                        + "Connection: close\r\n\r\nok\n")
            }
        }

        /// What the accepting thread and the test share.
        final class State: @unchecked Sendable {
            private let lock = NSLock()
            private var stopped = false
            private var heads: [String] = []
            private var held: [Int32] = []
            let done = DispatchSemaphore(value: 0)

            var isStopped: Bool { lock.withLock { stopped } }
            var requests: [String] { lock.withLock { heads } }
            func record(_ head: String) { lock.withLock { heads.append(head) } }
            func hold(_ fd: Int32) { lock.withLock { held.append(fd) } }

            /// Stops the loop; returns the connections held open, for the caller to close.
            func stop() -> [Int32] {
                lock.withLock {
                    stopped = true
                    defer { held = [] }
                    return held
                }
            }
        }

        /// A fake server on 127.0.0.1 (port 0: any free port), accepting on a thread of its own until it is let go.
        final class FakeServer {
            let fd: Int32
            let port: UInt16
            let state = State()

            init(_ behaviour: Behaviour) throws {
                fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                var inet = sockaddr_in()
                inet.sin_family = sa_family_t(AF_INET)
                inet.sin_addr.s_addr = inet_addr("127.0.0.1")
                var length = socklen_t(MemoryLayout<sockaddr_in>.size)
                let fd = fd
                try withUnsafeMutablePointer(to: &inet) { pointer in
                    try pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        try #require(bind(fd, $0, length) == 0)
                        try #require(getsockname(fd, $0, &length) == 0)
                    }
                }
                port = UInt16(bigEndian: inet.sin_port)
                try #require(listen(fd, 16) == 0)
                let state = state
                Thread { Self.serve(fd, behaviour, state) }.start()
            }

            /// `tcp:127.0.0.1:PORT`.
            var address: String { "tcp:127.0.0.1:\(port)" }

            private static func serve(_ fd: Int32, _ behaviour: Behaviour, _ state: State) {
                defer { state.done.signal() }
                while !state.isStopped {
                    var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                    guard poll(&descriptor, 1, 50) > 0 else { continue }
                    let client = accept(fd, nil, nil)
                    guard client >= 0 else { continue }
                    // A client that never sends must not hold this thread for long.
                    var wait = timeval(tv_sec: 2, tv_usec: 0)
                    _ = setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
                    switch behaviour {
                    case .silent:
                        state.hold(client)
                        continue
                    case .streamEnd:
                        _ = readUntil(client) { _ in false }
                    case .answer(let text):
                        let head = readUntil(client) { $0.contains(Data("\r\n\r\n".utf8)) }
                        state.record(String(decoding: head, as: UTF8.self))
                        let bytes = Array(text.utf8)
                        _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                    }
                    close(client)
                }
            }

            /// Reads until `enough` says so, the client half-closes, or the read times out.
            private static func readUntil(_ fd: Int32, _ enough: (Data) -> Bool) -> Data {
                var received = Data()
                var chunk = [UInt8](repeating: 0, count: 4096)
                while !enough(received) {
                    let n = read(fd, &chunk, chunk.count)
                    if n <= 0 { break }
                    received.append(contentsOf: chunk[0..<n])
                }
                return received
            }

            deinit {
                let held = state.stop()
                state.done.wait()
                for client in held { close(client) }
                close(fd)
            }
        }

        /// A TCP port on 127.0.0.1 that nothing listens on (bound, never listened, then closed).
        static func deadAddress() throws -> String { "tcp:127.0.0.1:\(try ServeTests.closedPort())" }

        /// A folder for the fake command lines and config files, removed at the end.
        final class Folder {
            let url: URL

            init() throws {
                url = FileManager.default.temporaryDirectory
                    .appendingPathComponent("rd-health-\(UUID().uuidString.prefix(8))")
                try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
            }

            /// Writes `text` to the file `name`; returns its path.
            func write(_ name: String, _ text: String) throws -> String {
                let path = url.appendingPathComponent(name).path
                try Data(text.utf8).write(to: URL(fileURLWithPath: path))
                return path
            }

            /// A command line as /proc/PID/cmdline holds it: each argument ended by a NUL.
            func cmdline(_ arguments: [String]) throws -> String {
                try write("cmdline-\(UUID().uuidString.prefix(8))", arguments.map { $0 + "\0" }.joined())
            }

            deinit { try? FileManager.default.removeItem(at: url) }
        }

        /// `respdecode health ARGUMENTS`, with RESPDECODE_HEALTH_CMDLINE naming `cmdline` when given.
        static func health(_ arguments: [String] = [], cmdline: String? = nil) throws -> EndToEndTests.Run {
            let process = Process()
            process.executableURL = EndToEndTests.binary
            process.arguments = ["health"] + arguments
            process.currentDirectoryURL = EndToEndTests.packageRoot
            var environment = ProcessInfo.processInfo.environment
            environment["RESPDECODE_HEALTH_CMDLINE"] = cmdline
            process.environment = environment
            let output = Pipe()
            let errors = Pipe()
            process.standardOutput = output
            process.standardError = errors
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let outData = output.fileHandleForReading.readDataToEndOfFile()
            let errData = errors.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return EndToEndTests.Run(
                status: process.terminationStatus, stdout: outData, stderr: String(decoding: errData, as: UTF8.self))
        }

        /// A failure as documented: exit 1, nothing on standard output, one line on standard error.
        static func expectFailure(_ result: EndToEndTests.Run, containing text: String) {
            #expect(result.status == 1, "\(result.stderr)")
            #expect(result.stdout.isEmpty)
            #expect(
                result.stderr.hasPrefix("respdecode health: ") && result.stderr.split(separator: "\n").count == 1,
                "\(result.stderr)")
            #expect(result.stderr.contains(text), "\(result.stderr)")
        }

        // MARK: - health --http

        /// A 200 passes, silently; the request is the documented one.
        @Test func httpPassesOn200() throws {
            let server = try FakeServer(.status(200))
            let result = try Self.health(["--http", server.address])
            #expect(result.status == 0, "\(result.stderr)")
            #expect(result.stdout.isEmpty && result.stderr.isEmpty)
            let head = try #require(server.state.requests.first)
            let lines = head.components(separatedBy: "\r\n")
            #expect(lines.first == "GET /healthz HTTP/1.1")
            #expect(lines.contains("Host: localhost") && lines.contains("Connection: close"), "\(lines)")
            #expect(head.hasSuffix("\r\n\r\n"))
        }

        /// Any other status fails, and the message names it.
        @Test(arguments: [503, 500, 404, 204]) func httpFailsOnAnotherStatus(_ status: Int) throws {
            let server = try FakeServer(.status(status))
            Self.expectFailure(try Self.health(["--http", server.address]), containing: "HTTP status \(status)")
        }

        /// A listener that accepts and never answers: exit 1 once the timeout is over, not later.
        @Test func httpTimesOutOnSilence() throws {
            let server = try FakeServer(.silent)
            let started = Date()
            let result = try Self.health(["--http", server.address, "--timeout", "0.5"])
            Self.expectFailure(result, containing: "no answer within 0.500 s")
            #expect(Date().timeIntervalSince(started) < 3)
        }

        /// Answers that are not an HTTP status line, or no answer before the close.
        @Test(arguments: [
            ("SSH-2.0-OpenSSH_9.2\r\n", "not an HTTP status line"),
            ("HTTP/2 200\r\n\r\n", "not an HTTP status line"),
            ("HTTP/1.1 2000 OK\r\n\r\n", "not an HTTP status line"),
            ("", "closed the connection without answering"),
            ("HTTP/1.1 20", "closed the connection in its status line"),
        ])
        func httpFailsOnAnAnswerThatIsNotOne(_ answer: String, _ message: String) throws {
            let server = try FakeServer(.answer(answer))
            Self.expectFailure(try Self.health(["--http", server.address]), containing: message)
        }

        /// Nothing listening: refused at once, for TCP and unix sockets.
        @Test func httpFailsWhenNothingListens() throws {
            Self.expectFailure(try Self.health(["--http", try Self.deadAddress()]), containing: "connection refused")
            let folder = try Folder()
            Self.expectFailure(
                try Self.health(["--http", "unix:\(folder.url.path)/none.sock"]), containing: "no such socket")
        }

        @Test(arguments: [
            ["--http", "nowhere"], ["--http", "tcp:127.0.0.1"], ["--listen", "unix:a.sock", "--http", "unix:b.sock"],
            ["--http", "tcp:127.0.0.1:1", "--timeout", "0"],
        ])
        func badArgumentsExitTwo(_ arguments: [String]) throws {
            let result = try Self.health(arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stdout.isEmpty && !result.stderr.isEmpty)
        }

        // MARK: - With no address: the server PID 1 runs

        static let nothingToCheck = "respdecode health: PID 1 is not respdecode serve: nothing to check\n"

        /// PID 1 is a serve with --http: its HTTP listener is probed, in every form of the option.
        @Test func pid1ServeWithHTTPIsProbed() throws {
            let folder = try Folder()
            let live = try FakeServer(.status(200))
            let dead = try Self.deadAddress()
            let commandLines = [
                ["respdecode", "serve", "--http", live.address],
                ["respdecode", "serve", "--http=\(live.address)"],
                // --http preferred to --listen, and a path for argv[0].
                ["/usr/local/bin/respdecode", "serve", "--jobs", "2", "--listen", dead, "--http", live.address],
                ["respdecode", "serve", "--http", dead, "--http", live.address], // the last one wins
            ]
            for arguments in commandLines {
                let result = try Self.health(cmdline: try folder.cmdline(arguments))
                #expect(result.status == 0, "\(arguments): \(result.stderr)")
                #expect(result.stderr.isEmpty && result.stdout.isEmpty, "\(arguments)")
            }
            #expect(live.state.requests.count == commandLines.count)
        }

        /// PID 1 is a serve with --listen only: the stream protocol is probed.
        @Test func pid1ServeWithListenOnlyIsProbed() throws {
            let folder = try Folder()
            let stream = try FakeServer(.streamEnd)
            let result = try Self.health(
                cmdline: try folder.cmdline(["respdecode", "serve", "--listen", stream.address]))
            #expect(result.status == 0, "\(result.stderr)")
            // An HTTP answer to the empty stream is not what a stream listener does.
            let http = try FakeServer(.status(200))
            Self.expectFailure(
                try Self.health(cmdline: try folder.cmdline(["respdecode", "serve", "--listen=\(http.address)"])),
                containing: "bytes for an empty stream")
        }

        /// --http is what is probed when both are given: a 503 there fails though the stream listener is alive.
        @Test func pid1ServeProbesHTTPNotTheStreamListener() throws {
            let folder = try Folder()
            let stream = try FakeServer(.streamEnd)
            let unhealthy = try FakeServer(.status(503))
            let cmdline = try folder.cmdline([
                "respdecode", "serve", "--listen", stream.address, "--http", unhealthy.address,
            ])
            Self.expectFailure(try Self.health(cmdline: cmdline), containing: "HTTP status 503")
        }

        /// The addresses may come from PID 1's --config file; its command line wins over the file, as in serve.
        @Test func pid1ServeWithAConfigFile() throws {
            let folder = try Folder()
            let live = try FakeServer(.status(200))
            let dead = try Self.deadAddress()
            let liveConfig = try folder.write("live.json", "{\"jobs\": 2, \"http\": \"\(live.address)\"}")
            let deadConfig = try folder.write("dead.json", "{\"listen\": \"\(dead)\"}")
            for arguments in [
                ["respdecode", "serve", "--config", liveConfig], ["respdecode", "serve", "--config=\(liveConfig)"],
                ["respdecode", "serve", "--config", deadConfig, "--http", live.address],
                // The file's --http is preferred to the command line's --listen.
                ["respdecode", "serve", "--listen", dead, "--config", liveConfig],
            ] {
                let result = try Self.health(cmdline: try folder.cmdline(arguments))
                #expect(result.status == 0, "\(arguments): \(result.stderr)")
            }
            Self.expectFailure(
                try Self.health(cmdline: try folder.cmdline(["respdecode", "serve", "--config", deadConfig])),
                containing: "connection refused")
            Self.expectFailure(
                try Self.health(
                    cmdline: try folder.cmdline(["respdecode", "serve", "--config", "\(folder.url.path)/no.json"])),
                containing: "no.json")
        }

        /// PID 1 is not a serve (a batch run, a shell, another program): nothing to check, exit 0, one line.
        @Test(arguments: [
            ["respdecode"], ["respdecode", "--jobs", "2", "samples/capture.http"],
            ["/usr/local/bin/respdecode", "health"],
            ["sh", "-c", "respdecode serve --http tcp:127.0.0.1:1"],
            ["respdecoder", "serve", "--http", "tcp:127.0.0.1:1"],
            ["/sbin/docker-init", "--", "respdecode", "serve", "--http", "tcp:127.0.0.1:1"],
        ])
        func pid1NotServeIsNothingToCheck(_ arguments: [String]) throws {
            let folder = try Folder()
            let result = try Self.health(cmdline: try folder.cmdline(arguments))
            #expect(result.status == 0, "\(arguments): \(result.stderr)")
            #expect(result.stderr == Self.nothingToCheck && result.stdout.isEmpty, "\(arguments): \(result.stderr)")
        }

        /// PID 1 is a serve whose address answers nothing, names none, or cannot be read: exit 1.
        @Test func pid1ServeThatDoesNotAnswerFails() throws {
            let folder = try Folder()
            let dead = try Self.deadAddress()
            for option in ["--http", "--listen"] {
                Self.expectFailure(
                    try Self.health(cmdline: try folder.cmdline(["respdecode", "serve", option, dead])),
                    containing: "connection refused")
            }
            let silent = try FakeServer(.silent)
            Self.expectFailure(
                try Self.health(
                    ["--timeout", "0.5"],
                    cmdline: try folder.cmdline(["respdecode", "serve", "--http", silent.address])),
                containing: "no answer within 0.500 s")
            Self.expectFailure(
                try Self.health(cmdline: try folder.cmdline(["respdecode", "serve", "--jobs", "2"])),
                containing: "neither --http nor --listen")
            Self.expectFailure(
                try Self.health(cmdline: try folder.cmdline(["respdecode", "serve", "--http", "nowhere"])),
                containing: "--http")
            Self.expectFailure(
                try Self.health(cmdline: "\(folder.url.path)/no-such-cmdline"), containing: "cannot read")
        }

        /// An address given on the command line is probed, whatever PID 1 is.
        @Test func anAddressGivenWinsOverPID1() throws {
            let folder = try Folder()
            let live = try FakeServer(.status(200))
            let cmdline = try folder.cmdline(["respdecode", "serve", "--http", try Self.deadAddress()])
            let result = try Self.health(["--http", live.address], cmdline: cmdline)
            #expect(result.status == 0, "\(result.stderr)")
        }
    }
}
