import Foundation
import RespDecodeTestSupport
import Testing

/// The service runtime on the built binary (docs/output.md#exit-status, issue 6): jobs keep input order, SIGTERM/SIGINT
/// drain, SIGUSR1
/// and the statistics options write to standard error only.
extension EndToEndTests {
    @Suite("Runtime") struct RuntimeTests {
        /// A binary started with pipes for its three standard streams, fed and read by the test.
        final class Running {
            let process = Process()
            let input = Pipe()
            let output = Pipe()
            let errors = Pipe()
            private var received = Data()

            init(_ arguments: [String]) throws {
                process.executableURL = EndToEndTests.binary
                process.arguments = arguments
                process.currentDirectoryURL = EndToEndTests.packageRoot
                process.standardInput = input
                process.standardOutput = output
                process.standardError = errors
                try process.run()
            }

            func send(_ data: Data) { input.fileHandleForWriting.write(data) }

            /// Reads standard output until it holds `count` lines or 10 seconds pass; returns what was read.
            func waitForLines(_ count: Int) -> Data {
                let reader = output.fileHandleForReading
                let deadline = Date().addingTimeInterval(10)
                var descriptor = pollfd(fd: reader.fileDescriptor, events: Int16(POLLIN), revents: 0)
                while received.count(where: { $0 == UInt8(ascii: "\n") }) < count && Date() < deadline {
                    if poll(&descriptor, 1, 100) > 0 {
                        let chunk = reader.availableData
                        if chunk.isEmpty { break }
                        received.append(chunk)
                    }
                }
                return received
            }

            /// Waits for the exit (at most 10 seconds, then kills); returns status, all of stdout, stderr.
            func finish() -> (status: Int32, stdout: Data, stderr: String) {
                let deadline = Date().addingTimeInterval(10)
                while process.isRunning && Date() < deadline { usleep(10_000) }
                if process.isRunning { process.terminate() }
                process.waitUntilExit()
                received.append(output.fileHandleForReading.readDataToEndOfFile())
                let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                return (process.terminationStatus, received, stderr)
            }
        }

        static func response(_ json: String) -> Data {
            Data(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(json.utf8.count)\r\n\r\n\(json)"
                    .utf8)
        }

        /// Every sample gives byte-identical output with one job and with several (order, seq, offsets, values).
        @Test(arguments: [
            ["samples/capture.http"], ["samples/documents.http"], ["samples/images.http"],
            ["--inflate", "samples/images.http"], ["samples/traffic.warc.gz"], ["samples/traffic.har"],
            ["--sniff", "samples/traffic.ndjson"],
            ["samples/capture.http", "samples/traffic.warc.gz", "samples/traffic.har", "samples/documents.http"],
        ])
        func jobsDoNotChangeTheOutput(_ arguments: [String]) throws {
            let one = try EndToEndTests.run(["--jobs", "1"] + arguments)
            #expect(one.status == 0)
            #expect(!one.stdout.isEmpty)
            for jobs in ["2", "5"] {
                let many = try EndToEndTests.run(["--jobs", jobs] + arguments)
                #expect(many.status == one.status)
                #expect(many.stdout == one.stdout, "--jobs \(jobs) on \(arguments)")
            }
        }

        /// A `.warc.gz` of `count` responses (one gzip member per record, every 50th record's head and block in two
        /// members, every 97th member corrupt), a few MB: large enough to be cut into spans framed on the workers
        /// (docs/framings.md#parallel-inflate).
        static func crawl(_ count: Int, seed: UInt64) -> Data {
            var random = SplitMix64(seed: seed)
            var file = Data()
            for n in 0..<count {
                let numbers = (0..<(20 + Int(random.next() % 200))).map { _ in String(random.next() % 100_000) }
                let body = "{\"n\":\(n),\"values\":[\(numbers.joined(separator: ","))]}"
                let http =
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                let record = warcResponse(http, id: "\(seed)-\(n)", uri: "https://x.test/\(n)")
                if n % 50 == 7 {
                    file.append(
                        contentsOf: HostileDocumentTests.HostileEncodingTests.gzip(data: Array(record.prefix(60))))
                    file.append(
                        contentsOf: HostileDocumentTests.HostileEncodingTests.gzip(data: Array(record.dropFirst(60))))
                } else {
                    var member = HostileDocumentTests.HostileEncodingTests.gzip(data: record, level: 6)
                    if n % 97 == 13 { member[member.count / 2] ^= 0x5A }
                    file.append(contentsOf: member)
                }
            }
            return file
        }

        /// Several `.warc.gz` inputs of several MB, on the workers in spans and across inputs, give the lines of one
        /// job byte for byte, from files, from a list and from standard input.
        @Test func spansAcrossInputsKeepTheOutput() throws {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "respdecode-spans-\(getpid())")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let first = directory.appendingPathComponent("a.warc.gz")
            let second = directory.appendingPathComponent("b.warc.gz")
            let crawl = Self.crawl(9000, seed: 1)
            #expect(crawl.count > 3 << 20)
            try crawl.write(to: first)
            try Self.crawl(4000, seed: 2).write(to: second)
            let list = directory.appendingPathComponent("list")
            try "\(second.path)\n\(first.path)\n".write(to: list, atomically: true, encoding: .utf8)
            let arguments = [first.path, second.path, "samples/traffic.warc.gz", first.path]
            let one = try EndToEndTests.run(["--jobs", "1"] + arguments)
            #expect(one.status == 0)
            let lines = try TrafficTests.lines(one.stdout)
            #expect(lines.count == 9000 + 4000 + 9 + 9000)
            for jobs in ["2", "5"] {
                let many = try EndToEndTests.run(["--jobs", jobs] + arguments)
                #expect(many.status == one.status)
                #expect(many.stdout == one.stdout, "--jobs \(jobs)")
                let listed = try EndToEndTests.run(["--jobs", "1", "--files-from", list.path])
                let listedMany = try EndToEndTests.run(["--jobs", jobs, "--files-from", list.path])
                #expect(listedMany.stdout == listed.stdout && !listed.stdout.isEmpty)
                // Standard input: the harness writes all of it before reading, so the lines go to files.
                var piped: [Data] = []
                for count in ["1", jobs] {
                    let out = directory.appendingPathComponent("out-\(count)")
                    _ = FileManager.default.createFile(atPath: out.path, contents: nil)
                    let handle = try FileHandle(forWritingTo: out)
                    let run = try EndToEndTests.run(["--jobs", count], stdin: crawl, stdoutTo: handle)
                    try handle.close()
                    #expect(run.status == 0)
                    piped.append(try Data(contentsOf: out))
                }
                #expect(piped[1] == piped[0] && !piped[0].isEmpty)
            }
        }

        /// A `.warc.gz` on a pipe that goes quiet gets every line of what it sent, the last member's too, with several
        /// jobs (the spans are cut at member headers, and no header closes the last member yet).
        @Test func idlePipeOfMembersGetsItsLastLine() throws {
            let running = try Running(["--jobs", "2"])
            let members = Self.crawl(3, seed: 3)
            running.send(members)
            let lines = running.waitForLines(3)
            #expect(lines.count(where: { $0 == UInt8(ascii: "\n") }) == 3, "lines before the input ends")
            try running.input.fileHandleForWriting.close()
            let result = running.finish()
            #expect(result.status == 0)
            #expect(result.stdout.count(where: { $0 == UInt8(ascii: "\n") }) == 3)
        }

        /// Thousands of records of very different costs (big arrays beside tiny objects and broken bodies) come out in
        /// input order, seq 0, 1, 2, … with their own values, with many jobs and a window that fills up.
        @Test func manyJobsKeepInputOrder() throws {
            var stream = Data()
            var expected: [String] = []
            for i in 0..<3000 {
                switch i % 7 {
                case 0:
                    let big = "[" + Array(repeating: "\(i)", count: 20_000).joined(separator: ",") + "]"
                    stream.append(Self.response(big))
                    expected.append("array")
                case 3:
                    stream.append(Self.response("{\"broken\":"))
                    expected.append("error")
                default:
                    stream.append(Self.response("{\"i\":\(i)}"))
                    expected.append("\(i)")
                }
            }
            // From a file: the harness writes all of stdin before it reads stdout, and these lines would fill the pipe.
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "respdecode-order-\(getpid()).http")
            try stream.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let result = try EndToEndTests.run(["--jobs", "4", file.path])
            #expect(result.status == 0)
            let lines = try TrafficTests.lines(result.stdout)
            #expect(lines.count == 3000)
            for (seq, line) in lines.enumerated() {
                #expect(line["seq"] as? Int == seq)
                switch expected[seq] {
                case "array": #expect((line["value"] as? [Any])?.count == 20_000)
                case "error": #expect(line["ok"] as? Bool == false)
                default: #expect((line["value"] as? [String: Any])?["i"] as? Int == Int(expected[seq]))
                }
                if line["seq"] as? Int != seq { break }
            }
        }

        /// SIGTERM and SIGINT stop reading; the records already read get their lines (none half written), the
        /// partial record after them is left unread, and the exit status says which signal cut the input short.
        @Test(arguments: [(SIGTERM, Int32(143)), (SIGINT, Int32(130))])
        func signalsDrainAndExitWithTheSignal(_ signal: Int32, _ status: Int32) throws {
            let running = try Running(["--jobs", "2"])
            for i in 0..<50 { running.send(Self.response("{\"n\":\(i)}")) }
            running.send(Data("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"half".utf8))
            let before = running.waitForLines(50)
            #expect(before.count(where: { $0 == UInt8(ascii: "\n") }) == 50)
            kill(running.process.processIdentifier, signal)
            let result = running.finish()
            #expect(result.status == status)
            #expect(result.stdout.count(where: { $0 == UInt8(ascii: "\n") }) == 50, "no line for the partial record")
            #expect(result.stdout.last == UInt8(ascii: "\n"))
            #expect(!result.stderr.contains("Fatal"), "\(result.stderr)")
        }

        /// A stop while records are still queued: everything framed before the signal is written, in order.
        @Test func sigtermWhileDecodingWritesEverythingRead() throws {
            // Costly to decode, short to report (a long array cut short: invalidJSON with one byte of body), so that
            // standard output never fills while the test is still writing standard input.
            let running = try Running(["--jobs", "2", "--max-error-body-bytes", "1"])
            var batch = Data()
            let big = "[" + Array(repeating: "1.5", count: 50_000).joined(separator: ",")
            for _ in 0..<40 { batch.append(Self.response(big)) }
            running.send(batch)
            _ = running.waitForLines(1)
            kill(running.process.processIdentifier, SIGTERM)
            let result = running.finish()
            #expect(result.status == 143)
            let lines = try TrafficTests.lines(result.stdout)
            #expect(lines.count >= 1)
            #expect(lines.enumerated().allSatisfy { $0.element["seq"] as? Int == $0.offset })
        }

        /// Input that ended before the signal is not "left unread": the run ends as it would have.
        @Test func sigtermAfterTheEndOfInputIsANormalExit() throws {
            let running = try Running([])
            running.send(Self.response("{}"))
            try running.input.fileHandleForWriting.close()
            _ = running.waitForLines(1)
            let result = running.finish()
            #expect(result.status == 0)
        }

        /// --stats: one summary on standard error at the end; standard output is unchanged.
        @Test func statsSummaryGoesToStandardError() throws {
            let plain = try EndToEndTests.run(["samples/capture.http"])
            let result = try EndToEndTests.run(["--stats", "samples/capture.http"])
            #expect(result.stdout == plain.stdout)
            let lines = try TrafficTests.lines(plain.stdout)
            let ok = lines.filter { $0["ok"] as? Bool == true }.count
            #expect(
                result.stderr.contains("\(lines.count) records, \(ok) ok, \(lines.count - ok) errors"),
                "\(result.stderr)")
            #expect(result.stderr.contains("errors by code: "))
            #expect(result.stderr.contains("by decoder: "))
            #expect(!result.stderr.contains("\r"), "no progress line when standard error is not a terminal")
        }

        /// --stats-interval prints JSON lines while input is idle; SIGUSR1 prints one at once.
        @Test func statsLinesOnAnIntervalAndOnSIGUSR1() throws {
            let running = try Running(["--stats-interval", "0.2"])
            running.send(Self.response("{\"a\":1}"))
            _ = running.waitForLines(1)
            usleep(700_000)
            kill(running.process.processIdentifier, SIGUSR1)
            usleep(200_000)
            try running.input.fileHandleForWriting.close()
            let result = running.finish()
            #expect(result.status == 0)
            #expect(result.stdout.count(where: { $0 == UInt8(ascii: "\n") }) == 1, "statistics never go to stdout")
            let statsLines = result.stderr.split(separator: "\n").filter { $0.hasPrefix("{\"stats\":") }
            #expect(statsLines.count >= 3, "\(result.stderr)")
            let last = try #require(statsLines.last)
            let object = try JSONSerialization.jsonObject(with: Data(last.utf8)) as? [String: Any]
            let stats = try #require(object?["stats"] as? [String: Any])
            #expect(stats["records"] as? Int == 1)
            #expect(stats["ok"] as? Int == 1)
            #expect((stats["byDecoder"] as? [String: Any])?["json"] != nil)
            for key in [
                "elapsed", "errors", "errorsByCode", "bytesIn", "decodedBytes", "recordsPerSecond", "mbPerSecond",
            ] {
                #expect(stats[key] != nil, "\(key)")
            }
        }

        /// On a terminal (a pseudo-terminal from util-linux `script`), a progress line is redrawn in place while input
        /// is idle and erased at the end; the statistics test above shows it is never drawn when stderr is a pipe.
        @Test(
            .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"), "util-linux script is absent")
        )
        func progressLineOnATerminal() throws {
            // Under a sanitizer the binary takes about a second to start (TSan: one draw only in 1.3 s), so it idles
            // longer.
            let idle = HostileDocumentTests.sanitized ? "4" : "1.3"
            let command = "(cat samples/capture.http; sleep \(idle)) | '\(EndToEndTests.binary.path)' > /dev/null"
            let result = try EndToEndTests.run(
                ["-qec", "sh -c \"\(command)\"", "/dev/null"], executable: "/usr/bin/script")
            #expect(result.status == 0)
            let screen = String(decoding: result.stdout, as: UTF8.self)
            let draws = screen.components(separatedBy: "\r\u{1B}[K").filter { $0.contains("records/s") }
            #expect(draws.count >= 2, "\(screen.debugDescription)")
            #expect(draws.first?.hasPrefix("respdecode: \(11) records, 4 errors") == true, "\(screen.debugDescription)")
            #expect(screen.hasSuffix("\r\u{1B}[K"), "the line is erased at the end: \(screen.debugDescription)")
        }

        @Test(arguments: [
            ["--jobs", "0"], ["--jobs", "2000"], ["--stats-interval", "0"], ["--stats-interval", "-1"],
        ])
        func badRuntimeOptionsExitTwo(_ arguments: [String]) throws {
            let result = try EndToEndTests.run(arguments + ["samples/capture.http"])
            #expect(result.status == 2)
            #expect(result.stdout.isEmpty)
        }
    }
}
