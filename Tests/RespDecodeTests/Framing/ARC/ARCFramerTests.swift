import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// Builds ARC files for the ARC grammar tests.
enum ARCFixtures {
    static let http = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 7\r\n\r\n{\"a\":1}"
    static let dns = "20080430204825\nwww.example.com.\t589\tIN\tA\t192.0.2.1\n"

    /// The `filedesc://` record of a v1 or v2 file (header line and version block), without its separator.
    static func filedesc(version: ARCVersion) -> [UInt8] {
        let block =
            version == .v1
            ? "1 1 InternetArchive\nURL IP-address Archive-date Content-type Archive-length\n"
            : "2 0 Test\nURL IP-address Archive-date Content-type Result-code Checksum Location Offset Filename Archive-length\n"
        let line =
            version == .v1
            ? "filedesc://test.arc 0.0.0.0 20240102030405 text/plain \(block.utf8.count)\n"
            : "filedesc://test.arc 0.0.0.0 20240102030405 text/plain 200 - - 0 test.arc \(block.utf8.count)\n"
        return Array((line + block).utf8)
    }

    /// One record without its separator; `length` overrides the Archive-length written.
    static func record(
        _ url: String, _ block: String, version: ARCVersion = .v1, ip: String = "192.0.2.1",
        date: String = "20240102030405", mime: String = "application/json", length: String? = nil
    ) -> [UInt8] {
        let count = length ?? String(block.utf8.count)
        let line =
            version == .v1
            ? "\(url) \(ip) \(date) \(mime) \(count)\n"
            : "\(url) \(ip) \(date) \(mime) 200 SHA1XYZ - 1234 test.arc \(count)\n"
        return Array((line + block).utf8)
    }

    /// The records of a small file: filedesc, an HTTP response, a `dns:` record, another HTTP response.
    static func records(version: ARCVersion) -> [[UInt8]] {
        [
            filedesc(version: version),
            record("http://example.com/a", http, version: version),
            record("dns:www.example.com", dns, version: version, date: "20240102030406", mime: "text/dns"),
            record("https://example.com/b", http, version: version, ip: "2001:db8::1"),
        ]
    }

    /// Records joined by `separator` (ARC's `\n` after each record, or nothing).
    static func plain(_ records: [[UInt8]], separator: [UInt8] = [0x0A]) -> [UInt8] {
        records.flatMap { $0 + separator }
    }
}

/// Frames `input` whole, byte by byte and in random splits: all must agree (``warcEverySplit``).
private func arcEverySplit(_ input: [UInt8], limits: Limits = Limits()) -> [FramedItem] {
    warcEverySplit(input, limits: limits, randomRuns: 20)
}

private func describeARC(_ item: FramedItem) -> String {
    switch item {
    case .record(let r):
        return
            "@\(r.offset)+\(r.length.map(String.init) ?? "-") \(r.url ?? "-") \(r.arc?.ip ?? "-") \(r.arc?.date ?? "-") \(r.status)"
    case .failure(let f):
        return "@\(f.offset) \(f.error.code) \(f.url ?? "-")"
    }
}

@Suite("ARC framing")
struct ARCFramerTests {
    @Test(arguments: [ARCVersion.v1, .v2])
    func plainARCIsReadRecordByRecord(_ version: ARCVersion) throws {
        let records = ARCFixtures.records(version: version)
        let input = ARCFixtures.plain(records)
        let items = arcEverySplit(input)
        var offsets: [Int64] = []
        var at = 0
        for record in records {
            offsets.append(Int64(at))
            at += record.count + 1
        }
        #expect(
            items.map(describeARC) == [
                "@\(offsets[1])+\(records[1].count) http://example.com/a 192.0.2.1 20240102030405 200",
                "@\(offsets[2])+\(records[2].count) dns:www.example.com 192.0.2.1 20240102030406 200",
                "@\(offsets[3])+\(records[3].count) https://example.com/b 2001:db8::1 20240102030405 200",
            ])
        let json = try #require(items[0].record)
        #expect(json.body == Array("{\"a\":1}".utf8) && json.warc == nil && json.warnings.isEmpty)
        #expect(json.headers.last("Content-Type") == "application/json")
        // Not HTTP: the block is the body, the ARC Content-type its type.
        let dns = try #require(items[1].record)
        #expect(dns.body == Array(ARCFixtures.dns.utf8) && dns.headers.last("Content-Type") == "text/dns")
        var framer = WARCFramer()
        _ = warcItems(&framer, input)
        #expect(framer.skippedRecords == ["filedesc": 1])
    }

    @Test(arguments: [ARCVersion.v1, .v2])
    func gzipPerRecordHasTheMembersExtents(_ version: ARCVersion) throws {
        let records = ARCFixtures.records(version: version)
        // With the separator inside each member (aut), and without any (webarchive-discovery).
        for separator in [[UInt8(0x0A)], []] {
            let (bytes, offsets) = WARCFixtures.gzipPerRecord(records.map { $0 + separator })
            let ends = Array(offsets.dropFirst()) + [Int64(bytes.count)]
            let items = arcEverySplit(bytes)
            #expect(items.count == 3)
            for (k, item) in items.enumerated() {
                let record = try #require(item.record, "\(describeARC(item))")
                #expect(record.offset == offsets[k + 1] && record.length == ends[k + 1] - offsets[k + 1])
                #expect(record.warnings.isEmpty, "\(record.warnings)")
            }
        }
    }

    @Test func wholeGzipARCHasDecompressedOffsetsAndNoLength() throws {
        let plain = ARCFixtures.plain(ARCFixtures.records(version: .v1))
        let items = arcEverySplit(WARCFixtures.gzipMember(plain))
        #expect(items.count == 3 && items.allSatisfy { $0.record != nil && $0.length == nil })
    }

    @Test func plainARCWithoutSeparatorsIsReadWithWarnings() throws {
        let records = ARCFixtures.records(version: .v1)
        let items = arcEverySplit(ARCFixtures.plain(records, separator: []))
        #expect(items.count == 3 && items.allSatisfy { $0.record != nil })
        #expect(items.compactMap(\.record).allSatisfy { $0.warnings.count == 1 })
        #expect(items[0].offset == Int64(records[0].count) && items[0].length == Int64(records[1].count))
    }

    /// A header whose Archive-length lies (too short, too long, past the end): one failure, and the records after it
    /// are still read, found at the next header line.
    @Test(arguments: [-5, 1, 2, 30, 10_000])
    func lyingLengthResynchronises(_ delta: Int) throws {
        let good = ARCFixtures.records(version: .v1)
        let bad = ARCFixtures.record(
            "http://example.com/bad", ARCFixtures.http,
            length: String(ARCFixtures.http.utf8.count + delta))
        let input = ARCFixtures.plain([good[0], good[1], bad, good[2], good[3]])
        let items = arcEverySplit(input)
        #expect(
            items.map { $0.failure.map { "\($0.error.code) \($0.url ?? "-")" } ?? $0.record?.url ?? "?" } == [
                "http://example.com/a",
                "\(delta == 10_000 ? RecordError.Code.truncatedRecord : .malformedRecord) http://example.com/bad",
                "dns:www.example.com", "https://example.com/b",
            ])
        // Every byte is in one item or the separators.
        let failure = try #require(items[1].failure)
        #expect(failure.offset == Int64(good[0].count + 1 + good[1].count + 1))
        #expect(items[2].offset == failure.offset + failure.bytes)
    }

    /// Without separators, a length that lies is found the same way (the bytes after the block are no header line),
    /// and the next record is found if it starts a line (known limit: a header right after a block that does not end
    /// with a line feed is not searched for).
    @Test func lyingLengthInAFileWithoutSeparators() {
        let good = ARCFixtures.records(version: .v1)
        let http = ARCFixtures.http + "\n"
        let bad = ARCFixtures.record("http://example.com/bad", http, length: String(http.utf8.count - 3))
        let items = arcEverySplit(ARCFixtures.plain([good[0], good[1], bad, good[2]], separator: []))
        #expect(items.map { $0.failure?.error.code } == [nil, .malformedRecord, nil])
        #expect(items.last?.record?.url == "dns:www.example.com")
    }

    @Test func garbageWhereARecordShouldStartIsOneFailure() {
        let records = ARCFixtures.records(version: .v1)
        let input = ARCFixtures.plain([records[0], records[1], Array("not a header\nstill not\n".utf8), records[2]])
        let items = arcEverySplit(input)
        #expect(items.map { $0.failure?.error.code } == [nil, .malformedRecord, nil])
    }

    @Test func spacesInTheURLAreKeptAndEscaped() throws {
        let input = ARCFixtures.plain([
            ARCFixtures.filedesc(version: .v1),
            ARCFixtures.record("http://example.com/a b c", ARCFixtures.http),
        ])
        let record = try #require(arcEverySplit(input).first?.record)
        #expect(record.url == "http://example.com/a%20b%20c" && record.warnings.count == 1)
    }

    @Test func malformedHTTPInsideAFramedRecordIsAFailureWithItsExtent() throws {
        let input = ARCFixtures.plain([
            ARCFixtures.filedesc(version: .v1), ARCFixtures.record("http://example.com/", "NOT HTTP\r\n\r\n"),
        ])
        let failure = try #require(arcEverySplit(input).first?.failure)
        #expect(failure.error.code == .malformedRecord && failure.arc?.date == "20240102030405")
        #expect(failure.length == failure.bytes && failure.url == "http://example.com/")
    }

    @Test func oversizeRecordIsSkippedNotHeld() throws {
        let records = ARCFixtures.records(version: .v1)
        let big = ARCFixtures.record("http://example.com/big", String(repeating: "x", count: 5000))
        var limits = Limits()
        limits.maxBodyBytes = 1000
        limits.maxHeaderBytes = 1000
        let items = arcEverySplit(ARCFixtures.plain([records[0], big, records[1]]), limits: limits)
        #expect(items.map { $0.failure?.error.code } == [.limitExceeded, nil])
    }

    /// Every cut of a gzip ARC that is not between members gives an error item, never a silent end.
    @Test func everyCutOfAGzipARCEndsInAnError() {
        let (bytes, offsets) = WARCFixtures.gzipPerRecord(ARCFixtures.records(version: .v1).map { $0 + [0x0A] })
        // (Cut after its first byte, the input is a lone 1F: not gzip, a malformed record.)
        for cut in 2..<bytes.count where !offsets.contains(Int64(cut)) {
            let items = warcItems(Array(bytes.prefix(cut)))
            #expect(
                items.last?.failure?.error.code == .truncatedRecord,
                "cut at \(cut): \(items.map(describeARC)) \(items.last?.failure?.error.message ?? "")")
        }
    }

    @Test func headerLineRecognition() {
        func recognised(_ line: String, _ version: ARCVersion = .v1) -> ARCHeader.Recognition {
            ARCHeader.recognise(FramerInput(Array(line.utf8)), at: 0, version: version, cap: 8192, ended: false)
        }
        #expect(recognised("http://a.test/ 192.0.2.1 20240102030405 text/html 12\n") == .yes)
        #expect(recognised("http://a.test/x y 192.0.2.1 20240102030405 text/html 12\n") == .yes)
        #expect(recognised("dns:a.test - 20240102030405 text/dns 12\n") == .yes)
        #expect(recognised("http://a.test/ 192.0.2.1 20240102030405 text/html 200 X - 5 f.arc 12\n", .v2) == .yes)
        #expect(recognised("http://a.test/ 192.0.2.1 null text/html 12\n") == .no)
        #expect(recognised("http://a.test/ 192.0.2.1 20240102030405 text/html -1\n") == .no)
        #expect(recognised("see http://a.test/ 192.0.2.1 20240102030405 text/html 12\n") == .no)
        #expect(recognised("<a href=x>\n") == .no)
        #expect(recognised("http://a.test/ 192.0.2.1 2024") == .undecided)
        #expect(recognised("http") == .undecided)
    }
}
