import Foundation
import Testing

/// respdecode as a stage of a line-record engine (issue 8): `frame` then `--input ndjson` gives a direct run's lines,
/// `--files-from` decodes the files a list names, and the engine contract -- one line per record line, in order, `id`
/// echoed, a non-zero exit whenever the run stopped before the end of its input, nothing written but standard output.
extension EndToEndTests {
    @Suite("Line-record engines")
    struct EngineTests {
        static let samples = [
            "samples/capture.http", "samples/documents.http", "samples/images.http", "samples/traffic.warc.gz",
            "samples/traffic.har", "samples/traffic.ndjson",
        ]

        /// A line's keys minus those that say where it was read: `seq`, `offset`, `length` (an archive record's
        /// extent in its input, which `frame` writes beside the id), `input`, and `id` (which `frame` makes up for
        /// records that had none).
        static func content(_ line: [String: Any]) -> NSDictionary {
            var line = line
            for key in ["seq", "offset", "length", "input", "id"] { line[key] = nil }
            return line as NSDictionary
        }

        static func temporary(_ name: String) -> URL {
            FileManager.default.temporaryDirectory.appendingPathComponent("respdecode-engine-\(getpid())-\(name)")
        }

        /// Frames `path` into a file, decodes that as ndjson, decodes `path` directly, and compares line by line.
        /// - Returns: how many lines were compared.
        @discardableResult
        static func frameThenDecodeEqualsDirect(_ path: String, options: [String] = []) throws -> Int {
            let framedFile = temporary("framed.ndjson")
            defer { try? FileManager.default.removeItem(at: framedFile) }
            let framed = try EndToEndTests.run(["frame", path])
            #expect(framed.status == 0, "frame \(path): \(framed.stderr)")
            try framed.stdout.write(to: framedFile)
            let viaFrame = try EndToEndTests.run(options + ["--input", "ndjson", framedFile.path])
            let direct = try EndToEndTests.run(options + [path])
            #expect(viaFrame.status == direct.status, "\(path)")
            let a = try TrafficTests.lines(viaFrame.stdout)
            let b = try TrafficTests.lines(direct.stdout)
            #expect(a.count == b.count, "\(path): \(a.count) lines through frame, \(b.count) direct")
            for (index, (x, y)) in zip(a, b).enumerated() where content(x) != content(y) {
                Issue.record("\(path) line \(index): through frame \(x), direct \(y)")
                break
            }
            // Every framed record has its own id: the input and its offset.
            let framedLines = try TrafficTests.lines(framed.stdout)
            let ids = framedLines.compactMap { $0["id"] as? String }
            #expect(ids.count == framedLines.count)
            #expect(Set(ids).count == ids.count, "ids are unique in \(path)")
            return a.count
        }

        @Test(arguments: samples)
        func frameThenDecodeGivesTheDirectLines(_ sample: String) throws {
            try Self.frameThenDecodeEqualsDirect(sample, options: ["--sniff"])
        }

        /// Options of decoding apply alike: the digest check's verdict and --strict-digests, --keep-nulls, --inflate.
        @Test func decodingOptionsApplyToFramedRecords() throws {
            try Self.frameThenDecodeEqualsDirect(
                "samples/traffic.warc.gz", options: ["--strict-digests", "--keep-nulls"])
            try Self.frameThenDecodeEqualsDirect("samples/images.http", options: ["--inflate", "--strict"])
        }

        /// Every WARC, HAR and raw HTTP file of the corpora, broken ones included: framing failures travel as ndjson
        /// lines and come back as the same error lines.
        @Test(.enabled(if: HostileDocumentTests.corporaAvailable, "../shared/corpora is absent"))
        func frameThenDecodeOverTheCorpora() throws {
            let files =
                (HostileDocumentTests.allFiles(under: "warc") + HostileDocumentTests.allFiles(under: "har")
                + HostileDocumentTests.allFiles(under: "http"))
                // mitmproxy's expected flows, in its own JSON: not inputs.
                .filter { !($0.hasPrefix("har/mitmproxy/har_files/") && $0.hasSuffix(".json")) }
            #expect(files.count > 100)
            var lines = 0
            for file in files {
                lines += try Self.frameThenDecodeEqualsDirect(
                    HostileDocumentTests.corpora.appendingPathComponent(file).path)
            }
            #expect(lines > 400)
        }

        @Test func framedIdsNameTheInputAndOffset() throws {
            let result = try EndToEndTests.run(["frame", "samples/capture.http"])
            let framed = try TrafficTests.lines(result.stdout)
            let direct = try TrafficTests.lines(try EndToEndTests.run(["samples/capture.http"]).stdout)
            #expect(
                framed.map { $0["id"] as? String }
                    == direct.map { "samples/capture.http:\($0["offset"] as? Int ?? -1)" })
            let stdin = try EndToEndTests.run(["frame"], stdin: try EndToEndTests.sample("capture.http"))
            #expect(try TrafficTests.lines(stdin.stdout).first?["id"] as? String == "-:0")
        }

        /// --files-from: the named files in turn, each detected on its own and named as `input`; the same lines as
        /// naming them on the command line. Blank lines are skipped; file: URIs are paths; the last name needs no LF.
        @Test func filesFromDecodesEveryNamedFile() throws {
            let list = Self.temporary("list.txt")
            defer { try? FileManager.default.removeItem(at: list) }
            let root = EndToEndTests.packageRoot.path
            let names = ["samples/capture.http", "", "file://\(root)/samples/traffic.warc.gz\r", "samples/traffic.har"]
            try Data(names.joined(separator: "\n").utf8).write(to: list)
            let listed = try EndToEndTests.run(["--files-from", list.path])
            let direct = try EndToEndTests.run([
                "samples/capture.http", "\(root)/samples/traffic.warc.gz", "samples/traffic.har",
            ])
            #expect(listed.status == 0, "\(listed.stderr)")
            #expect(listed.stdout == direct.stdout)
            // From standard input, after a FILE argument; and framing them.
            let piped = try EndToEndTests.run(
                ["samples/images.http", "--files-from", "-"], stdin: Data("samples/traffic.ndjson\n".utf8))
            let pipedDirect = try EndToEndTests.run(["samples/images.http", "samples/traffic.ndjson"])
            #expect(piped.status == 0 && piped.stdout == pipedDirect.stdout)
            let frames = try EndToEndTests.run(["frame", "--files-from", list.path])
            let frameLines = try TrafficTests.lines(frames.stdout)
            #expect(frameLines.count == (try TrafficTests.lines(direct.stdout)).count)
            #expect((frameLines.first?["id"] as? String)?.hasPrefix("samples/capture.http:") == true)
        }

        /// A name that cannot be read, or is no local file, is an I/O failure (exit 3, a message), after every other
        /// file has been decoded: an engine fails the task rather than lose the file's records silently.
        @Test func filesFromWithAnUnreadableNameExitsThree() throws {
            let result = try EndToEndTests.run(
                ["--files-from", "-"],
                stdin: Data("samples/capture.http\nno/such.warc\ns3://bucket/a.warc.gz\nsamples/traffic.har\n".utf8))
            #expect(result.status == 3)
            #expect(result.stderr.contains("cannot open no/such.warc"), "\(result.stderr)")
            #expect(result.stderr.contains("does not fetch s3 URIs"), "\(result.stderr)")
            let direct = try EndToEndTests.run(["samples/capture.http", "samples/traffic.har"])
            #expect(result.stdout == direct.stdout)
            let missingList = try EndToEndTests.run(["--files-from", "no/such/list"])
            #expect(missingList.status == 3 && missingList.stdout.isEmpty)
            let both = try EndToEndTests.run(["--files-from", "-", "-"])
            #expect(both.status == 2 && both.stdout.isEmpty)
        }

        /// One line per record line, in order, each with its id; blank lines carry no record. Twice the same input
        /// gives the same bytes, and nothing but standard output is written (the working directory is unchanged).
        @Test func oneLinePerRecordLineInOrderWithItsId() throws {
            var input = ""
            for i in 0..<5000 {
                switch i % 5 {
                case 0:
                    input +=
                        #"{"id":"r\#(i)","status":200,"headers":[["Content-Type","application/json"]],"body":"{\"i\":\#(i)}"}"#
                case 1: input += #"{"id":"r\#(i)","status":404,"body":"gone"}"#
                case 2:
                    input += #"{"id":"r\#(i)","status":200,"headers":{"Content-Type":"application/json"},"body":"[1,"}"#
                case 3: input += #"{"id":"r\#(i)","status":"broken""#
                default:
                    input += #"{"id":\#(i),"status":200,"headers":[["Content-Type","text/xml"]],"body":"<a>\#(i)</a>"}"#
                }
                input += i % 1000 == 999 ? "\n\n" : "\n"
            }
            let file = Self.temporary("records.ndjson")
            try Data(input.utf8).write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let before = try FileManager.default.contentsOfDirectory(atPath: EndToEndTests.packageRoot.path).sorted()
            let first = try EndToEndTests.run(["--jobs", "2", file.path])
            let second = try EndToEndTests.run(["--jobs", "2", file.path])
            #expect(first.status == 0)
            #expect(first.stdout == second.stdout)
            #expect(
                try FileManager.default.contentsOfDirectory(atPath: EndToEndTests.packageRoot.path).sorted() == before)
            let lines = try TrafficTests.lines(first.stdout)
            #expect(lines.count == 5000)
            #expect(
                lines.map { $0["id"] as? String }
                    == (0..<5000).map { i -> String? in i % 5 == 3 ? nil : i % 5 == 4 ? "\(i)" : "r\(i)" })
            #expect(lines.enumerated().allSatisfy { $0.element["seq"] as? Int == $0.offset })
        }

        /// Stopped before the end of its input -- a signal, or a reader that went away -- the worker exits non-zero,
        /// so that an engine never takes a partial run for a complete one; every line it did write is whole.
        @Test(arguments: [["--input", "ndjson"], ["frame", "--input", "http"]])
        func stoppedEarlyExitsNonZero(_ arguments: [String]) throws {
            let running = try RuntimeTests.Running(arguments)
            let record =
                arguments[0] == "frame"
                ? RuntimeTests.response("{}")
                : Data(#"{"status":200,"headers":[["Content-Type","application/json"]],"body":"{}"}"#.utf8 + [0x0A])
            for _ in 0..<20 { running.send(record) }
            _ = running.waitForLines(20)
            kill(running.process.processIdentifier, SIGTERM)
            let result = running.finish()
            #expect(result.status == 143)
            #expect(result.stdout.count(where: { $0 == UInt8(ascii: "\n") }) == 20)
            #expect(result.stdout.last == UInt8(ascii: "\n"))

            // The reader goes away: exit 3, quietly.
            var many = Data()
            for _ in 0..<100_000 { many.append(record) }
            let file = Self.temporary("many")
            try many.write(to: file)
            defer { try? FileManager.default.removeItem(at: file) }
            let process = Process()
            process.executableURL = EndToEndTests.binary
            process.arguments = arguments + [file.path]
            let output = Pipe()
            process.standardOutput = output
            process.standardError = Pipe()
            try process.run()
            _ = output.fileHandleForReading.readData(ofLength: 100)
            try output.fileHandleForReading.close()
            process.waitUntilExit()
            #expect(process.terminationStatus == 3)
        }
    }
}
