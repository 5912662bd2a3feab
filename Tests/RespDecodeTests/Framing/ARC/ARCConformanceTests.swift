import Foundation
import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// The ARC grammar against warcio 1.8.1's indexes of the ARC files in `../shared/corpora/warc` (aut,
/// webarchive-discovery, warcio): the same records (warcio's `arc_header`, as `warcinfo`, is our skipped
/// `filedesc`), URLs, offsets and lengths.
@Suite("ARC framing conformance", .enabled(if: Corpora.available, Corpora.skipComment))
struct ARCConformanceTests {
    struct Entry: Equatable, CustomStringConvertible {
        var offset: Int64
        var length: Int64?
        var url: String?
        var description: String { "@\(offset)+\(length.map(String.init) ?? "-") \(url ?? "-")" }
    }

    /// warcio's index of `file` (in `folder`), without its `arc_header` record.
    static func warcioEntries(_ folder: String, _ file: String) throws -> [Entry] {
        let text = String(
            decoding: try Corpora.bytes("\(folder)/expected-index-warcio-1.8.1/\(file).jsonl"), as: UTF8.self)
        return try text.split(separator: "\n").compactMap { line in
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String], "\(file): \(line)")
            guard object["warc-type"] != "warcinfo" else { return nil }
            return Entry(
                offset: Int64(object["offset"] ?? "") ?? -1, length: Int64(object["length"] ?? ""),
                url: object["warc-target-uri"])
        }
    }

    static func entries(_ items: [FramedItem]) -> [Entry] {
        items.map { item in
            switch item {
            case .record(let r): Entry(offset: r.offset, length: r.length, url: r.url)
            case .failure(let f): Entry(offset: f.offset, length: f.length, url: f.url)
            }
        }
    }

    /// `.arc.gz` files: warcio's offsets and lengths are the gzip members', and so are ours.
    @Test(arguments: [
        ("warc/aut", "example.arc.gz", 299),
        ("warc/webarchive-discovery", "IAH-20080430204825-00000-blackbook-truncated.arc.gz", 8),
        ("warc/warcio", "example.arc.gz", 1),
    ])
    func gzipARCGivesWarciosRecords(_ folder: String, _ file: String, _ count: Int) throws {
        let path = folder == "warc/warcio" ? "\(folder)/data/\(file)" : "\(folder)/\(file)"
        var framer = WARCFramer()
        let items = warcItems(&framer, try Corpora.bytes(path))
        let expected = try Self.warcioEntries(folder, file)
        #expect(expected.count == count && items.count == count)
        #expect(Self.entries(items) == expected)
        #expect(items.allSatisfy { $0.record != nil }, "\(items.compactMap(\.failure).map(\.error))")
        #expect(framer.skippedRecords == ["filedesc": 1])
    }

    /// Plain `.arc`: lengths leave out the line feed after each record, as warcio's do
    /// (docs/output.md#record-extents).
    @Test func plainARCGivesWarciosRecords() throws {
        let items = warcItems(try Corpora.bytes("warc/warcio/data/example.arc"))
        let expected = try Self.warcioEntries("warc/warcio", "example.arc")
        #expect(Self.entries(items) == expected && expected.count == 1)
    }

    /// webarchive-discovery's plain `.arc` has no separators: warcio stops after the filedesc record; we read all 8
    /// records, with warnings, at the places the `.arc.gz` and the table in its PROVENANCE.md put them.
    @Test func plainARCWithoutSeparatorsIsReadWhole() throws {
        let folder = "warc/webarchive-discovery"
        let name = "IAH-20080430204825-00000-blackbook-truncated"
        let bytes = try Corpora.bytes("\(folder)/\(name).arc")
        let items = warcEverySplit(bytes, randomRuns: 2)
        let gzip = try Self.warcioEntries(folder, "\(name).arc.gz")
        #expect(items.count == 8 && items.allSatisfy { $0.record?.warnings.count == 1 })
        #expect(Self.entries(items).map(\.url) == gzip.map(\.url))
        // warcio's error: the dns: header at 1,399, right after the filedesc record's 1,300 bytes.
        #expect(items.first?.offset == 1399)
        #expect(items.last.map { $0.offset + ($0.length ?? 0) } == Int64(bytes.count))
        // The same responses as the .arc.gz.
        let fromGzip = warcItems(try Corpora.bytes("\(folder)/\(name).arc.gz"))
        #expect(items.map { $0.record?.body } == fromGzip.map { $0.record?.body })
    }

    /// aut's upstream assertions (PROVENANCE.md): 16 URLs under /about/, and the first three records.
    @Test func autExample() throws {
        let items = warcItems(try Corpora.bytes("warc/aut/example.arc.gz"))
        let urls = items.compactMap(\.record?.url)
        #expect(urls.filter { $0.hasPrefix("http://www.archive.org/about/") }.count == 16)
        let first = items.prefix(3).compactMap(\.record)
        #expect(
            first.map(\.url) == ["dns:www.archive.org", "http://www.archive.org/robots.txt", "http://www.archive.org/"])
        #expect(first.map { $0.arc?.date } == ["20080430204825", "20080430204825", "20080430204826"])
        #expect(first.map(\.status) == [200, 200, 200] && first[0].headers.last("Content-Type") == "text/dns")
        // The payload digests upstream asserts: SHA-1 (base32) of the body.
        let digests = [
            "RUIV2DUDYXONM2YTMGPAJVQKG3FSYHXE", "SUCGMUVXDKVB5CS2NL4R4JABNX7K466U", "2WAXX5NUWNNCS2BDKCO5OVDQBJVNKIVV",
        ]
        for (record, digest) in zip(first, digests) {
            guard case .expected(let expected) = PayloadDigest.parse("sha1:\(digest)") else {
                Issue.record("\(digest) does not parse")
                continue
            }
            #expect(record.body.withUnsafeBufferPointer { PayloadDigest.matches(expected, $0) } == true, "\(digest)")
        }
    }

    /// aut's broken single-member file: the good records, then one failure per header whose length lies; never past
    /// the end (every byte of the inflated stream is in one item).
    @Test func autBadExample() throws {
        let items = warcEverySplit(try Corpora.bytes("warc/aut/badexample.arc.gz"), randomRuns: 2)
        #expect(
            items.map { $0.failure?.error.code } == [nil, nil, .malformedRecord, .truncatedRecord, .truncatedRecord])
        let last = try #require(items.last?.failure)
        #expect(last.offset + last.bytes == 3151)
    }

    /// warcio's bad.arc (lengths -1, 1 and abc) and space-in-url (a length 12 bytes past the end, which warcio reads
    /// short without a word): failures, never a crash.
    @Test func warcioBrokenARCs() throws {
        let bad = warcEverySplit(try Corpora.bytes("warc/warcio/data/bad.arc"), randomRuns: 2)
        #expect(bad.map { $0.failure?.error.code } == [.malformedRecord, .malformedRecord, .malformedRecord])
        let spaces = warcEverySplit(try Corpora.bytes("warc/warcio/data/example-space-in-url.arc"), randomRuns: 2)
        let expected = try Self.warcioEntries("warc/warcio", "example-space-in-url.arc")
        #expect(spaces.count == 1 && spaces[0].failure?.error.code == .truncatedRecord)
        #expect(spaces[0].offset == expected[0].offset && spaces[0].failure?.url == expected[0].url)
    }
}
