import Testing

@testable import RespDecode

/// `respdecode frame`'s lines: every framed item written as an ndjson input line reads back, through NDJSONFramer, as
/// the same item (bar the offset, which is the line's), so that decoding it gives the line a direct run gives.
@Suite("Record line writer")
struct RecordLineWriterTests {
    private func line(_ item: FramedItem, input: String? = "crawl.warc.gz", offset: Int64 = 1234) -> String {
        let out = OutputBuffer()
        _ = RecordLineWriter().writeLine(for: item, source: .init(seq: 7, offset: offset, input: input), into: out)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    private func readBack(_ line: String) -> [FramedItem] {
        var framer = NDJSONFramer()
        return framer.frameAll(Array(line.utf8))
    }

    @Test func aWARCRecordWithEverythingReadsBackTheSame() throws {
        var record = ResponseRecord(
            offset: 1234, status: 206,
            headers: HeaderFields([
                ("Content-Type", "application/json"), ("Set-Cookie", "a=1"), ("set-cookie", "b=\"2\""),
            ]),
            body: [0, 0xFF, 0x7B, 0x0A, 0x22], trailers: HeaderFields([("X-Checksum", "abc")]),
            url: "https://example.com/ä?q=\u{1}", method: "GET",
            warc: WARCRecordInfo(
                type: "response", recordId: "<urn:uuid:1>", date: "2026-11-22T00:00:00Z", digest: .mismatch),
            contentDecoded: true, warnings: ["Transfer-Encoding overrides Content-Length"])
        let text = line(.record(record))
        #expect(text.hasPrefix(#"{"id":"crawl.warc.gz:1234","url":"https://example.com/ä?q=\u0001","method":"GET","#))
        #expect(text.hasSuffix("\"bodyBase64\":\"AP97CiI=\"}\n"))
        let items = readBack(text)
        #expect(items.count == 1)
        guard case .record(let back)? = items.first else {
            Issue.record("not a record: \(items)")
            return
        }
        record.offset = 0
        record.id = "crawl.warc.gz:1234"
        #expect(back.status == record.status)
        #expect(back.headers.fields == record.headers.fields, "order, case and repeats kept")
        #expect(back.trailers?.fields == record.trailers?.fields)
        #expect(back.body == record.body)
        #expect(back.url == record.url && back.method == record.method && back.id == record.id)
        #expect(back.warc == record.warc)
        #expect(back.contentDecoded && back.warnings == record.warnings)
    }

    @Test func aPlainRecordHasOnlyWhatItHas() {
        let text = line(.record(ResponseRecord(offset: 0, status: 204)), input: nil, offset: 0)
        #expect(text == #"{"id":"-:0","status":204,"headers":[],"bodyBase64":""}"# + "\n")
        guard case .record(let back)? = readBack(text).first else {
            Issue.record("not a record")
            return
        }
        #expect(
            back.status == 204 && back.body.isEmpty && back.warc == nil && !back.contentDecoded && back.trailers == nil)
    }

    @Test func anOwnIdIsKept() {
        let text = line(.record(ResponseRecord(offset: 5, status: 200, id: "r-17")))
        #expect(text.hasPrefix(#"{"id":"r-17","#))
    }

    /// A framing failure keeps its error (code, message, input offset), its head, its excerpt and byte count.
    @Test func aFailureReadsBackAsTheSameFailure() throws {
        let failure = FramingFailure(
            offset: 900,
            error: RecordError(.truncatedRecord, "input ended inside the body", location: .init(offset: 950)),
            status: 200, headers: HeaderFields([("Content-Type", "text/html")]), excerpt: Array("<html>".utf8),
            bytes: 4000, url: "http://a/", warc: WARCRecordInfo(type: "response", recordId: "<urn:uuid:2>"))
        let text = line(.failure(failure))
        #expect(
            text.contains(#""error":{"code":"truncatedRecord","message":"input ended inside the body","offset":950}"#))
        let items = readBack(text)
        guard case .failure(let back)? = items.first else {
            Issue.record("not a failure: \(items)")
            return
        }
        #expect(back.error == failure.error)
        #expect(back.status == 200 && back.headers?.fields == failure.headers?.fields)
        #expect(back.excerpt == failure.excerpt && back.bytes == 4000)
        #expect(back.url == failure.url && back.warc == failure.warc && back.id == "crawl.warc.gz:1234")
    }

    /// A record over the body limit read as it was skipped: its digest's check and warnings read back too
    /// (docs/output.md#records-over-the-body-limit).
    @Test func anOverLimitFailureKeepsItsDigestAndWarnings() throws {
        var failure = FramingFailure(
            offset: 0, error: RecordError(.limitExceeded, "block of 9 bytes exceeds 1 + 1 bytes"), status: 200,
            headers: HeaderFields([("Content-Type", "application/json")]), excerpt: Array("WARC/1.1".utf8),
            bytes: 4000, url: "http://a/", warc: WARCRecordInfo(type: "response", recordId: "<urn:uuid:2>"))
        failure.warc?.digest = .mismatch
        failure.bodyBytes = 3000
        failure.warnings = ["the body was not decoded; its first bytes look like application/json (sniffed)"]
        let text = line(.failure(failure))
        guard case .failure(let back)? = readBack(text).first else {
            Issue.record("not a failure: \(text)")
            return
        }
        #expect(back.warc?.digest == .mismatch && back.warnings == failure.warnings && back.bodyBytes == 3000)
        #expect(back.error == failure.error && back.status == 200 && back.bytes == 4000)
    }

    /// A failure cut off before any head has no status; its line still reads back as the failure.
    @Test func aFailureWithoutAHead() {
        let failure = FramingFailure(
            offset: 3, error: RecordError(.malformedRecord, "expected a status line"), excerpt: [0x00, 0x01], bytes: 2)
        guard case .failure(let back)? = readBack(line(.failure(failure))).first else {
            Issue.record("not a failure")
            return
        }
        #expect(back.error == failure.error && back.status == nil && back.headers == nil && back.excerpt == [0, 1])
    }
}
