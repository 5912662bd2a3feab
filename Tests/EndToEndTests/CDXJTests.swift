import Foundation
import RespDecodeTestSupport
import Testing

/// Record extents, CDXJ indexes and revisits (issue 19, points 5 and 6; docs/output.md#cdxj-index,
/// docs/output.md#revisits).
extension EndToEndTests {
    @Suite("CDXJ and revisits")
    struct CDXJTests {
        /// Where cdxj-indexer is, if it is on PATH.
        static let cdxjIndexer: String? = {
            for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") {
                let path = "\(directory)/cdxj-indexer"
                if FileManager.default.isExecutableFile(atPath: path) { return path }
            }
            return nil
        }()

        /// `"length": "…", ` taken out of every line, for as long as the WARC framer does not fill lengths (the
        /// lenient branch fills them): then the lines are compared whole.
        static func comparable(_ text: String, withLengths: Bool) -> [String] {
            let lines = text.split(separator: "\n").map(String.init)
            guard !withLengths else { return lines }
            return lines.map { $0.replacing(#/"length": "[0-9]+", /#, with: "") }
        }

        /// Compares our index of `path` with `expected`, whole once lengths are filled, else all but `length`.
        static func expectSameIndex(_ path: String, expected: String, options: [String] = ["--output", "cdxj"]) throws {
            let ours = try EndToEndTests.run(options + [path])
            #expect(ours.status == 0, "\(path): \(ours.stderr)")
            let text = String(decoding: ours.stdout, as: UTF8.self)
            let withLengths = text.contains(#""length": ""#)
            let a = comparable(text, withLengths: withLengths)
            let b = comparable(expected, withLengths: withLengths)
            #expect(a.count == b.count, "\(path): \(a.count) index lines, cdxj-indexer \(b.count)")
            for (x, y) in zip(a, b) where x != y {
                Issue.record("\(path):\n ours:         \(x)\n cdxj-indexer: \(y)")
                break
            }
        }

        static var trafficIndex: String {
            get throws {
                try String(
                    contentsOf: EndToEndTests.packageRoot.appendingPathComponent(
                        "Tests/CDXJExpectations/traffic.warc.gz.cdxj"), encoding: .utf8)
            }
        }

        /// samples/traffic.warc.gz against the index cdxj-indexer 1.5.0 wrote for it (Tests/CDXJExpectations).
        @Test func theSampleIndexIsCdxjIndexers() throws {
            let expected = try Self.trafficIndex
            #expect(expected.split(separator: "\n").count == 9)
            try Self.expectSameIndex("samples/traffic.warc.gz", expected: expected)
        }

        /// Every WARC and ARC of the corpora that cdxj-indexer indexes without an error, against its output now (when
        /// it is on PATH). Left out: files it fails on, zstd (it does not read them), and files with records warcio
        /// indexes but our framer makes failures (docs/framings.md#warc, docs/framings.md#arc), which no index line
        /// stands for: example-trunc.warc (a response not followed by CRLF CRLF), warcio's bad.arc (Archive-lengths
        /// `-1` and `abc`, which warcio reads as 0, and a 1-byte block that is no HTTP head) and
        /// example-space-in-url.arc (an Archive-length 12 bytes past the end of the file, which warcio reads short).
        @Test(
            .enabled(
                if: HostileDocumentTests.corporaAvailable && cdxjIndexer != nil, "needs the corpora and cdxj-indexer"))
        func theCorporaIndexesAreCdxjIndexers() throws {
            let excluded = ["/example-trunc.warc", "/warcio/data/bad.arc", "/example-space-in-url.arc"]
            let files = HostileDocumentTests.allFiles(under: "warc").filter { file in
                [".warc", ".warc.gz", ".arc", ".arc.gz"].contains { file.hasSuffix($0) }
                    && !excluded.contains { file.hasSuffix($0) }
            }
            var compared = 0
            var comparedARC = 0
            for file in files {
                let path = HostileDocumentTests.corpora.appendingPathComponent(file).path
                let indexer = try EndToEndTests.run([path], executable: Self.cdxjIndexer ?? "cdxj-indexer")
                guard indexer.status == 0 else { continue }
                try Self.expectSameIndex(path, expected: String(decoding: indexer.stdout, as: UTF8.self))
                compared += 1
                if file.hasSuffix(".arc") || file.hasSuffix(".arc.gz") { comparedARC += 1 }
            }
            #expect(compared >= 19)
            // aut's example.arc.gz, warcio's example.arc and example.arc.gz, webarchive-discovery's .arc.gz.
            #expect(comparedARC >= 4)
        }

        /// An ARC file made here, against cdxj-indexer's index of it (when it is on PATH): the filedesc record left
        /// out, a chunked response (digest over the chunked payload), a dns: record, an http record with an empty
        /// block, https with a 404, Archive-dates short, out of range and not all digits.
        @Test(.enabled(if: cdxjIndexer != nil, "needs cdxj-indexer"))
        func aSyntheticARCIndexIsCdxjIndexers() throws {
            func record(_ url: String, _ date: String, _ type: String, _ block: String) -> String {
                "\(url) 192.0.2.1 \(date) \(type) \(block.utf8.count)\n\(block)\n"
            }
            let arc =
                record(
                    "filedesc://synthetic.arc", "20240101000000", "text/plain",
                    "1 0 test\nURL IP-address Archive-date Content-type Archive-length\n")
                + record(
                    "http://example.com/chunked", "20240102030405", "text/plain",
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nTransfer-Encoding: chunked\r\n\r\n"
                        + "3\r\nabc\r\n0\r\n\r\n")
                + record("dns:example.com", "2024022930", "text/dns", "20240229 example.com. 60 IN A 192.0.2.1\n")
                + record("http://example.com/empty", "19991", "text/html", "")
                + record(
                    "https://www.example.com/missing?b=2&a=1", "2_0240+1", "text/html",
                    "HTTP/1.0 404 Not Found\r\nContent-Type: text/html;charset=x\r\n\r\n<p>gone</p>")
            let file = EngineTests.temporary("synthetic.arc")
            defer { try? FileManager.default.removeItem(at: file) }
            try Data(arc.utf8).write(to: file)
            let indexer = try EndToEndTests.run([file.path], executable: Self.cdxjIndexer ?? "cdxj-indexer")
            #expect(indexer.status == 0)
            #expect(indexer.stdout.split(separator: UInt8(ascii: "\n")).count == 4)
            let ours = try EndToEndTests.run(["--output", "cdxj", file.path])
            #expect(ours.status == 0)
            #expect(String(decoding: ours.stdout, as: UTF8.self) == String(decoding: indexer.stdout, as: UTF8.self))
        }

        /// webarchive-discovery's plain .arc has no line feed after its records, which warcio cannot read; we read
        /// it: the lines cdxj-indexer writes for the same records in the .arc.gz, but for the extents (header line to
        /// end of block, one after another) and the file name.
        @Test(.enabled(if: HostileDocumentTests.corporaAvailable, "needs the corpora"))
        func thePlainARCWithoutSeparatorsIsIndexed() throws {
            let name = "warc/webarchive-discovery/IAH-20080430204825-00000-blackbook-truncated"
            let expected = try String(
                contentsOf: HostileDocumentTests.corpora.appendingPathComponent(
                    "warc/webarchive-discovery/expected-index-warcio-1.8.1/"
                        + "IAH-20080430204825-00000-blackbook-truncated.arc.gz.jsonl"), encoding: .utf8)
            let plain = try EndToEndTests.run([
                "--output", "cdxj", HostileDocumentTests.corpora.appendingPathComponent(name + ".arc").path,
            ])
            let gzip = try EndToEndTests.run([
                "--output", "cdxj", HostileDocumentTests.corpora.appendingPathComponent(name + ".arc.gz").path,
            ])
            #expect(plain.status == 0 && gzip.status == 0)
            func lines(_ data: Data) -> [Substring] { String(decoding: data, as: UTF8.self).split(separator: "\n") }
            let plainLines = lines(plain.stdout)
            let gzipLines = lines(gzip.stdout)
            // warcio's index of the .arc.gz: a warcinfo (the filedesc record), then the 8 records, whose URLs ours has.
            let urls = try expected.split(separator: "\n").dropFirst().map {
                try #require(JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: String])["warc-target-uri"]
            }
            #expect(urls.count == 8 && plainLines.count == 8 && gzipLines.count == 8)
            for (line, url) in zip(plainLines, urls) {
                #expect(line.contains(#"{"url": ""# + (url ?? "?") + #"", "#))
            }
            func withoutExtent(_ line: Substring) -> String { String(line.replacing(#/, "length": .*/#, with: "")) }
            #expect(plainLines.map(withoutExtent) == gzipLines.map(withoutExtent))
            var next = 1399 // the filedesc record's header line and block
            for line in plainLines {
                let match = try #require(
                    line.firstMatch(of: #/"length": "([0-9]+)", "offset": "([0-9]+)", "filename": "([^"]*)"}$/#))
                #expect(Int(match.2) == next && match.3 == "IAH-20080430204825-00000-blackbook-truncated.arc")
                next += Int(match.1) ?? 0
            }
            #expect(next == 87348)
        }

        /// --index-file: one pass gives the decoded lines on standard output (of cdxj-indexer's record types by
        /// default) and the index in the file, the same as the two runs apart.
        @Test func theIndexFileIsWrittenInTheSamePass() throws {
            let index = EngineTests.temporary("index.cdxj")
            defer { try? FileManager.default.removeItem(at: index) }
            let both = try EndToEndTests.run(["--index-file", index.path, "samples/traffic.warc.gz"])
            let lines = try EndToEndTests.run([
                "--warc-types", "response,resource,metadata,revisit", "samples/traffic.warc.gz",
            ])
            let cdxj = try EndToEndTests.run(["--output", "cdxj", "samples/traffic.warc.gz"])
            #expect(both.status == 0 && lines.status == 0 && cdxj.status == 0)
            #expect(both.stdout == lines.stdout)
            #expect(try Data(contentsOf: index) == cdxj.stdout)
            try Self.expectSameIndex("samples/traffic.warc.gz", expected: try Self.trafficIndex)
            // The revisit got its line in the normal output.
            #expect(try TrafficTests.lines(both.stdout).contains { $0["warcType"] as? String == "revisit" })
        }

        @Test func anIndexFileThatCannotBeOpenedIsAnOutputFailure() throws {
            let result = try EndToEndTests.run(["--index-file", "/nonexistent/dir/x.cdxj", "samples/traffic.warc.gz"])
            #expect(result.status == 3)
            #expect(result.stderr.contains("cannot open the index file"))
        }

        // MARK: - Revisits

        /// One WARC record, its Content-Length counted.
        static func warcRecord(_ fields: [(String, String)], block: String) -> String {
            var text = "WARC/1.1\r\n"
            for (name, value) in fields { text += "\(name): \(value)\r\n" }
            return text + "Content-Length: \(block.utf8.count)\r\n\r\n\(block)\r\n\r\n"
        }

        static func response(_ id: Int, digest: String, body: String) -> String {
            warcRecord(
                [
                    ("WARC-Type", "response"), ("WARC-Record-ID", "<urn:uuid:r\(id)>"),
                    ("WARC-Date", "2024-01-0\(id)T00:00:00Z"), ("WARC-Target-URI", "http://example.com/\(id)"),
                    ("WARC-Payload-Digest", digest), ("Content-Type", "application/http; msgtype=response"),
                ],
                block:
                    "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
        }

        static func revisit(_ id: Int, digest: String, refersTo: Int) -> String {
            warcRecord(
                [
                    ("WARC-Type", "revisit"), ("WARC-Record-ID", "<urn:uuid:v\(id)>"),
                    ("WARC-Date", "2024-02-0\(id)T00:00:00Z"), ("WARC-Target-URI", "http://example.com/\(refersTo)"),
                    ("WARC-Refers-To", "<urn:uuid:r\(refersTo)>"),
                    ("WARC-Refers-To-Target-URI", "http://example.com/\(refersTo)"),
                    ("WARC-Refers-To-Date", "2024-01-0\(refersTo)T00:00:00Z"),
                    ("WARC-Profile", "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"),
                    ("WARC-Payload-Digest", digest), ("Content-Type", "application/http; msgtype=response"),
                ],
                block: "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n")
        }

        /// response A, response B, revisit of A, revisit of an unseen digest, revisit of B.
        static let revisitWARC =
            response(1, digest: "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", body: "a")
            + response(2, digest: "sha1:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB", body: "b")
            + revisit(3, digest: "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", refersTo: 1)
            + revisit(4, digest: "sha1:CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC", refersTo: 9)
            + revisit(5, digest: "sha1:BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB", refersTo: 2)

        static func revisitLines(_ options: [String]) throws -> [[String: Any]] {
            let file = EngineTests.temporary("revisits.warc")
            defer { try? FileManager.default.removeItem(at: file) }
            try Data(revisitWARC.utf8).write(to: file)
            let result = try EndToEndTests.run(options + [file.path])
            #expect(result.status == 0, "\(result.stderr)")
            return try TrafficTests.lines(result.stdout).map {
                var line = $0
                if var origin = line["revisitOf"] as? [String: Any] {
                    origin["input"] = (origin["input"] as? String) == file.path ? "FILE" : origin["input"]
                    line["revisitOf"] = origin
                }
                return line
            }
        }

        /// `revisitOf` as `SEQ INPUT OFFSET`.
        static func origin(_ line: [String: Any]) -> String? {
            guard let origin = line["revisitOf"] as? [String: Any] else { return nil }
            return
                "\(origin["seq"] as? Int ?? -1) \(origin["input"] as? String ?? "-") \(origin["offset"] as? Int ?? -1)"
        }

        /// A revisit line says what it refers to and its payload digest; revisitOf only with --resolve-revisits.
        @Test func revisitsSayWhatTheyReferTo() throws {
            let lines = try Self.revisitLines(["--warc-types", "response,revisit"])
            #expect(lines.count == 5)
            let revisit = lines[2]
            #expect(revisit["warcType"] as? String == "revisit")
            #expect(
                (revisit["refersTo"] as? [String: String])
                    == [
                        "recordId": "<urn:uuid:r1>", "targetURI": "http://example.com/1",
                        "date": "2024-01-01T00:00:00Z",
                    ])
            #expect(revisit["payloadDigest"] as? String == "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
            #expect(lines.allSatisfy { $0["revisitOf"] == nil })
            // Responses keep their lines as before: no payloadDigest, no refersTo.
            #expect(lines[0]["payloadDigest"] == nil && lines[0]["refersTo"] == nil)
        }

        @Test func resolvedRevisitsNameTheResponseLine() throws {
            let lines = try Self.revisitLines(["--warc-types", "response,revisit", "--resolve-revisits"])
            #expect(lines.count == 5)
            let offsets = lines.map { $0["offset"] as? Int ?? -1 }
            #expect(Self.origin(lines[2]) == "0 FILE \(offsets[0])")
            #expect(lines[3]["revisitOf"] == nil, "an unseen digest stays unresolved")
            #expect(Self.origin(lines[4]) == "1 FILE \(offsets[1])")
            // The same with one job or many: resolution follows input order.
            let oneJob = try Self.revisitLines([
                "--warc-types", "response,revisit", "--resolve-revisits", "--jobs", "1",
            ])
            #expect(oneJob.map(Self.origin) == lines.map(Self.origin))
        }

        /// --max-revisit-digests 1: B's digest pushed A's out, so the revisit of A is not resolved, B's is.
        @Test func theDigestLimitForgetsTheOldest() throws {
            let lines = try Self.revisitLines([
                "--warc-types", "response,revisit", "--resolve-revisits", "--max-revisit-digests", "1",
            ])
            #expect(lines[2]["revisitOf"] == nil)
            #expect(Self.origin(lines[4])?.hasPrefix("1 FILE ") == true)
        }

        /// frame carries refersTo, payloadDigest and revisitOf; --input ndjson gives the direct run's lines.
        @Test func revisitFieldsTravelThroughFrame() throws {
            let file = EngineTests.temporary("revisits-frame.warc")
            let framedFile = EngineTests.temporary("revisits-frame.ndjson")
            defer {
                try? FileManager.default.removeItem(at: file)
                try? FileManager.default.removeItem(at: framedFile)
            }
            try Data(Self.revisitWARC.utf8).write(to: file)
            let options = ["--warc-types", "response,revisit", "--resolve-revisits"]
            let framed = try EndToEndTests.run(["frame"] + options + [file.path])
            #expect(framed.status == 0)
            try framed.stdout.write(to: framedFile)
            let framedLines = try TrafficTests.lines(framed.stdout)
            #expect(framedLines[0]["payloadDigest"] as? String == "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
            let viaFrame = try TrafficTests.lines(
                try EndToEndTests.run(options + ["--input", "ndjson", framedFile.path]).stdout)
            let direct = try TrafficTests.lines(try EndToEndTests.run(options + [file.path]).stdout)
            #expect(viaFrame.count == direct.count)
            for (x, y) in zip(viaFrame, direct) {
                #expect(EngineTests.content(x) == EngineTests.content(y))
            }
            #expect(Self.origin(viaFrame[2]) == Self.origin(direct[2]))
            #expect(Self.origin(direct[2])?.hasPrefix("0 \(file.path) ") == true)
        }
    }
}
