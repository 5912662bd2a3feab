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
}
