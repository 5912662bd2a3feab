import Foundation
import RespDecodeTestSupport
import Testing

/// Inputs that are not `.warc.gz`, read from regular files, are framed on the workers in pieces, several inputs at
/// once (Runtime/FramingChain.swift, docs/framings.md#several-inputs-at-once): the output is the one job's, byte for
/// byte, whatever the framing, the sizes, a missing file or a record cut short.
extension EndToEndTests.RuntimeTests {
    /// `count` responses of every framing's shape: JSON bodies of 0.1-4 KB with a few larger (64-300 KB) ones, so
    /// that pieces end inside records and after many.
    static func bodies(_ count: Int, seed: UInt64) -> [String] {
        var random = SplitMix64(seed: seed)
        return (0..<count).map { n in
            let size = n % 211 == 5 ? 5_000 + Int(random.next() % 30_000) : 10 + Int(random.next() % 400)
            let numbers = (0..<size).map { _ in String(random.next() % 100_000) }
            return "{\"seed\":\(seed),\"n\":\(n),\"values\":[\(numbers.joined(separator: ","))]}"
        }
    }

    /// A new scratch folder named `name` and the process id; the caller removes it.
    static func scratchDirectory(_ name: String) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("\(name)-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    /// One plain WARC of `records` responses per seed, written in `directory` as SEED.warc; their paths.
    static func warcFiles(in directory: URL, seeds: ClosedRange<UInt64>, records: Int) throws -> [String] {
        try seeds.map { seed in
            let url = directory.appendingPathComponent("\(seed).warc")
            try plainWARC(bodies(records, seed: seed), seed: seed).write(to: url)
            return url.path
        }
    }

    static func httpStream(_ bodies: [String]) -> Data {
        var stream = Data()
        for body in bodies { stream.append(Self.response(body)) }
        return stream
    }

    static func plainWARC(_ bodies: [String], seed: UInt64) -> Data {
        var file = Data()
        for (n, body) in bodies.enumerated() {
            let http = String(decoding: Self.response(body), as: UTF8.self)
            file.append(contentsOf: warcResponse(http, id: "p\(seed)-\(n)", uri: "https://p.test/\(seed)/\(n)"))
        }
        return file
    }

    /// A WARC response record whose block is `http`.
    static func warcResponse(_ http: String, id: String, uri: String) -> [UInt8] {
        Array(
            ("WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:\(id)>\r\nWARC-Target-URI: \(uri)\r\n"
                + "Content-Type: application/http; msgtype=response\r\n"
                + "Content-Length: \(http.utf8.count)\r\n\r\n\(http)\r\n\r\n").utf8)
    }

    static func ndjson(_ bodies: [String]) throws -> Data {
        var file = Data()
        for (n, body) in bodies.enumerated() {
            let record: [String: Any] = [
                "id": "r\(n)", "status": 200, "url": "https://n.test/\(n)",
                "headers": [["Content-Type", "application/json"]], "body": body,
            ]
            file.append(try JSONSerialization.data(withJSONObject: record))
            file.append(UInt8(ascii: "\n"))
        }
        return file
    }

    /// Plain WARC, raw HTTP, NDJSON and HAR inputs of several MB each (one cut short inside a record, one missing),
    /// named on the command line and in a list, give with 2 and 5 jobs the bytes, status and messages of one job.
    @Test func plainInputsAtOnceKeepTheOutput() throws {
        let directory = try Self.scratchDirectory("respdecode-chains")
        defer { try? FileManager.default.removeItem(at: directory) }
        func write(_ data: Data, _ name: String) throws -> String {
            let url = directory.appendingPathComponent(name)
            try data.write(to: url)
            return url.path
        }
        let warc = try write(Self.plainWARC(Self.bodies(3000, seed: 11), seed: 11), "a.warc")
        let http = try write(Self.httpStream(Self.bodies(2500, seed: 12)), "b.http")
        let jsonLines = try write(try Self.ndjson(Self.bodies(2000, seed: 13)), "c.ndjson")
        var cut = Self.plainWARC(Self.bodies(1500, seed: 14), seed: 14)
        cut.removeLast(cut.count / 3000)
        let truncated = try write(cut, "d.warc")
        for path in [warc, http, jsonLines] {
            let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? 0
            #expect(size > 2 << 20, "\(path) spans several pieces")
        }
        let missing = directory.appendingPathComponent("missing.warc").path
        let arguments = [
            warc, http, "samples/traffic.har", jsonLines, missing, truncated, "samples/traffic.warc.gz", warc,
            "samples/capture.http",
        ]
        let list = directory.appendingPathComponent("list")
        try arguments.joined(separator: "\n").write(to: list, atomically: true, encoding: .utf8)

        let one = try EndToEndTests.run(["--jobs", "1"] + arguments)
        #expect(one.status == 3, "a missing input fails the run")
        #expect(one.stderr.contains("cannot open \(missing)"))
        let lines = try EndToEndTests.TrafficTests.lines(one.stdout)
        let least = 3000 + 2500 + 2000 + 1400 + 3000
        #expect(lines.count > least)
        #expect(lines.last?["input"] as? String == "samples/capture.http")
        let codes = lines.compactMap { line -> String? in
            guard let error = line["error"] as? [String: Any] else { return nil }
            return error["code"] as? String
        }
        #expect(codes.contains("truncatedRecord"))
        let listedOne = try EndToEndTests.run(["--jobs", "1", "--files-from", list.path])
        #expect(listedOne.stdout == one.stdout)
        for jobs in ["2", "5"] {
            for run in [
                try EndToEndTests.run(["--jobs", jobs] + arguments),
                try EndToEndTests.run(["--jobs", jobs, "--files-from", list.path]),
            ] {
                #expect(run.status == one.status)
                #expect(run.stdout == one.stdout, "--jobs \(jobs)")
                #expect(Self.messages(run.stderr) == Self.messages(one.stderr), "--jobs \(jobs)")
            }
        }
        // The statistics count every input's bytes and records, as with one job.
        let stats = try EndToEndTests.run(["--jobs", "2", "--stats"] + arguments)
        let statsOne = try EndToEndTests.run(["--jobs", "1", "--stats"] + arguments)
        #expect(Self.messages(statsOne.stderr).contains { $0.hasPrefix("  bytes in ") })
        #expect(Self.messages(stats.stderr) == Self.messages(statsOne.stderr))
    }

    /// Standard error without what differs from run to run: log lines' timestamps, and the summary's times and rates
    /// (from " in ").
    static func messages(_ stderr: String) -> [String] {
        stderr.split(separator: "\n").map { line in
            var line = line
            if line.first?.isNumber == true, let space = line.firstIndex(of: " ") { line = line[space...] }
            if line.contains("records/s"), let time = line.range(of: " in ") { line = line[..<time.lowerBound] }
            return String(line)
        }
    }

    /// SIGTERM while several large inputs are framed on the workers: the lines written are those of one job's run, a
    /// prefix of them, every one whole, and the exit says SIGTERM.
    @Test func sigtermWhileInputsAreFramedOnTheWorkers() throws {
        let directory = try Self.scratchDirectory("respdecode-chains-term")
        defer { try? FileManager.default.removeItem(at: directory) }
        // A small file between two large ones: framed to its end while the first is still being framed, it must still
        // give no line once the stop cuts the first short.
        let paths = try [
            Self.warcFiles(in: directory, seeds: 21...21, records: 20_000),
            Self.warcFiles(in: directory, seeds: 22...22, records: 200),
            Self.warcFiles(in: directory, seeds: 23...23, records: 20_000),
        ].flatMap { $0 }
        let out = directory.appendingPathComponent("out")
        let whole = directory.appendingPathComponent("whole")
        for url in [out, whole] { _ = FileManager.default.createFile(atPath: url.path, contents: nil) }
        let complete = try EndToEndTests.run(
            ["--jobs", "1"] + paths + ["samples/pages.http"], stdoutTo: try FileHandle(forWritingTo: whole))
        #expect(complete.status == 0)

        // A pipe after the files: it sends its records at once and stays open, so that they are there to be read when
        // the stop comes.
        let pages = try Data(contentsOf: EndToEndTests.packageRoot.appendingPathComponent("samples/pages.http"))
        let process = Process()
        process.executableURL = EndToEndTests.binary
        process.arguments = ["--jobs", "2"] + paths + ["-"]
        process.currentDirectoryURL = EndToEndTests.packageRoot
        let pipe = Pipe()
        process.standardInput = pipe
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = FileHandle.nullDevice
        try process.run()
        pipe.fileHandleForWriting.write(pages)
        defer { try? pipe.fileHandleForWriting.close() }
        // Until some lines are out, then stop it.
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning && Date() < deadline
            && ((try? FileManager.default.attributesOfItem(atPath: out.path)[.size] as? Int) ?? 0) < 1 << 20
        {
            usleep(2_000)
        }
        let stoppedEarly = process.isRunning
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        let written = try Data(contentsOf: out)
        let expected = try Data(contentsOf: whole)
        if stoppedEarly {
            #expect(process.terminationStatus == 143)
            #expect(written.count < expected.count, "the stop cut the inputs short")
        }
        #expect(written.last == UInt8(ascii: "\n"))
        // (The whole run names its last input; the pipe's lines have none. Neither may show up after a cut.)
        #expect(expected.starts(with: written), "the lines written are one job's, in order")
    }

    /// The input files open at once while six are decoded with two jobs, sampled from /proc: more than one (inputs are
    /// framed side by side) and at most three (two framed on the workers, and the next one being opened).
    @Test func atMostJobsInputsAreFramedAtOnce() throws {
        let directory = try Self.scratchDirectory("respdecode-chains-open")
        defer { try? FileManager.default.removeItem(at: directory) }
        let paths = try Self.warcFiles(in: directory, seeds: 31...36, records: 4000)
        let process = Process()
        process.executableURL = EndToEndTests.binary
        process.arguments = ["--jobs", "2"] + paths
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        var most = 0
        let descriptors = "/proc/\(process.processIdentifier)/fd"
        while process.isRunning {
            let open = (try? FileManager.default.contentsOfDirectory(atPath: descriptors)) ?? []
            let inputs = open.filter { fd in
                (try? FileManager.default.destinationOfSymbolicLink(atPath: "\(descriptors)/\(fd)"))?.hasPrefix(
                    directory.path) == true
            }
            most = max(most, inputs.count)
            usleep(500)
        }
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(most >= 2, "inputs framed side by side")
        #expect(most <= 3, "at most --jobs inputs framed, and one opened")
    }

    /// `-` named twice, standard input redirected from a file: the second waits for the first to be framed (they share
    /// one file offset) and reads nothing, as with one job.
    @Test func standardInputNamedTwice() throws {
        let directory = try Self.scratchDirectory("respdecode-chains-stdin")
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in.http")
        try Self.httpStream(Self.bodies(3000, seed: 41)).write(to: input)
        var outputs: [Data] = []
        for jobs in ["1", "2"] {
            let out = directory.appendingPathComponent("out-\(jobs)")
            _ = FileManager.default.createFile(atPath: out.path, contents: nil)
            let process = Process()
            process.executableURL = EndToEndTests.binary
            process.arguments = ["--jobs", jobs, "-", "-"]
            process.standardInput = try FileHandle(forReadingFrom: input)
            process.standardOutput = try FileHandle(forWritingTo: out)
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            #expect(process.terminationStatus == 0)
            outputs.append(try Data(contentsOf: out))
        }
        #expect(outputs[0].count(where: { $0 == UInt8(ascii: "\n") }) == 3000)
        #expect(outputs[1] == outputs[0])
    }
}
