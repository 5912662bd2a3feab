import Foundation
import Testing

/// Faults in the input, through the built binary: input cut inside a record, and garbage between records. (Closed
/// and full outputs and signals are in EndToEndTests and RuntimeTests.)
extension EndToEndTests {
    @Suite("Faults")
    struct FaultTests {
        typealias E2E = EndToEndTests

        /// Runs the binary on `input` (written to a file, so that any size works) and parses its lines.
        static func lines(of input: Data, _ arguments: [String] = [], name: String) throws -> [[String: Any]] {
            let folder = FileManager.default.temporaryDirectory
            let inPath = folder.appendingPathComponent("respdecode-fault-\(getpid())-\(name)")
            let outPath = folder.appendingPathComponent("respdecode-fault-\(getpid())-\(name).out")
            try input.write(to: inPath)
            _ = FileManager.default.createFile(atPath: outPath.path, contents: nil)
            defer {
                try? FileManager.default.removeItem(at: inPath)
                try? FileManager.default.removeItem(at: outPath)
            }
            let out = try FileHandle(forWritingTo: outPath)
            let result = try E2E.run(arguments + [inPath.path], stdoutTo: out)
            try out.close()
            #expect(result.status == 0, "\(result.stderr)")
            let data = try Data(contentsOf: outPath)
            return try E2E.TrafficTests.lines(data)
        }

        /// Five records of one framing, and where each one's bytes start and end.
        static func records(_ framing: String) -> (input: Data, extents: [Range<Int>]) {
            var input = Data()
            var extents: [Range<Int>] = []
            let http = httpResponse
            if framing == "har" { input.append(contentsOf: #"{"log":{"version":"1.2","entries":["#.utf8) }
            for n in 0..<5 {
                if framing == "har" && n > 0 { input.append(UInt8(ascii: ",")) }
                let record: String
                switch framing {
                case "warc":
                    record =
                        "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:\(n)>\r\n"
                        + "Content-Type: application/http; msgtype=response\r\nContent-Length: \(http(n).utf8.count)\r\n\r\n"
                        + http(n) + "\r\n\r\n"
                case "har":
                    record =
                        #"{"response":{"status":200,"headers":[{"name":"Content-Type","value":"application/json"}],"#
                        + #""content":{"mimeType":"application/json","text":"{\"n\":\#(n)}"}}}"#
                case "ndjson":
                    record = #"{"status":200,"headers":[["Content-Type","application/json"]],"body":"{\"n\":\#(n)}"}"#
                default:
                    record = http(n)
                }
                extents.append(input.count..<input.count + record.utf8.count)
                input.append(contentsOf: record.utf8)
                if framing == "ndjson" { input.append(UInt8(ascii: "\n")) }
            }
            if framing == "har" { input.append(contentsOf: "]}}".utf8) }
            return (input, extents)
        }

        /// Cut anywhere inside a record, the input gives the lines of the records before it, unchanged, and then one
        /// `truncatedRecord` line for the record cut short -- in each framing.
        @Test(arguments: ["http", "warc", "har", "ndjson"])
        func inputCutInsideARecordEndsWithTruncatedRecord(_ framing: String) throws {
            let (input, extents) = Self.records(framing)
            let arguments = ["--input", framing]
            let full = try Self.lines(of: input, arguments, name: framing)
            #expect(full.count == 5 && full.allSatisfy { $0["ok"] as? Bool == true }, "\(full)")
            for k in [0, 2, 4] {
                let extent = extents[k]
                for cut in stride(from: extent.lowerBound + 1, to: extent.upperBound, by: max(1, extent.count / 12)) {
                    let got = try Self.lines(of: input.prefix(cut), arguments, name: framing)
                    #expect(got.count == k + 1, "\(framing) cut at \(cut) in record \(k): \(got)")
                    guard got.count == k + 1 else { continue }
                    for j in 0..<k {
                        #expect(
                            NSDictionary(dictionary: got[j]) == NSDictionary(dictionary: full[j]),
                            "\(framing) line \(j)")
                    }
                    let error = got[k]["error"] as? [String: Any]
                    #expect(error?["code"] as? String == "truncatedRecord", "\(framing) cut at \(cut): \(got[k])")
                }
            }
        }

        /// Random garbage between records of a raw HTTP stream: every intact record still gets its line, in order, and
        /// each run of garbage exactly one error line where it was.
        @Test func garbageBetween100000HTTPRecords() throws {
            try Self.garbageBetween(records: 100_000, everyNth: 20, seed: 0x5EED, name: "garbage.http") { n in
                Self.httpResponse(n)
            }
        }

        /// The same for WARC records: garbage that does not end in a line end, before a `WARC/1.1` line.
        @Test func garbageBetweenWARCRecords() throws {
            try Self.garbageBetween(records: 10_000, everyNth: 10, seed: 0xA7C, name: "garbage.warc") { n in
                let http = Self.httpResponse(n)
                return "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:\(n)>\r\n"
                    + "WARC-Target-URI: http://example.com/\(n)\r\nContent-Type: application/http; msgtype=response\r\n"
                    + "Content-Length: \(http.utf8.count)\r\n\r\n\(http)\r\n\r\n"
            }
        }

        /// A JSON response whose value is `{"n": n}`.
        static func httpResponse(_ n: Int) -> String {
            let body = "{\"n\":\(n)}"
            return
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        }

        /// `records` records made by `record(n)`, with garbage after about one in `everyNth`, through the binary: every
        /// record's line, in order, and one error line per run of garbage.
        static func garbageBetween(
            records: Int, everyNth: UInt64, seed: UInt64, name: String, record: (Int) -> String
        ) throws {
            var generator = XorShiftGenerator(seed: seed)
            var stream = Data()
            var garbageRuns = 0
            for n in 0..<records {
                stream.append(contentsOf: record(n).utf8)
                if generator.next() % everyNth == 0 {
                    stream.append(contentsOf: garbage(&generator))
                    garbageRuns += 1
                }
            }
            let lines = try Self.lines(of: stream, name: name)
            try checkInterleaving(lines, records: records, garbageRuns: garbageRuns) { line in
                (line["value"] as? [String: Any])?["n"] as? Int
            }
        }

        /// 1 to 300 random bytes that start with none of CR, LF, NUL, space, tab, `H` or `W` (which could be line
        /// ends, filler or the start of a record) -- anything may follow.
        static func garbage(_ generator: inout XorShiftGenerator) -> [UInt8] {
            let count = Int(generator.next() % 300) + 1
            var bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            while [0x0D, 0x0A, 0x00, 0x20, 0x09, UInt8(ascii: "H"), UInt8(ascii: "W")].contains(bytes[0]) {
                bytes[0] = UInt8(truncatingIfNeeded: generator.next())
            }
            return bytes
        }

        /// `records` ok lines carrying 0, 1, 2, … in order, `garbageRuns` error lines among them, `seq` counting every
        /// line.
        static func checkInterleaving(
            _ lines: [[String: Any]], records: Int, garbageRuns: Int, value: ([String: Any]) -> Int?
        ) throws {
            let ok = lines.filter { $0["ok"] as? Bool == true }
            let errors = lines.filter { $0["ok"] as? Bool == false }
            #expect(ok.count == records)
            #expect(errors.count == garbageRuns)
            #expect(ok.map { value($0) ?? -1 } == Array(0..<records), "intact records in order")
            #expect(lines.enumerated().allSatisfy { $0.element["seq"] as? Int == $0.offset })
            #expect(errors.allSatisfy { ($0["error"] as? [String: Any])?["code"] as? String == "malformedRecord" })
        }
    }

}

/// A small deterministic generator (xorshift64*), so the garbage is the same in every run.
struct XorShiftGenerator: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed | 1 }
    mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }
}
