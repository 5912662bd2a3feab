import Foundation
import Testing

/// `.warc.gz` inputs that defeat the spans the workers inflate (docs/framings.md#parallel-inflate), with two jobs,
/// within the hostile budget of ``HostileDocumentTests`` (1 s of CPU time, 256 MB resident): every record gets its
/// line, and what the reader must frame itself costs what one framer costs.
extension HostileDocumentTests {
    @Suite("Hostile spans")
    struct HostileSpanTests {
        /// `count` small resource records, numbered, with a body of `filler` bytes each.
        static func records(_ count: Int, filler: [UInt8] = Array("plain text ".utf8)) -> [[UInt8]] {
            (0..<count).map { n in
                let block = Array("record \(n) ".utf8) + Array(repeating: filler, count: 20).flatMap { $0 }
                let head =
                    "WARC/1.1\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:x:\(n)>\r\n"
                    + "WARC-Target-URI: http://example.com/\(n)\r\nContent-Type: text/plain\r\n"
                    + "Content-Length: \(block.count)\r\n\r\n"
                return Array(head.utf8) + block + Array("\r\n\r\n".utf8)
            }
        }

        /// gzip as a whole: 25,000 records (9 MB) in one member; no header to cut at, so spans are cut where their
        /// maximum ends and framed by the reader.
        @Test func gzipAsAWhole() throws {
            let plain = Self.records(25_000).flatMap { $0 }
            let input = HostileEncodingTests.gzip(data: plain, level: 6)
            let lines = try HostileDocumentTests.runLimited(input: Data(input), name: "spans: gzip as a whole, 9 MB")
            #expect(lines.count == 25_000)
            #expect(lines.last?["url"] as? String == "http://example.com/24999")
        }

        /// Stored members (no compression) whose records are full of gzip member headers (1F 8B 08 00): the last
        /// header in every buffer is a false one, so every span's worker stops inside a member and the reader frames
        /// on, dropping the workers' framing of the next span.
        @Test func falseMemberHeadersEverywhere() throws {
            let members = Self.records(6_000, filler: [0x1F, 0x8B, 0x08, 0x00, 0x41, 0x42])
                .map { HostileEncodingTests.gzip(data: $0, level: 0) }
            let lines = try HostileDocumentTests.runLimited(
                input: Data(members.flatMap { $0 }), name: "spans: false member headers, 6,000 stored members")
            #expect(lines.count == 6_000)
            #expect(lines.allSatisfy { $0["ok"] as? Bool == true })
        }
    }
}
