import Foundation
import RespDecodeTestSupport
import Testing

/// WACZ input through the binary (docs/framings.md#wacz): py-wacz's fixtures give the WARC records their manifest
/// lists, each inner WARC gives the lines it gives on its own, named `FILE.wacz#archive/NAME`; a ZIP that is not a WACZ
/// is one error line; `frame` then `--input ndjson` gives the direct lines.
extension EndToEndTests {
    @Suite("WACZ input")
    struct WACZTests {
        static let folder = "wacz/py-wacz"
        static var corporaAvailable: Bool { Corpora.available }

        static func corpusFile(_ name: String) -> String {
            Corpora.root.appendingPathComponent("\(folder)/\(name)").path
        }

        /// MANIFEST.observed.jsonl: per file, per inner WARC, the records warcio read (`type`, `uri`).
        static func manifest() throws -> [String: [String: [[String: Any]]]] {
            let text = try String(
                contentsOf: Corpora.root.appendingPathComponent("\(folder)/MANIFEST.observed.jsonl"), encoding: .utf8)
            var result: [String: [String: [[String: Any]]]] = [:]
            for line in text.split(separator: "\n") {
                let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                let file = try #require(object["file"] as? String)
                result[file] = (object["warc_records"] as? [String: [[String: Any]]]) ?? [:]
            }
            return result
        }

        static func temporary(_ name: String) -> URL {
            FileManager.default.temporaryDirectory.appendingPathComponent("respdecode-wacz-\(getpid())-\(name)")
        }

        static let everyType = ["--warc-types", "all"]

        /// Every record of every inner WARC, in order, with its type and URI, as warcio read them; each line named
        /// `FILE#archive/NAME`.
        @Test(.enabled(if: corporaAvailable, "../shared/corpora is absent"))
        func fixturesGiveTheManifestsRecords() throws {
            let manifest = try Self.manifest()
            #expect(manifest.count == 5)
            for (file, warcs) in manifest.sorted(by: { $0.key < $1.key }) where !warcs.isEmpty {
                let path = Self.corpusFile(file)
                let result = try EndToEndTests.run(Self.everyType + [path])
                #expect(result.status == 0, "\(file): \(result.stderr)")
                #expect(result.stderr.isEmpty, "\(file): \(result.stderr)")
                let lines = try TrafficTests.lines(result.stdout)
                var expected: [(input: String, type: String, uri: String?)] = []
                for (name, records) in warcs.sorted(by: { $0.key < $1.key }) {
                    for record in records {
                        expected.append(("\(path)#\(name)", record["type"] as? String ?? "?", record["uri"] as? String))
                    }
                }
                #expect(lines.count == expected.count, "\(file): \(lines.count) lines, \(expected.count) records")
                for (line, record) in zip(lines, expected) {
                    #expect(line["input"] as? String == record.input, "\(file): \(line)")
                    #expect(line["warcType"] as? String == record.type, "\(file): \(line)")
                    #expect(line["url"] as? String == record.uri, "\(file): \(line)")
                }
                #expect(lines.enumerated().allSatisfy { $0.element["seq"] as? Int == $0.offset })
            }
        }

        /// An inner WARC gives the lines it gives as a file of its own (unpacked here by unzip), but for `input`.
        @Test(.enabled(if: corporaAvailable, "../shared/corpora is absent"))
        func innerWARCsGiveTheirOwnLines() throws {
            let manifest = try Self.manifest()
            for (file, warcs) in manifest where !warcs.isEmpty {
                let path = Self.corpusFile(file)
                let inside = try TrafficTests.lines(try EndToEndTests.run(Self.everyType + [path]).stdout)
                var own: [[String: Any]] = []
                for name in warcs.keys.sorted() {
                    let unpacked = Self.temporary((name as NSString).lastPathComponent)
                    defer { try? FileManager.default.removeItem(at: unpacked) }
                    let unzip = try EndToEndTests.run(["-p", path, name], executable: "/usr/bin/unzip")
                    #expect(unzip.status == 0, "\(unzip.stderr)")
                    try unzip.stdout.write(to: unpacked)
                    own += try TrafficTests.lines(try EndToEndTests.run(Self.everyType + [unpacked.path]).stdout)
                }
                #expect(inside.count == own.count, "\(file)")
                for (a, b) in zip(inside, own) {
                    var a = a
                    var b = b
                    a["input"] = nil
                    b["input"] = nil
                    #expect(a as NSDictionary == b as NSDictionary, "\(file): \(a) against \(b)")
                }
            }
        }

        /// py-wacz's non-WACZ zip (a datapackage.json and data/archive/test.txt): one error line, named by the file.
        /// The signed fixtures, the one with a valid signature and the one with an invalid one, read alike:
        /// signatures are not checked.
        @Test(.enabled(if: corporaAvailable, "../shared/corpora is absent"))
        func aZipThatIsNotAWACZIsOneErrorLine() throws {
            let path = Self.corpusFile("invalid_example_1.wacz")
            let result = try EndToEndTests.run([path])
            #expect(result.status == 0)
            let lines = try TrafficTests.lines(result.stdout)
            #expect(lines.count == 1)
            #expect(lines.first?["input"] as? String == path)
            #expect((lines.first?["error"] as? [String: Any])?["code"] as? String == "malformedRecord")
            #expect(((lines.first?["error"] as? [String: Any])?["message"] as? String)?.contains("not a WACZ") == true)

            let valid = try TrafficTests.lines(
                try EndToEndTests.run([Self.corpusFile("valid_signed_example_1.wacz")]).stdout)
            let invalid = try TrafficTests.lines(
                try EndToEndTests.run([Self.corpusFile("invalid_signed_example_1.wacz")]).stdout)
            #expect(valid.count == 2 && invalid.count == 2)
            #expect(valid.map { $0["status"] as? Int } == [200, 404])
            #expect(invalid.map { $0["status"] as? Int } == [200, 404])
        }

        @Test(.enabled(if: corporaAvailable, "../shared/corpora is absent"))
        func frameThenDecodeOverTheFixtures() throws {
            for file in [
                "valid_example_1.wacz", "valid_example_2.wacz", "valid_signed_example_1.wacz",
                "invalid_signed_example_1.wacz", "invalid_example_1.wacz",
            ] {
                try EngineTests.frameThenDecodeEqualsDirect(Self.corpusFile(file))
            }
        }

        /// A WACZ made here from the samples: the entries in name order whatever the archive's order, each a new
        /// input (offsets from 0), `seq` running on; stored or deflated; through `frame` too. `--input warc` reads
        /// it the same way; `--input http` does not look inside.
        @Test func entriesInNameOrderEachAnInput() throws {
            let warc = [UInt8](try EndToEndTests.sample("traffic.warc.gz"))
            let file = Self.temporary("made.wacz")
            defer { try? FileManager.default.removeItem(at: file) }
            try Data(
                ZipFiles.make([
                    ZipFiles.Entry("datapackage.json", Array("{}".utf8), deflated: true),
                    ZipFiles.Entry("archive/b.warc.gz", warc),
                    ZipFiles.Entry("archive/a.warc.gz", warc, deflated: true),
                ])
            ).write(to: file)
            let direct = try TrafficTests.lines(try EndToEndTests.run(["samples/traffic.warc.gz"]).stdout)
            let result = try EndToEndTests.run([file.path])
            #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
            let lines = try TrafficTests.lines(result.stdout)
            #expect(lines.count == 2 * direct.count)
            #expect(
                lines.prefix(direct.count).allSatisfy { $0["input"] as? String == file.path + "#archive/a.warc.gz" })
            #expect(
                lines.suffix(direct.count).allSatisfy { $0["input"] as? String == file.path + "#archive/b.warc.gz" })
            #expect(lines.enumerated().allSatisfy { $0.element["seq"] as? Int == $0.offset })
            let offsets = direct.map { $0["offset"] as? Int }
            #expect(lines.prefix(direct.count).map { $0["offset"] as? Int } == offsets)
            #expect(lines.suffix(direct.count).map { $0["offset"] as? Int } == offsets)
            try EngineTests.frameThenDecodeEqualsDirect(file.path, options: ["--sniff"])

            #expect(try EndToEndTests.run(["--input", "warc", file.path]).stdout == result.stdout)
            let http = try TrafficTests.lines(try EndToEndTests.run(["--input", "http", file.path]).stdout)
            #expect(http.allSatisfy { $0["ok"] as? Bool == false })
        }

        /// Standard input: redirected from a WACZ file it is read (entries named `-#archive/NAME`); a pipe cannot be,
        /// and gives one error line.
        @Test func standardInput() throws {
            let file = Self.temporary("stdin.wacz")
            defer { try? FileManager.default.removeItem(at: file) }
            let zip = ZipFiles.make([
                ZipFiles.Entry("archive/a.warc.gz", [UInt8](try EndToEndTests.sample("traffic.warc.gz")))
            ])
            try Data(zip).write(to: file)
            let redirected = try EndToEndTests.run(
                ["-c", "exec \"$0\" < \"$1\"", EndToEndTests.binary.path, file.path], executable: "/bin/sh")
            let lines = try TrafficTests.lines(redirected.stdout)
            #expect(lines.count > 3)
            #expect(lines.allSatisfy { $0["input"] as? String == "-#archive/a.warc.gz" })

            let piped = try EndToEndTests.run([], stdin: Data(zip))
            #expect(piped.status == 0)
            let pipedLines = try TrafficTests.lines(piped.stdout)
            #expect(pipedLines.count == 1)
            #expect(pipedLines.first?["input"] == nil)
            let message = (pipedLines.first?["error"] as? [String: Any])?["message"] as? String
            #expect(message?.contains("random access") == true, "\(String(describing: message))")
        }

        /// `--stats` counts the archive's bytes as stored, once.
        @Test func statisticsCountTheArchiveOnce() throws {
            let file = Self.temporary("stats.wacz")
            defer { try? FileManager.default.removeItem(at: file) }
            let warc = [UInt8](try EndToEndTests.sample("traffic.warc.gz"))
            let zip = ZipFiles.make([
                ZipFiles.Entry("archive/a.warc.gz", warc), ZipFiles.Entry("archive/b.warc.gz", warc, deflated: true),
            ])
            try Data(zip).write(to: file)
            let result = try EndToEndTests.run(["--stats", file.path])
            #expect(result.stderr.contains("bytes in \(zip.count),"), "\(result.stderr)")
        }
    }
}
