import Foundation
import Testing

/// Captured traffic through the built binary: the WARC, HAR and ndjson samples (made by samples/traffic.py) against
/// their golden outputs, several inputs of different framings in one run, standard input, and the options that
/// only these framings have.
extension EndToEndTests {
    @Suite("Captured traffic")
    struct TrafficTests {
        static func lines(_ data: Data) throws -> [[String: Any]] {
            try data.split(separator: UInt8(ascii: "\n")).map {
                try #require(try JSONSerialization.jsonObject(with: Data($0)) as? [String: Any])
            }
        }

        /// The lines as text.
        static func texts(_ data: Data) -> [String] {
            data.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
        }

        /// `line` without its `"seq":N,` and, with `input`, its `"input":"…",` pieces.
        static func stripped(_ line: String, input: String? = nil) -> String {
            var text = line.replacing(/"seq":\d+,/, with: "")
            if let input { text = text.replacing(#","input":"\#(input)""#, with: "") }
            return text
        }

        static func golden(_ arguments: [String], expected: String) throws {
            let result = try EndToEndTests.run(arguments)
            #expect(result.status == 0)
            #expect(result.stderr.isEmpty, "\(result.stderr)")
            #expect(
                result.stdout == (try EndToEndTests.sample(expected)),
                "\(String(decoding: result.stdout, as: UTF8.self))")
        }

        /// A .warc.gz, one gzip member per record: gzip and br (chunked) bodies, a plist, a PNG with a wrong
        /// payload digest, a JPEG resource record, a 404, a lying Content-Encoding, a cut gzip body, skipped
        /// request/revisit/warcinfo records, and a last member cut in half.
        @Test func goldenWARC() throws {
            try Self.golden(["samples/traffic.warc.gz"], expected: "traffic.warc.expected.ndjson")
        }

        /// A HAR: an already-decoded body under Content-Encoding: gzip, a base64 PNG, content.mimeType standing in
        /// for a missing header, a HEAD request, a request without response, invalid JSON.
        @Test func goldenHAR() throws {
            try Self.golden(["samples/traffic.har"], expected: "traffic.har.expected.ndjson")
        }

        /// ndjson records with `--sniff`: header lists and objects, text and base64 bodies, a gzip body undone, a
        /// record without Content-Type sniffed as XML, a bad line among good ones.
        @Test func goldenNDJSON() throws {
            try Self.golden(["--sniff", "samples/traffic.ndjson"], expected: "traffic.ndjson.expected.ndjson")
        }

        /// Several inputs of different framings in one run: each detected on its own, `input` naming it, `seq`
        /// running on; the lines are exactly each file's own lines in turn.
        @Test func eachInputDetectedOnItsOwn() throws {
            let files = ["samples/traffic.har", "samples/capture.http", "samples/traffic.warc.gz"]
            let result = try EndToEndTests.run(files)
            #expect(result.status == 0)
            #expect(result.stderr.isEmpty, "\(result.stderr)")
            let all = try Self.lines(result.stdout)
            let allTexts = Self.texts(result.stdout)
            var seq = 0
            for file in files {
                let alone = Self.texts(try EndToEndTests.run([file]).stdout)
                #expect(!alone.isEmpty)
                for line in alone {
                    guard seq < all.count else {
                        Issue.record("\(file): line \(seq) missing")
                        return
                    }
                    #expect(all[seq]["input"] as? String == file)
                    #expect(all[seq]["seq"] as? Int == seq)
                    #expect(Self.stripped(allTexts[seq]) == Self.stripped(line), "\(file) line \(seq)")
                    seq += 1
                }
            }
            #expect(seq == all.count)
        }

        /// A WARC on standard input (no seeking), and the same with `--input warc`: the lines of the file run,
        /// without `input`.
        @Test func warcFromStandardInput() throws {
            let file = Self.texts(try EndToEndTests.run(["samples/traffic.warc.gz"]).stdout)
            for arguments in [[], ["--input", "warc"]] {
                let result = try EndToEndTests.run(arguments, stdin: try EndToEndTests.sample("traffic.warc.gz"))
                #expect(result.status == 0)
                let piped = Self.texts(result.stdout)
                #expect(piped.count == file.count)
                #expect(!piped.joined().contains("\"input\""))
                for (a, b) in zip(piped, file) {
                    #expect(Self.stripped(a) == Self.stripped(b, input: "samples/traffic.warc.gz"))
                }
            }
        }

        /// A pipe that sends the first bytes and pauses (`W`, then the rest): detection waits for enough bytes to
        /// decide, for each framing, and the lines are those of the file.
        @Test func detectionWaitsForASlowPipe() throws {
            for (file, split) in [("traffic.warc.gz", 1), ("traffic.har", 2), ("traffic.ndjson", 1)] {
                let data = try EndToEndTests.sample(file)
                let path = EndToEndTests.packageRoot.appendingPathComponent("samples/\(file)").path
                let script = "head -c \(split) \"$1\"; sleep 0.3; tail -c +\(split + 1) \"$1\""
                let result = try EndToEndTests.run(
                    ["-c", "(\(script)) | \"$0\" --sniff", EndToEndTests.binary.path, path], executable: "/bin/sh")
                #expect(result.status == 0, "\(file)")
                let direct = try EndToEndTests.run(["--sniff"], stdin: data)
                #expect(result.stdout == direct.stdout, "\(file): \(String(decoding: result.stdout, as: UTF8.self))")
            }
        }

        /// `--warc-types` chooses what becomes a line; the default skips request, revisit and warcinfo records.
        @Test func warcTypes() throws {
            let standard = try Self.lines(try EndToEndTests.run(["samples/traffic.warc.gz"]).stdout)
            let all = try Self.lines(try EndToEndTests.run(["--warc-types", "all", "samples/traffic.warc.gz"]).stdout)
            #expect(all.count == standard.count + 3)
            let types = all.compactMap { $0["warcType"] as? String }
            #expect(types.filter { $0 == "request" }.count == 1)
            #expect(types.filter { $0 == "revisit" }.count == 1)
            #expect(types.filter { $0 == "warcinfo" }.count == 1)
            let requests = try Self.lines(
                try EndToEndTests.run(["--warc-types", "request", "samples/traffic.warc.gz"]).stdout)
            // The request record, and the cut last member: a framing error is a line whatever the type.
            #expect(requests.compactMap { $0["warcType"] as? String }.contains("request"))
            #expect(requests.count == 2)
            let bad = try EndToEndTests.run(["--warc-types", "response,bogus", "samples/traffic.warc.gz"])
            #expect(bad.status == 2)
            #expect(bad.stdout.isEmpty)
        }

        /// A wrong payload digest is `"digest":"mismatch"`; `--strict-digests` makes it a `digestMismatch` error
        /// beside the value; `--no-digest-check` leaves `digest` out.
        @Test func digests() throws {
            let url = "https://cdn.example/dot.png"
            func line(_ arguments: [String]) throws -> [String: Any] {
                let lines = try Self.lines(try EndToEndTests.run(arguments + ["samples/traffic.warc.gz"]).stdout)
                return try #require(lines.first { $0["url"] as? String == url })
            }
            let plain = try line([])
            #expect(plain["digest"] as? String == "mismatch")
            #expect(plain["ok"] as? Bool == true)
            let strict = try line(["--strict-digests"])
            #expect(strict["ok"] as? Bool == false)
            #expect((strict["error"] as? [String: Any])?["code"] as? String == "digestMismatch")
            #expect(strict["value"] != nil)
            let unchecked = try line(["--no-digest-check"])
            #expect(unchecked["digest"] == nil)
            let all = try Self.lines(try EndToEndTests.run(["samples/traffic.warc.gz"]).stdout)
            #expect(all.filter { $0["digest"] as? String == "ok" }.count >= 5)
        }

        /// Without `--sniff` a record without Content-Type stays with the raw decoder; with it, the body's first
        /// bytes choose, and the line says so.
        @Test func sniffing() throws {
            let plain = try Self.lines(try EndToEndTests.run(["samples/traffic.ndjson"]).stdout)
            let sniffed = try Self.lines(try EndToEndTests.run(["--sniff", "samples/traffic.ndjson"]).stdout)
            let before = try #require(plain.first { $0["id"] as? String == "r4" })
            let after = try #require(sniffed.first { $0["id"] as? String == "r4" })
            #expect(before["decoder"] as? String == "raw")
            #expect(before["sniffed"] == nil)
            #expect(after["decoder"] as? String == "xml")
            #expect(after["contentType"] as? String == "application/xml")
            #expect(after["sniffed"] as? Bool == true)
        }
    }
}
