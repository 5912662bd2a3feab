import Testing

@testable import RespDecode

/// The pieces of a CDXJ index line (docs/output.md#cdxj-index) that the end-to-end comparison with cdxj-indexer's
/// output does not reach on every branch.
@Suite("CDXJ writer")
struct CDXJWriterTests {
    static func line(_ record: ResponseRecord, types: Set<String>? = CDXJWriter.recordTypes) -> String {
        let out = OutputBuffer()
        _ = CDXJWriter(types: types).writeLine(
            for: .record(record), source: ResultLine.Source(seq: 0, offset: 10, length: 20, input: "dir/a.warc"),
            into: out)
        return String(decoding: out.array, as: UTF8.self)
    }

    static func record(type: String, url: String? = "http://example.com/", contentType: String? = "text/html")
        -> ResponseRecord
    {
        var headers = HeaderFields()
        if let contentType { headers.append(name: "Content-Type", value: contentType) }
        var record = ResponseRecord(offset: 10, status: 200, headers: headers, body: Array("abc".utf8), url: url)
        record.warc = WARCRecordInfo(type: type, date: "2017-03-06T04:02:06.123Z")
        return record
    }

    /// warcio's iso_date_to_timestamp: the first six runs of digits, missing time fields 0.
    @Test(arguments: [
        ("2017-03-06T04:02:06Z", "20170306040206"), ("2017-03-06T04:02:06.123456Z", "20170306040206"),
        ("2017-03-06", "20170306000000"), ("2017-3-6T4:2:6Z", "20170306040206"), ("96-01-02", "00960102000000"),
    ])
    func timestamps(_ date: String, _ expected: String) {
        #expect(CDXJWriter.timestamp(date) == expected)
    }

    @Test func aDateWithoutADayIsNotIndexed() {
        #expect(CDXJWriter.timestamp("2017-03") == nil)
        var record = Self.record(type: "response")
        record.warc?.date = "someday"
        #expect(Self.line(record).isEmpty)
    }

    /// Python's json.dumps: `ensure_ascii`, lower-case hex, surrogate pairs.
    @Test func stringsAsPythonWritesThem() {
        let out = OutputBuffer()
        CDXJWriter.appendPythonJSON("a\"\\\n\u{1}é\u{7F}😀/", to: out)
        #expect(String(decoding: out.array, as: UTF8.self) == #""a\"\\\n\u0001\u00e9"# + "\u{7F}" + #"\ud83d\ude00/""#)
    }

    /// A record without WARC-Payload-Digest gets the Base32 SHA-1 of its payload (sha1("abc")).
    @Test func aMissingDigestIsComputed() {
        let line = Self.line(Self.record(type: "resource"))
        #expect(
            line
                == #"com,example)/ 20170306040206 {"url": "http://example.com/", "mime": "text/html", "#
                + #""digest": "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5", "length": "20", "offset": "10", "#
                + #""filename": "a.warc"}"# + "\n")
        #expect(PayloadDigest.base32([0xFF]) == "74======")
    }

    /// A revisit: `warc/revisit`, the status only when its block was HTTP, the digest as written, none computed.
    @Test func revisits() {
        var record = Self.record(type: "revisit", contentType: "application/json; charset=utf-8")
        #expect(Self.line(record).contains(#"{"url": "http://example.com/", "mime": "warc/revisit", "length""#))
        record.warc?.httpBlock = true
        record.warc?.payloadDigest = "sha1:X"
        #expect(Self.line(record).contains(#""mime": "warc/revisit", "status": "200", "digest": "sha1:X", "#))
    }

    /// Responses take the HTTP Content-Type (up to `;`) and status only when read as HTTP; warc-fields metadata is
    /// left out with cdxj-indexer's default types only; records without WARC fields are not indexed.
    @Test func whatIsIndexed() {
        var response = Self.record(type: "response", contentType: "text/html; charset=utf-8")
        #expect(!Self.line(response).contains("mime") && !Self.line(response).contains("status"))
        response.warc?.httpBlock = true
        #expect(Self.line(response).contains(#""mime": "text/html", "status": "200""#))
        let fields = Self.record(type: "metadata", contentType: "application/warc-fields")
        #expect(Self.line(fields).isEmpty)
        #expect(!Self.line(fields, types: nil).isEmpty)
        var plain = Self.record(type: "response")
        plain.warc = nil
        #expect(Self.line(plain).isEmpty)
        let noURL = Self.record(type: "resource", url: nil)
        #expect(Self.line(noURL).hasPrefix(#"- 20170306040206 {"mime": "text/html", "#))
    }

    // MARK: - ARC records (the values below are cdxj-indexer 1.5.0's for the same records in an ARC file)

    /// An ARC record as the framer yields it: the HTTP head's fields and status when `http`.
    static func arcRecord(url: String, date: String, body: String, http: Bool, contentType: String?) -> ResponseRecord {
        var headers = HeaderFields()
        if let contentType { headers.append(name: "Content-Type", value: contentType) }
        var record = ResponseRecord(
            offset: 10, status: http ? 404 : 200, headers: headers, body: Array(body.utf8), url: url,
            arc: ARCRecordInfo(ip: "192.0.2.1", date: date))
        record.arc?.httpBlock = http
        return record
    }

    /// An http record read as HTTP: the HTTP Content-Type (up to `;`) and status, the SHA-1 of the body; the key of
    /// the URL, the timestamp warcio makes of the Archive-date (`2_0240+1`: year 202 → 1900, month 40 → 12, day 1).
    @Test func anARCResponse() {
        let record = Self.arcRecord(
            url: "https://www.example.com/missing?b=2&a=1", date: "2_0240+1", body: "<p>gone</p>", http: true,
            contentType: "text/html;charset=x")
        #expect(
            Self.line(record)
                == #"com,example)/missing?a=1&b=2 19001201235959 {"url": "https://www.example.com/missing?b=2&a=1", "#
                + #""mime": "text/html", "status": "404", "digest": "sha1:HCETNWHBDUVLEDXZ24QD4P4L43WEI42J", "#
                + #""length": "20", "offset": "10", "filename": "a.warc"}"# + "\n")
    }

    /// A dns: record keeps its URL as key, has no mime (warcio's WARC Content-Type of every ARC record is
    /// application/http) and no status; the digest is the whole block's.
    @Test func anARCDNSRecord() {
        let record = Self.arcRecord(
            url: "dns:example.com", date: "2024022930", body: "20240229 example.com. 60 IN A 192.0.2.1\n",
            http: false, contentType: "text/dns")
        #expect(
            Self.line(record)
                == #"dns:example.com 20240229235959 {"url": "dns:example.com", "#
                + #""digest": "sha1:CMZWNHYISHDGYOYSXY53MZ7MBSWAOD2P", "length": "20", "offset": "10", "#
                + #""filename": "a.warc"}"# + "\n")
    }

    /// A de-chunked body's digest is over the payload as stored (`3␍␊abc␍␊0␍␊␍␊`), not over `abc`.
    @Test func anARCChunkedResponse() {
        var record = Self.arcRecord(
            url: "http://example.com/chunked", date: "20240102030405", body: "abc", http: true,
            contentType: "text/plain; charset=utf-8")
        record.status = 200
        let stored = Array("3\r\nabc\r\n0\r\n\r\n".utf8)
        record.arc?.storedChunkFraming = stored.withUnsafeBufferPointer { ChunkFraming(stored: $0, data: [3..<6]) }
        #expect(
            Self.line(record)
                == #"com,example)/chunked 20240102030405 {"url": "http://example.com/chunked", "mime": "text/plain", "#
                + #""status": "200", "digest": "sha1:EZMCEYKLYMOWXPIGFLXFT3WW62PQVRQP", "length": "20", "#
                + #""offset": "10", "filename": "a.warc"}"# + "\n")
    }

    /// ARC records are warcio's `response` records: indexed when `response` is among the types (cdxj-indexer's
    /// `--records`); an http record whose block was not read as HTTP (empty) has no mime and no status.
    @Test func whichARCRecordsAreIndexed() {
        let record = Self.arcRecord(
            url: "http://example.com/empty", date: "19991", body: "", http: false, contentType: "text/html")
        let line =
            #"com,example)/empty 19991231235959 {"url": "http://example.com/empty", "#
            + #""digest": "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", "length": "20", "offset": "10", "#
            + #""filename": "a.warc"}"# + "\n"
        #expect(Self.line(record) == line)
        #expect(Self.line(record, types: nil) == line)
        #expect(Self.line(record, types: ["Response"]) == line)
        #expect(Self.line(record, types: ["resource", "metadata"]).isEmpty)
    }

    /// warcio's timestamp_to_datetime of an Archive-date (each pair checked against warcio 1.8.1): padded to six
    /// characters from `299912`, fields read as Python's int() reads them (white space, a sign, underscores, other
    /// scripts' digits), an unreadable or missing one its largest value, each clamped (the day to its month's).
    @Test(arguments: [
        ("20080430204825", "20080430204825"), ("201404010000000000", "20140401000000"),
        ("2024022930", "20240229235959"), ("19991", "19991231235959"), ("2_0240+1", "19001201235959"),
        ("", "29991231235959"), ("2", "29991231235959"), ("20141226095", "20141226095959"),
        ("18000230", "19000228235959"), ("2014-1-1", "20140101235959"), ("20131709005601", "20131209005601"),
        ("40001965252477", "29991231232459"), ("2010abc", "20101231235959"), ("2023022912", "20230228125959"),
        ("\u{662}\u{660}\u{662}\u{664}\u{660}\u{661}\u{660}\u{662}", "20240102235959"),
        ("2024\t1\u{1C}0", "20240131235959"), ("2024\u{A0}1\u{200B}1", "20240131235959"),
    ])
    func arcTimestamps(_ date: String, _ expected: String) {
        #expect(CDXJWriter.arcTimestamp(date) == expected)
    }
}
