import CLZ4
import CZstd
import Foundation
import Testing

/// `.warc.zst` and `.warc.lz4` through the binary, on standard input (no file name to go by: the magic bytes decide),
/// one frame per record: the lines of the plain WARC, with each record's offset its frame's.
@Suite("Compressed WARC end to end")
struct CompressedWARCTests {
    static func record(_ n: Int) -> [UInt8] {
        let body = #"{"n":\#(n),"items":[\#((0..<n * 50).map(String.init).joined(separator: ","))]}"#
        let http =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        let head =
            "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:\(n)>\r\nWARC-Target-URI: https://x.test/\(n)\r\n"
            + "Content-Type: application/http; msgtype=response\r\nContent-Length: \(http.utf8.count)\r\n\r\n"
        return Array((head + http + "\r\n\r\n").utf8)
    }

    static func zstd(_ bytes: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: ZSTD_compressBound(bytes.count))
        let written = ZSTD_compress(&output, output.count, bytes, bytes.count, 3)
        precondition(ZSTD_isError(written) == 0)
        return Array(output.prefix(written))
    }

    static func lz4(_ bytes: [UInt8]) -> [UInt8] {
        var preferences = LZ4F_preferences_t()
        preferences.frameInfo.contentSize = UInt64(bytes.count)
        var output = [UInt8](repeating: 0, count: LZ4F_compressFrameBound(bytes.count, &preferences))
        let written = LZ4F_compressFrame(&output, output.count, bytes, bytes.count, &preferences)
        precondition(LZ4F_isError(written) == 0)
        return Array(output.prefix(written))
    }

    static func lines(_ input: [UInt8]) throws -> [[String: Any]] {
        let run = try EndToEndTests.run(["--warc-types", "all"], stdin: Data(input))
        #expect(run.status == 0, "\(run.stderr)")
        return try String(decoding: run.stdout, as: UTF8.self).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    static func withoutOffset(_ line: [String: Any]) throws -> String {
        var line = line
        line["offset"] = nil
        line["length"] = nil
        return String(decoding: try JSONSerialization.data(withJSONObject: line, options: .sortedKeys), as: UTF8.self)
    }

    @Test(arguments: ["zstd", "lz4"])
    func framesGiveThePlainLinesAtFrameOffsets(_ kind: String) throws {
        let records = (1...6).map(Self.record)
        let plain = try Self.lines(records.flatMap { $0 })
        #expect(plain.count == 6 && plain.allSatisfy { $0["ok"] as? Bool == true })
        var compressed: [UInt8] = []
        var offsets: [Int] = []
        for record in records {
            offsets.append(compressed.count)
            compressed += kind == "zstd" ? Self.zstd(record) : Self.lz4(record)
        }
        let lines = try Self.lines(compressed)
        #expect(lines.compactMap { $0["offset"] as? Int } == offsets)
        #expect(try lines.map(Self.withoutOffset) == plain.map(Self.withoutOffset))
    }
}
