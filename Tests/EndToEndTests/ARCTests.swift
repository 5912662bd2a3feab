import Foundation
import RespDecodeTestSupport
import Testing

/// ARC files of the corpora through the binary (docs/framings.md#arc): detected as the archive framing, plain ARC
/// never as raw HTTP, one line per record with `url`, `ip`, `arcDate` and `length`, the filedesc record counted.
extension EndToEndTests {
    @Suite("ARC files", .enabled(if: Corpora.available, "../shared/corpora is absent"))
    struct ARCTests {
        static let discovery = "warc/webarchive-discovery/IAH-20080430204825-00000-blackbook-truncated"

        static func lines(_ path: String, _ arguments: [String] = []) throws -> (lines: [[String: Any]], run: Run) {
            let run = try EndToEndTests.run(arguments + [Corpora.url(path).path])
            #expect(run.status == 0, "\(path): \(run.stderr)")
            return (try TrafficTests.lines(run.stdout), run)
        }

        /// The plain file (no separators) and the .arc.gz give the same 8 responses; in each, the records' extents
        /// fetch exactly their bytes, and the plain file's tile the input after the filedesc record.
        @Test func plainAndGzipARCGiveTheSameRecords() throws {
            let plain = try Self.lines("\(Self.discovery).arc").lines
            let gzip = try Self.lines("\(Self.discovery).arc.gz").lines
            #expect(plain.count == 8 && gzip.count == 8)
            for (p, g) in zip(plain, gzip) {
                for key in ["url", "ip", "arcDate", "status", "contentType", "bodyBytes", "decoder", "ok"] {
                    #expect((p[key] as? NSObject) == (g[key] as? NSObject), "\(key): \(p) \(g)")
                }
                #expect((p["arcDate"] as? String)?.count == 14 && p["warcType"] == nil)
            }
            let bytes = try Corpora.bytes("\(Self.discovery).arc")
            var next = 1399
            for line in plain {
                let offset = try #require(line["offset"] as? Int)
                let length = try #require(line["length"] as? Int)
                #expect(offset == next)
                let url = try #require(line["url"] as? String)
                #expect(bytes[offset...].starts(with: Array(url.utf8)))
                next = offset + length
            }
            #expect(next == bytes.count)
        }

        /// aut's crawl: 299 responses, no failure, the filedesc record counted on standard error.
        @Test func autExample() throws {
            let (lines, run) = try Self.lines("warc/aut/example.arc.gz", ["--log-level", "info"])
            #expect(lines.count == 299)
            #expect(
                lines.allSatisfy { $0["decoder"] as? String != "none" && $0["length"] is Int && $0["ip"] is String })
            #expect(run.stderr.contains("1 filedesc"), "\(run.stderr)")
        }

        /// The broken single-member file: two good records, then errors, and the process succeeds.
        @Test func autBadExample() throws {
            let lines = try Self.lines("warc/aut/badexample.arc.gz").lines
            let codes = lines.map { ($0["error"] as? [String: Any])?["code"] as? String }
            #expect(codes == [nil, nil, "malformedRecord", "truncatedRecord", "truncatedRecord"])
        }

        /// Plain ARC on standard input is detected too.
        @Test func plainARCOnStandardInput() throws {
            let run = try EndToEndTests.run([], stdin: Data(try Corpora.bytes("warc/warcio/data/example.arc")))
            let lines = try TrafficTests.lines(run.stdout)
            #expect(lines.count == 1 && lines.first?["url"] as? String == "http://example.com/")
            #expect(lines.first?["length"] as? Int == 1656 && lines.first?["offset"] as? Int == 151)
        }
    }
}
