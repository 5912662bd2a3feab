import CZlib
import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// Builds WARC records and gzip members for the WARC framer tests.
enum WARCFixtures {
    /// One record: version line, the fields given (Content-Length added unless `contentLength` says otherwise), the
    /// block, CRLF CRLF.
    static func record(
        _ type: String, uri: String? = "http://example.com/", id: String = "<urn:uuid:1>",
        fields: [(String, String)] = [], block: [UInt8], contentLength: String? = nil, version: String = "1.1",
        trailer: String = "\r\n\r\n"
    ) -> [UInt8] {
        var head =
            "WARC/\(version)\r\nWARC-Type: \(type)\r\nWARC-Record-ID: \(id)\r\nWARC-Date: 2024-01-02T03:04:05Z\r\n"
        if let uri { head += "WARC-Target-URI: \(uri)\r\n" }
        for (name, value) in fields { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(contentLength ?? String(block.count))\r\n\r\n"
        return Array(head.utf8) + block + Array(trailer.utf8)
    }

    static func record(
        _ type: String, uri: String? = "http://example.com/", id: String = "<urn:uuid:1>",
        fields: [(String, String)] = [], block: String, contentLength: String? = nil, version: String = "1.1",
        trailer: String = "\r\n\r\n"
    ) -> [UInt8] {
        record(
            type, uri: uri, id: id, fields: fields, block: Array(block.utf8), contentLength: contentLength,
            version: version, trailer: trailer)
    }

    /// A `response` record holding an HTTP response.
    static func response(
        _ http: String, uri: String = "http://example.com/", id: String = "<urn:uuid:1>",
        fields: [(String, String)] = [],
        contentType: String = "application/http; msgtype=response"
    ) -> [UInt8] {
        record("response", uri: uri, id: id, fields: [("Content-Type", contentType)] + fields, block: http)
    }

    /// `bytes` compressed as one gzip member.
    static func gzipMember(_ bytes: [UInt8], level: Int32 = 6) -> [UInt8] {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        defer {
            deflateEnd(stream)
            stream.deinitialize(count: 1)
            stream.deallocate()
        }
        let status = deflateInit2_(
            stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, zlibVersion(), Int32(MemoryLayout<z_stream>.size)
        )
        precondition(status == Z_OK)
        var input = bytes
        var output = [UInt8](repeating: 0, count: Int(deflateBound(stream, UInt(bytes.count))) + 64)
        let written = input.withUnsafeMutableBufferPointer { inBuffer in
            output.withUnsafeMutableBufferPointer { outBuffer in
                stream.pointee.next_in = inBuffer.baseAddress
                stream.pointee.avail_in = UInt32(inBuffer.count)
                stream.pointee.next_out = outBuffer.baseAddress
                stream.pointee.avail_out = UInt32(outBuffer.count)
                precondition(deflate(stream, Z_FINISH) == Z_STREAM_END)
                return outBuffer.count - Int(stream.pointee.avail_out)
            }
        }
        return Array(output.prefix(written))
    }

    /// Each record its own gzip member (`.warc.gz`); also the members' offsets.
    static func gzipPerRecord(_ records: [[UInt8]]) -> (bytes: [UInt8], offsets: [Int64]) {
        var bytes: [UInt8] = []
        var offsets: [Int64] = []
        for record in records {
            offsets.append(Int64(bytes.count))
            bytes += gzipMember(record)
        }
        return (bytes, offsets)
    }

    static let json = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"foo\":\"bar\"}"

    /// A small WARC of five records of different types.
    static let small: [[UInt8]] = [
        record(
            "warcinfo", uri: nil, id: "<urn:uuid:0>", fields: [("Content-Type", "application/warc-fields")],
            block: "software: test\r\n"),
        response(json, uri: "http://example.com/a", id: "<urn:uuid:1>"),
        record(
            "request", uri: "http://example.com/a", id: "<urn:uuid:2>",
            fields: [("Content-Type", "application/http; msgtype=request")],
            block: "GET /a HTTP/1.1\r\nHost: example.com\r\n\r\n"),
        record(
            "resource", uri: "http://example.com/b.txt", id: "<urn:uuid:3>", fields: [("Content-Type", "text/plain")],
            block: "plain text"),
        record(
            "metadata", uri: "http://example.com/a", id: "<urn:uuid:4>", fields: [("Content-Type", "text/plain")],
            block: "via: test"),
    ]
}

/// Frames `input` fed in pieces of the given sizes (the rest in one piece), and checks payload digests as the
/// workers do.
func warcItems(
    _ input: [UInt8], pieces: [Int] = [], types: Set<String>? = nil, limits: Limits = Limits(),
    verifyDigests: Bool = true
) -> [FramedItem] {
    var framer = WARCFramer(limits: limits, types: types, verifyDigests: verifyDigests)
    return warcItems(&framer, input, pieces: pieces)
}

func warcItems(_ framer: inout WARCFramer, _ input: [UInt8], pieces: [Int] = []) -> [FramedItem] {
    FramerSplits.feed(&framer, input, pieces: pieces).map { $0.checkingPayloadDigest() }
}

/// A compact, comparable summary of a WARC item.
func describeWARC(_ item: FramedItem) -> String {
    switch item {
    case .record(let r):
        var text =
            "@\(r.offset) \(r.warc?.type ?? "-") \(r.status) body=\(String(decoding: r.body, as: UTF8.self).debugDescription)"
        if let digest = r.warc?.digest { text += " digest=\(digest)" }
        if !r.warnings.isEmpty { text += " warnings=\(r.warnings.count)" }
        return text
    case .failure(let f):
        return "@\(f.offset) \(f.error.code) \(f.warc?.type ?? "-")"
    }
}

/// Everything an item says, for comparing runs over differently split input.
func describeWARCFully(_ item: FramedItem) -> String {
    switch item {
    case .record(let r):
        return
            "\(describeWARC(item)) length=\(r.length.map(String.init) ?? "-") url=\(r.url ?? "-") id=\(r.warc?.recordId ?? "-") headers=\(r.headers.fields.map { "\($0.name):\($0.value)" }) trailers=\(r.trailers?.fields.map(\.value) ?? []) warnings=\(r.warnings)"
    case .failure(let f):
        return
            "\(describeWARC(item)) length=\(f.length.map(String.init) ?? "-") \(f.error) url=\(f.url ?? "-") id=\(f.warc?.recordId ?? "-") bytes=\(f.bytes) excerpt=\(f.excerpt.count) status=\(f.status ?? 0)"
    }
}

/// Frames `input` whole, byte by byte and in random splits (``FramerSplits``), as from a pipe and as from a file (where
/// a gzip member cut by a piece waits for the rest); all must agree in every detail, and in the records counted as
/// skipped. Returns the items.
@discardableResult
func warcEverySplit(
    _ input: [UInt8], types: Set<String>? = nil, limits: Limits = Limits(), randomRuns: Int = 30,
    sourceLocation: SourceLocation = #_sourceLocation
) -> [FramedItem] {
    var items: [[FramedItem]] = []
    for fromFile in [false, true] {
        let verdict = FramerSplits.verify(
            input, randomSplits: randomRuns, maxPiece: 97, fromFile: fromFile,
            make: { WARCFramer(limits: limits, types: types) },
            describe: { describeWARCFully($0.checkingPayloadDigest()) },
            state: { "skipped: \($0.skippedRecords.sorted { $0.key < $1.key })" })
        #expect(verdict.mismatches == [], "from a file: \(fromFile)", sourceLocation: sourceLocation)
        items.append(verdict.items.map { $0.checkingPayloadDigest() })
    }
    return items[0]
}

extension FramedItem {
    var record: ResponseRecord? {
        if case .record(let r) = self { return r }
        return nil
    }
    var failure: FramingFailure? {
        if case .failure(let f) = self { return f }
        return nil
    }
}

@Suite("WARC framer")
struct WARCFramerTests {
    // MARK: - Plain, per-record gzip, whole gzip

    @Test func plainPerRecordGzipAndWholeGzipAgree() throws {
        let plain = WARCFixtures.small.flatMap { $0 }
        var plainOffsets: [Int64] = []
        var at = 0
        for record in WARCFixtures.small {
            plainOffsets.append(Int64(at))
            at += record.count
        }
        let (perRecord, memberOffsets) = WARCFixtures.gzipPerRecord(WARCFixtures.small)
        let whole = WARCFixtures.gzipMember(plain)

        let a = warcEverySplit(plain)
        let b = warcEverySplit(perRecord)
        let c = warcEverySplit(whole)
        #expect(a.map(\.offset) == plainOffsets)
        #expect(b.map(\.offset) == memberOffsets)
        // Gzip as a whole: the first record starts the member; the others are at their place in the inflated stream.
        #expect(c.map(\.offset) == plainOffsets)
        func strip(_ item: FramedItem) -> String {
            guard let r = item.record else { return "failure" }
            return "\(r.warc!) \(r.url ?? "-") \(r.status) \(r.headers.fields.map(\.name)) \(r.body)"
        }
        #expect(a.map(strip) == b.map(strip))
        #expect(a.map(strip) == c.map(strip))
        #expect(a.allSatisfy { $0.record?.warnings.isEmpty == true })
        #expect(b.allSatisfy { $0.record?.warnings.isEmpty == true })
        #expect(c.first?.record?.warnings.isEmpty == true)
        for item in c.dropFirst() {
            #expect(
                item.record?.warnings == [
                    "offset is in the decompressed stream: the gzip member at 0 holds more than one record"
                ])
        }
        #expect(a.map { $0.record?.warc?.type } == ["warcinfo", "response", "request", "resource", "metadata"])
    }

    @Test func responseRecordIsTheHTTPResponse() throws {
        let items = warcEverySplit(WARCFixtures.response(WARCFixtures.json, id: "<urn:uuid:r>"))
        let record = try #require(items.first?.record)
        #expect(record.status == 200)
        #expect(record.headers.last("Content-Type") == "application/json")
        #expect(record.body == Array("{\"foo\":\"bar\"}".utf8))
        #expect(record.url == "http://example.com/")
        var info = WARCRecordInfo(type: "response", recordId: "<urn:uuid:r>", date: "2024-01-02T03:04:05Z")
        info.httpBlock = true
        #expect(record.warc == info)
        #expect(record.warnings.isEmpty)
    }

    /// Plain input lends a response's and a resource's stored body (no copy), which keeps its bytes while the input
    /// reads on; a de-chunked body and anything inflated from gzip are bodies of their own.
    @Test func plainInputLendsStoredBodies() throws {
        let chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"
        let file =
            WARCFixtures.response(WARCFixtures.json) + WARCFixtures.record("resource", block: "plain bytes")
            + WARCFixtures.response(chunked, id: "<urn:uuid:2>")
        var framer = WARCFramer()
        var input = FramerInput(capacity: 64)
        input.write(file)
        var items: [FramedItem] = []
        while let item = framer.decodeLast(buffer: &input, seenEOF: true) { items.append(item) }
        input.write([UInt8](repeating: 0, count: 4096)) // the input reads on, into memory of its own
        let records = items.compactMap(\.record)
        #expect(records.map(\.body.isLent) == [true, true, false])
        #expect(
            records.map(\.body.bytes) == [
                Array("{\"foo\":\"bar\"}".utf8), Array("plain bytes".utf8), Array("abc".utf8),
            ])

        let gzipped = warcItems(WARCFixtures.gzipMember(WARCFixtures.response(WARCFixtures.json)))
        let inflated = try #require(gzipped.first?.record)
        #expect(!inflated.body.isLent && inflated.body == Array("{\"foo\":\"bar\"}".utf8))
    }

    @Test(arguments: [
        "application/http; msgtype=response", "application/http;msgtype=response",
        "Application/HTTP; MsgType=\"response\"",
        "application/http", "application/http; charset=utf-8; msgtype=response",
    ])
    func responseContentTypesAreParsed(_ contentType: String) throws {
        let items = warcItems(WARCFixtures.response(WARCFixtures.json, contentType: contentType))
        #expect(try #require(items.first?.record).headers.last("Content-Type") == "application/json")
    }

    @Test func responseWithAnotherContentTypeIsLikeAResource() throws {
        let items = warcItems(WARCFixtures.response(WARCFixtures.json, contentType: "text/plain"))
        let record = try #require(items.first?.record)
        #expect(record.status == 200 && record.headers.fields == [.init(name: "Content-Type", value: "text/plain")])
        #expect(record.body == Array(WARCFixtures.json.utf8))
    }

    @Test func interimResponsesAreSkipped() throws {
        let http = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"
        let record = try #require(warcItems(WARCFixtures.response(http)).first?.record)
        #expect(record.status == 201 && record.body == Array("ok".utf8) && record.warnings.count == 1)
    }

    @Test func httpContentLengthThatDiffersIsAWarning() throws {
        let http = "HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nshort"
        let record = try #require(warcItems(WARCFixtures.response(http)).first?.record)
        #expect(record.body == Array("short".utf8))
        #expect(
            record.warnings == [
                "HTTP Content-Length 50 differs from the 5 body bytes in the record (the WARC Content-Length decides)"
            ])
    }

    @Test func blockWithoutAnHTTPHeadIsMalformed() throws {
        let items = warcEverySplit(
            WARCFixtures.response("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n") + WARCFixtures.small[3])
        let failure = try #require(items.first?.failure)
        #expect(failure.error.code == .malformedRecord && failure.warc?.type == "response")
        #expect(failure.url == "http://example.com/")
        #expect(items.count == 2 && items[1].record?.warc?.type == "resource")
        let garbage = try #require(warcItems(WARCFixtures.response("hello")).first?.failure)
        #expect(garbage.error.code == .malformedRecord)
    }

    @Test func contentEncodingIsLeftForTheDecoders() throws {
        let gz = WARCFixtures.gzipMember(Array("{}".utf8))
        let head = "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(gz.count)\r\n\r\n"
        let block = Array(head.utf8) + gz
        let items = warcItems(
            WARCFixtures.record(
                "response", fields: [("Content-Type", "application/http; msgtype=response")], block: block))
        #expect(try #require(items.first?.record).body == gz)
    }

    // MARK: - Chunked bodies

    static let chunked =
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Sum: 1\r\n\r\n"

    @Test func chunkedResponseIsDechunkedWithTrailers() throws {
        let record = try #require(warcEverySplit(WARCFixtures.response(Self.chunked)).first?.record)
        #expect(record.body == Array("hello world".utf8))
        #expect(record.trailers?.fields == [.init(name: "X-Sum", value: "1")])
        #expect(record.warnings.isEmpty)
    }

    /// A transfer coding before chunked is not undone, and the line says so (found by review: it was silent).
    @Test func transferCodingBeforeChunkedIsNamed() throws {
        let http = "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
        let record = try #require(warcEverySplit(WARCFixtures.response(http)).first?.record)
        #expect(record.body == Array("hello".utf8))
        #expect(record.warnings == ["transfer coding 'gzip' before chunked is not undone"])
    }

    @Test func storedDechunkedBodyIsTakenAsIs() throws {
        // Common Crawl and warcio store the body de-chunked but keep the header.
        for body in ["<html>hello</html>", "abc\nnot a chunk", "5\r\nhelloX", ""] {
            let http = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + body
            let record = try #require(warcItems(WARCFixtures.response(http)).first?.record, "\(body)")
            #expect(record.body == Array(body.utf8))
            #expect(record.warnings.count == (body.isEmpty ? 0 : 1), "\(record.warnings)")
        }
    }

    @Test func chunkErrorAfterTheFirstChunkIsMalformed() throws {
        let http = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\nzz\r\nmore"
        let items = warcEverySplit(WARCFixtures.response(http) + WARCFixtures.small[3])
        let failure = try #require(items.first?.failure)
        #expect(failure.error.code == .malformedRecord && failure.status == 200)
        #expect(failure.error.message.hasPrefix("chunked body: "))
        #expect(items[1].record?.warc?.type == "resource")
        // Unless the writer says it cut the record short: then what was de-chunked is kept.
        let cut = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n9\r\nwor"
        let record = try #require(
            warcItems(WARCFixtures.response(cut, fields: [("WARC-Truncated", "length")])).first?.record)
        #expect(record.body == Array("hello".utf8))
        #expect(record.warc?.truncated == "length")
        #expect(record.warnings.count == 1, "\(record.warnings)")
        #expect(record.warnings[0].hasPrefix("chunked body cut short"), "\(record.warnings)")
    }

    // MARK: - Record types

    @Test func resourceRecord() throws {
        let record = try #require(warcEverySplit(WARCFixtures.small[3]).first?.record)
        #expect(record.status == 200)
        #expect(record.headers.fields == [.init(name: "Content-Type", value: "text/plain")])
        #expect(record.body == Array("plain text".utf8))
        #expect(record.url == "http://example.com/b.txt")
        let bare = try #require(warcItems(WARCFixtures.record("resource", block: "x")).first?.record)
        #expect(bare.headers.isEmpty && bare.body == [0x78])
    }

    @Test func typesNotChosenAreCountedNotYielded() {
        var framer = WARCFramer()
        let items = warcItems(&framer, WARCFixtures.small.flatMap { $0 } + WARCFixtures.small[0])
        #expect(items.map { $0.record?.warc?.type } == ["response", "resource"])
        #expect(framer.skippedRecords == ["warcinfo": 2, "request": 1, "metadata": 1])
        // Per-record gzip counts the same.
        var gz = WARCFramer(types: ["metadata", "REQUEST"])
        let gzItems = warcItems(&gz, WARCFixtures.gzipPerRecord(WARCFixtures.small).bytes)
        #expect(gzItems.map { $0.record?.warc?.type } == ["request", "metadata"])
        #expect(gz.skippedRecords == ["warcinfo": 1, "response": 1, "resource": 1])
        // Counting does not depend on the split.
        warcEverySplit(WARCFixtures.small.flatMap { $0 }, types: WARCFramer.defaultTypes)
    }

    @Test func typesNilYieldsEveryRecord() {
        var framer = WARCFramer(types: nil)
        let items = warcItems(&framer, WARCFixtures.small.flatMap { $0 })
        #expect(items.count == 5 && items.allSatisfy { $0.record != nil })
        #expect(framer.skippedRecords.isEmpty)
    }

    @Test func framingErrorsOfSkippedTypesAreStillFailures() throws {
        var framer = WARCFramer()
        let bad = WARCFixtures.record("warcinfo", block: "abc", contentLength: "1")
        let items = warcItems(&framer, bad + WARCFixtures.small[3])
        #expect(items.count == 2)
        #expect(items[0].failure?.warc?.type == "warcinfo" && items[0].failure?.error.code == .malformedRecord)
        #expect(framer.skippedRecords.isEmpty)
    }

    @Test func revisitWithAnHTTPHead() throws {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 606\r\n\r\n"
        let revisit = WARCFixtures.record(
            "revisit",
            fields: [
                ("Content-Type", "application/http; msgtype=response"),
                ("WARC-Payload-Digest", "sha1:G7HRM7BGOKSKMSXZAHMUQTTV53QOFSMK"),
            ], block: head)
        let record = try #require(warcItems(revisit, types: ["revisit"]).first?.record)
        // The payload is in another record: its digest is not checked here, and the empty body is no surprise.
        #expect(record.status == 200 && record.body.isEmpty && record.warnings.isEmpty && record.warc?.digest == nil)
        #expect(record.headers.last("Content-Type") == "text/html")
    }

    // MARK: - Content-Length

    @Test(arguments: [nil, "-1", "18446744073709551616", "abc", "1 2", "+5", ""])
    func invalidContentLengthIsMalformed(_ value: String?) throws {
        var record = Array("WARC/1.0\r\nWARC-Type: resource\r\nWARC-Record-ID: <urn:uuid:x>\r\n".utf8)
        if let value { record += Array("Content-Length: \(value)\r\n".utf8) }
        record += Array("\r\nsome block\r\n\r\n".utf8)
        let items = warcEverySplit(record + WARCFixtures.small[3])
        #expect(items.count == 2, "\(items.map(describeWARC))")
        let failure = try #require(items.first?.failure)
        #expect(failure.error.code == .malformedRecord && failure.offset == 0)
        #expect(failure.warc?.recordId == "<urn:uuid:x>")
        #expect(failure.bytes == Int64(record.count))
        #expect(items[1].record?.offset == Int64(record.count))
    }

    @Test func differingContentLengthsAreMalformed() {
        let record = Array(
            "WARC/1.0\r\nWARC-Type: resource\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab\r\n\r\n".utf8)
        #expect(warcItems(record).map(describeWARC) == ["@0 malformedRecord resource"])
    }

    @Test func missingWARCTypeIsMalformed() {
        let record = Array("WARC/1.0\r\nContent-Length: 2\r\n\r\nab\r\n\r\n".utf8)
        #expect(
            warcItems(record + WARCFixtures.small[3]).map(describeWARC) == [
                "@0 malformedRecord -", "@\(record.count) resource 200 body=\"plain text\"",
            ])
    }

    // MARK: - Truncation

    /// Every cut inside a record gives a truncatedRecord or malformedRecord item for it; records before it are whole.
    /// A cut after a whole block, in the CRLF CRLF after it, leaves the record whole: it is read, with a warning
    /// (the repair of a separator missing at the end of the input).
    @Test func everyCutOfAPlainWARCGivesAnErrorItem() {
        let records = WARCFixtures.small
        let input = records.flatMap { $0 }
        var ends: [Int] = []
        var at = 0
        for record in records {
            at += record.count
            ends.append(at)
        }
        for cut in 1..<input.count {
            let items = warcItems(Array(input[..<cut]))
            let whole = ends.filter { $0 <= cut }.count
            let failures = items.compactMap(\.failure)
            #expect(items.prefix(whole).allSatisfy { $0.record != nil }, "cut \(cut)")
            if ends.contains(cut) {
                #expect(items.count == whole && failures.isEmpty, "cut \(cut)")
            } else if ends.contains(where: { cut >= $0 - 4 && cut < $0 }) {
                #expect(items.count == whole + 1 && failures.isEmpty, "cut \(cut): \(items.map(describeWARC))")
                #expect(
                    items.last?.record?.warnings.last?.hasPrefix("record end repaired: the block is followed by ")
                        == true, "cut \(cut)")
            } else {
                #expect(
                    failures.count == 1 && [.truncatedRecord, .malformedRecord].contains(failures[0].error.code),
                    "cut \(cut): \(items.map(describeWARC))")
                #expect(items.count == whole + 1, "cut \(cut)")
            }
        }
    }

    @Test func everyCutOfAGzipWARCGivesAnErrorItem() {
        let (input, offsets) = WARCFixtures.gzipPerRecord(WARCFixtures.small)
        for cut in 1..<input.count {
            let items = warcItems(Array(input[..<cut]))
            let whole = offsets.dropFirst().filter { $0 <= cut }.count
            let failures = items.compactMap(\.failure)
            #expect(items.prefix(whole).allSatisfy { $0.record != nil }, "cut \(cut)")
            if offsets.contains(Int64(cut)) {
                #expect(items.count == whole && failures.isEmpty, "cut \(cut)")
            } else {
                // One byte cannot be told from a plain file that starts with garbage.
                let code: RecordError.Code = cut == 1 ? .malformedRecord : .truncatedRecord
                #expect(failures.count == 1 && failures[0].error.code == code, "cut \(cut): \(items.map(describeWARC))")
                #expect(failures.first?.offset == offsets[whole], "cut \(cut)")
                #expect(items.count == whole + 1, "cut \(cut)")
            }
        }
    }

    @Test func truncationMessages() throws {
        let record = WARCFixtures.small[3]
        let inBlock = try #require(warcItems(Array(record.dropLast(6))).first?.failure)
        #expect(inBlock.error.message == "input ended 2 bytes before the end of the block (Content-Length 10)")
        #expect(inBlock.warc?.type == "resource" && inBlock.url == "http://example.com/b.txt")
        #expect(inBlock.bytes == Int64(record.count - 6))
        // Cut after the whole block: the record, repaired.
        let beforeTrailer = try #require(warcItems(Array(record.dropLast(4))).first?.record)
        #expect(
            beforeTrailer.warnings == [
                "record end repaired: the block is followed by nothing then the end of the input, not CRLF CRLF"
            ])
        let gz = WARCFixtures.gzipMember(record)
        let gzCut = try #require(warcItems(Array(gz.dropLast(3))).first?.failure)
        // All of the record was inflated; the member's CRC was not there to check it.
        #expect(gzCut.error.code == .truncatedRecord && gzCut.warc?.type == "resource")
        #expect(gzCut.error.message == "input ended inside the gzip member at 0, before its end")
    }

    /// A Content-Length that overshoots the end of input must not swallow the records inside the block.
    @Test func truncatedBlockKeepsTheRecordsItOverlaps() {
        let liar = WARCFixtures.record("resource", id: "<urn:uuid:liar>", block: "x", contentLength: "5000")
        let input = liar + WARCFixtures.small[3] + WARCFixtures.small[1]
        #expect(
            warcEverySplit(input).map(describeWARC) == [
                "@0 truncatedRecord resource",
                "@\(liar.count) resource 200 body=\"plain text\"",
                "@\(liar.count + WARCFixtures.small[3].count) response 200 body=\"{\\\"foo\\\":\\\"bar\\\"}\"",
            ])
    }

    // MARK: - Record ends

    @Test func blockNotFollowedByCRLFCRLF() throws {
        // Content-Length too short (warcio's example-trunc.warc): the record fails, the next one is read.
        let short = WARCFixtures.record(
            "resource", uri: "http://example.com/s", id: "<urn:uuid:s>", block: "plain text", contentLength: "8")
        let items = warcEverySplit(short + WARCFixtures.small[1])
        #expect(
            items.map(describeWARC) == [
                "@0 malformedRecord resource", "@\(short.count) response 200 body=\"{\\\"foo\\\":\\\"bar\\\"}\"",
            ])
        let failure = try #require(items.first?.failure)
        #expect(
            failure.error.message == "the block is not followed by CRLF CRLF: its Content-Length (8) is probably wrong")
        #expect(failure.url == "http://example.com/s" && failure.warc?.recordId == "<urn:uuid:s>")
        #expect(failure.bytes == Int64(short.count) && failure.excerpt == short)

        // Too long: the block runs into the next record, which is still found.
        let long = WARCFixtures.record("resource", block: "plain text", contentLength: "30")
        let next = WARCFixtures.small[1] + WARCFixtures.small[3]
        #expect(
            warcEverySplit(long + next).map(describeWARC) == [
                "@0 malformedRecord resource", "@\(long.count) response 200 body=\"{\\\"foo\\\":\\\"bar\\\"}\"",
                "@\(long.count + WARCFixtures.small[1].count) resource 200 body=\"plain text\"",
            ])
    }

    @Test func bareLineFeedsAndBlankLinesBetweenRecords() {
        let lf = Array("WARC/1.0\nWARC-Type: resource\nContent-Length: 2\n\nab\n\n".utf8)
        let input = Array("\r\n\n".utf8) + lf + Array("\r\n\r\n\n".utf8) + WARCFixtures.small[3] + Array("\r\n".utf8)
        let items = warcEverySplit(input)
        #expect(
            items.map(describeWARC) == [
                "@3 resource 200 body=\"ab\" warnings=1", "@\(3 + lf.count + 5) resource 200 body=\"plain text\"",
            ])
        #expect(items.first?.record?.warnings == ["record end repaired: the block is followed by LF LF, not CRLF CRLF"])
    }

    @Test func garbageBetweenRecordsIsOneFailure() {
        let input = WARCFixtures.small[3] + Array("garbage\nmore garbage\n".utf8) + WARCFixtures.small[3]
        let items = warcEverySplit(input)
        let n = WARCFixtures.small[3].count
        #expect(
            items.map(describeWARC) == [
                "@0 resource 200 body=\"plain text\"", "@\(n) malformedRecord -",
                "@\(n + 21) resource 200 body=\"plain text\"",
            ])
        #expect(items[1].failure?.bytes == 21)
        #expect(items[1].failure?.error.message == "expected a version line starting with 'WARC/', found 'g'")
    }

    @Test func versions() {
        for version in ["1.0", "1.1", "0.17", "0.18"] {
            let items = warcItems(WARCFixtures.record("resource", block: "x", version: version))
            #expect(items.first?.record != nil, "\(version)")
        }
        let two = WARCFixtures.record("resource", block: "x", version: "2.0")
        let items = warcEverySplit(two + WARCFixtures.small[3])
        #expect(items.map(describeWARC) == ["@0 malformedRecord -", "@\(two.count) resource 200 body=\"plain text\""])
    }

    @Test func headerSectionLimit() {
        let limits = Limits(maxHeaderBytes: 200)
        let big = WARCFixtures.record("resource", fields: [("X-Long", String(repeating: "a", count: 300))], block: "x")
        let items = warcEverySplit(big + WARCFixtures.small[3], limits: limits)
        #expect(items.map(describeWARC) == ["@0 limitExceeded -", "@\(big.count) resource 200 body=\"plain text\""])
    }

    @Test func oversizeBlockIsSkippedWithoutBuffering() throws {
        let limits = Limits(maxHeaderBytes: 1024, maxBodyBytes: 4096)
        let block = [UInt8](repeating: 0x61, count: 1 << 20)
        let big = WARCFixtures.record("resource", block: block)
        let input = big + WARCFixtures.small[3]
        var framer = WARCFramer(limits: limits)
        var most = 0
        let pieces = Array(repeating: 1000, count: input.count / 1000 + 1)
        let items = FramerSplits.feed(&framer, input, pieces: pieces) { framer, input in
            most = max(most, input.writerIndex + framer.bufferedByteCount)
        }
        #expect(most < 8 * 1024, "buffered \(most) bytes")
        #expect(
            items.map(describeWARC) == ["@0 limitExceeded resource", "@\(big.count) resource 200 body=\"plain text\""])
        #expect(items[0].failure?.bytes == Int64(big.count))
        // The same in gzip, and for a type that is not chosen (then nothing is yielded, one record is counted).
        let gz = WARCFixtures.gzipPerRecord([big, WARCFixtures.small[3]]).bytes
        #expect(
            warcItems(gz, limits: limits).map(describeWARC) == [
                "@0 limitExceeded resource", "@\(WARCFixtures.gzipMember(big).count) resource 200 body=\"plain text\"",
            ])
        var skipping = WARCFramer(limits: limits, types: ["response"])
        #expect(warcItems(&skipping, input).isEmpty && skipping.skippedRecords == ["resource": 2])
        // A declared length far beyond the input allocates nothing: the record is cut short.
        let liar = WARCFixtures.record("resource", block: "x", contentLength: "1000000000000000")
        #expect(warcItems(liar, limits: limits).map(describeWARC) == ["@0 truncatedRecord resource"])
    }

    // MARK: - gzip members

    @Test func corruptMiddleMemberCostsOneRecord() throws {
        let records = [WARCFixtures.small[1], WARCFixtures.small[3], WARCFixtures.small[1]]
        let members = records.map { WARCFixtures.gzipMember($0) }
        for damage in ["deflate data", "CRC"] {
            var middle = members[1]
            if damage == "CRC" { middle[middle.count - 6] ^= 0xFF } else { middle[14] ^= 0xFF }
            let input = members[0] + middle + members[2]
            let items = warcEverySplit(input)
            #expect(items.count == 3, "\(damage): \(items.map(describeWARC))")
            #expect(items[0].record?.offset == 0)
            let failure = try #require(items[1].failure)
            #expect(failure.error.code == .malformedRecord && failure.offset == Int64(members[0].count))
            #expect(
                failure.error.message.hasPrefix("the gzip member at \(members[0].count) is corrupt: "),
                "\(failure.error)")
            #expect(items[2].record?.offset == Int64(members[0].count + middle.count))
        }
    }

    /// After a stop (`decodeLast` before the input ended), a member that waits for the rest of a file is no longer
    /// waited for: zlib reports it, and the whole members behind it get their items, as from a pipe.
    @Test func aStopEndsTheWaitForACutMember() throws {
        var corrupt = WARCFixtures.gzipMember(WARCFixtures.small[3])
        corrupt[14] ^= 0xFF
        let whole = [1, 3, 1].map { WARCFixtures.gzipMember(WARCFixtures.small[$0]) }
        let input = corrupt + whole.flatMap { $0 }
        var described: [[String]] = []
        for fromFile in [false, true] {
            var framer = WARCFramer(limits: Limits())
            var buffer = FramerInput()
            buffer.readsWithoutWaiting = fromFile
            buffer.write(input)
            var items: [FramedItem] = []
            while let item = framer.decode(buffer: &buffer) { items.append(item) }
            while let item = framer.decodeLast(buffer: &buffer, seenEOF: false) { items.append(item) }
            described.append(items.map(describeWARC))
        }
        #expect(described[1] == described[0])
        #expect(described[0].count == 4 && described[0].first?.contains("malformedRecord") == true, "\(described[0])")
    }

    /// A member that inflates to far more than it is (a bomb) is inflated only as framing asks for it.
    @Test func inflatedDataIsBoundedByWhatFramingHolds() {
        let limits = Limits(maxHeaderBytes: 1024, maxBodyBytes: 64 * 1024)
        let zeros = [UInt8](repeating: 0, count: 16 << 20)
        let oversize = WARCFixtures.gzipMember(WARCFixtures.record("resource", block: zeros), level: 1)
        let garbage = WARCFixtures.gzipMember(zeros, level: 1)
        let next = WARCFixtures.gzipMember(WARCFixtures.small[3])
        for (input, expected) in [
            (oversize + next, ["@0 limitExceeded resource", "@\(oversize.count) resource 200 body=\"plain text\""]),
            (garbage + next, ["@0 malformedRecord -", "@\(garbage.count) resource 200 body=\"plain text\""]),
        ] {
            for fromFile in [false, true] {
                var framer = WARCFramer(limits: limits)
                var most = 0
                let pieces = Array(repeating: 4096, count: input.count / 4096 + 1)
                let items = FramerSplits.feed(&framer, input, pieces: pieces, fromFile: fromFile) { framer, _ in
                    most = max(most, framer.bufferedByteCount)
                }
                #expect(items.map(describeWARC) == expected)
                #expect(most <= 256 * 1024, "buffered \(most) bytes")
            }
        }
    }

    @Test func garbageAfterTheLastMember() throws {
        let gz = WARCFixtures.gzipMember(WARCFixtures.small[3])
        let items = warcEverySplit(gz + Array("trailing junk".utf8))
        #expect(items.map(describeWARC) == ["@0 resource 200 body=\"plain text\"", "@\(gz.count) malformedRecord -"])
        // A gzip member right after the junk is read again.
        let again = warcEverySplit(gz + Array("junk".utf8) + gz)
        #expect(
            again.map(describeWARC) == [
                "@0 resource 200 body=\"plain text\"", "@\(gz.count) malformedRecord -",
                "@\(gz.count + 4) resource 200 body=\"plain text\"",
            ])
    }

    /// Members that fail before giving output, one after another, are each an item: no record goes without a line.
    @Test func consecutiveCorruptMembersAreEachReported() throws {
        let records = (0..<4).map {
            WARCFixtures.response(WARCFixtures.json, uri: "http://x/\($0)", id: "<urn:x:\($0)>")
        }
        for damage in ["header flags", "deflate data"] {
            var members = records.map { WARCFixtures.gzipMember($0) }
            for k in [1, 2] {
                if damage == "header flags" {
                    members[k][3] = 0xE0
                } else {
                    members[k][12] ^= 0xFF
                    members[k][13] ^= 0xFF
                }
            }
            var offsets: [Int] = []
            var total = 0
            for member in members {
                offsets.append(total)
                total += member.count
            }
            let items = warcEverySplit(members.flatMap { $0 })
            #expect(items.count == 4, "\(damage): \(items.map(describeWARC))")
            #expect(items.first?.record?.offset == 0)
            #expect(items.dropFirst().first?.failure?.offset == Int64(offsets[1]), "\(damage)")
            #expect(items.dropFirst(2).first?.failure?.offset == Int64(offsets[2]), "\(damage)")
            #expect(items.last?.record?.offset == Int64(offsets[3]), "\(damage)")
        }
    }

    /// An oversize Content-Length in a per-record `.warc.gz` ends at the next member that starts a record.
    @Test func oversizeLengthEndsAtTheNextRecordMember() throws {
        let limits = Limits(maxHeaderBytes: 1024, maxBodyBytes: 4096)
        let liar = WARCFixtures.record("resource", block: "x", contentLength: "99999999999")
        let records = [WARCFixtures.small[3], liar] + Array(repeating: WARCFixtures.small[3], count: 5)
        let (input, offsets) = WARCFixtures.gzipPerRecord(records)
        let items = warcEverySplit(input, limits: limits)
        #expect(items.count == 7, "\(items.map(describeWARC))")
        let failure = try #require(items.dropFirst().first?.failure)
        #expect(failure.error.code == .limitExceeded && failure.offset == offsets[1], "\(failure.error)")
        #expect(items.dropFirst(2).map { $0.record?.offset } == offsets.dropFirst(2).map { $0 })
        // A type not chosen: the record cut short is one malformedRecord, the others are counted.
        var framer = WARCFramer(limits: limits, types: ["response"])
        #expect(warcItems(&framer, input).map(describeWARC) == ["@\(offsets[1]) malformedRecord resource"])
        #expect(framer.skippedRecords == ["resource": 6])
    }

    /// Plain records after gzip members, and gzip members after plain records, are framed; none is lost.
    @Test func plainAndGzipMixed() {
        let plain = (1...3).map { WARCFixtures.response(WARCFixtures.json, uri: "http://x/\($0)", id: "<urn:x:\($0)>") }
        let first = WARCFixtures.gzipMember(WARCFixtures.small[3])
        let gzThenPlain = warcEverySplit(first + plain.flatMap { $0 })
        #expect(
            gzThenPlain.map { $0.record?.offset } == [
                0, Int64(first.count), Int64(first.count + plain[0].count),
                Int64(first.count + plain[0].count + plain[1].count),
            ], "\(gzThenPlain.map(describeWARC))")
        let plainThenGz = warcEverySplit(plain[0] + first + first + plain[1])
        #expect(
            plainThenGz.map { $0.record?.offset } == [
                0, Int64(plain[0].count), Int64(plain[0].count + first.count),
                Int64(plain[0].count + 2 * first.count),
            ], "\(plainThenGz.map(describeWARC))")
        // Garbage between members is one framing failure; the records around it are kept.
        let junk = warcEverySplit(first + Array("junk\n".utf8) + plain[0] + first)
        #expect(
            junk.map(describeWARC) == [
                "@0 resource 200 body=\"plain text\"", "@\(first.count) malformedRecord -",
                "@\(first.count + 5) response 200 body=\"{\\\"foo\\\":\\\"bar\\\"}\"",
                "@\(first.count + 5 + plain[0].count) resource 200 body=\"plain text\"",
            ])
    }

    /// NUL bytes and white space after the last member (or record) are filler; other trailing bytes are one failure.
    @Test func paddingAtTheEndIsFiller() {
        let gz = WARCFixtures.gzipPerRecord([WARCFixtures.small[3], WARCFixtures.small[1]]).bytes
        for padding in [[UInt8](repeating: 0, count: 512), [0x0A], Array(" \r\n\t\0".utf8)] {
            #expect(warcEverySplit(gz + padding).map { $0.record != nil } == [true, true], "\(padding.count)")
            let plain = WARCFixtures.small[3] + padding
            #expect(warcEverySplit(plain).map { $0.record != nil } == [true], "\(padding.count)")
        }
        let junk = warcEverySplit(gz + [0, 0, 0x78])
        #expect(junk.map(describeWARC).last == "@\(gz.count) malformedRecord -")
        #expect(junk.count == 3)
        // Padding followed by a record: the padding is a failure, the record is kept.
        let before = warcEverySplit([0, 0] + WARCFixtures.small[3])
        #expect(before.map(describeWARC) == ["@0 malformedRecord -", "@2 resource 200 body=\"plain text\""])
    }

    @Test func recordSplitAcrossMembers() {
        // Members that do not follow records (warcio's example-wrong-chunks.warc.gz): the inflated stream is framed.
        let plain = WARCFixtures.small[1] + WARCFixtures.small[3]
        let cut = WARCFixtures.small[1].count + 10
        let first = WARCFixtures.gzipMember(Array(plain[..<40]))
        let second = WARCFixtures.gzipMember(Array(plain[40..<cut]))
        let third = WARCFixtures.gzipMember(Array(plain[cut...]))
        let items = warcEverySplit(first + second + third)
        #expect(
            items.map(describeWARC) == [
                "@0 response 200 body=\"{\\\"foo\\\":\\\"bar\\\"}\"",
                "@\(WARCFixtures.small[1].count) resource 200 body=\"plain text\" warnings=1",
            ])
        #expect(
            items[1].record?.warnings == [
                "offset is in the decompressed stream: the gzip member at \(first.count) holds more than one record"
            ])
    }

    @Test func oneMemberPerByte() {
        let plain = WARCFixtures.small[3] + WARCFixtures.small[1]
        let members = plain.map { WARCFixtures.gzipMember([$0]) }
        let items = warcEverySplit(members.flatMap { $0 }, randomRuns: 5)
        #expect(
            items.map(describeWARC) == [
                "@0 resource 200 body=\"plain text\"",
                "@\(members.prefix(WARCFixtures.small[3].count).map(\.count).reduce(0, +)) response 200 body=\"{\\\"foo\\\":\\\"bar\\\"}\"",
            ])
    }

    @Test func emptyMembersAndFillerBeforeARecordKeepTheMemberOffset() {
        let empty = WARCFixtures.gzipMember([])
        let record = WARCFixtures.gzipMember(Array("\r\n".utf8) + WARCFixtures.small[3])
        let items = warcEverySplit(empty + record + empty)
        #expect(items.map(describeWARC) == ["@\(empty.count) resource 200 body=\"plain text\""])
    }

    @Test func gzipExtraFieldIsSkipped() throws {
        // FLG.FEXTRA with a subfield, as in jwarc's gzip_extra_sl.warc.gz.
        var member = WARCFixtures.gzipMember(WARCFixtures.small[3])
        member[3] |= 0x04
        member.insert(contentsOf: [0x06, 0x00, 0x73, 0x6C, 0x02, 0x00, 0x01, 0x02], at: 10)
        #expect(warcEverySplit(member).map(describeWARC) == ["@0 resource 200 body=\"plain text\""])
    }

    // MARK: - Digests

    static let textSHA1Base32 = "3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ" // sha1 of ""

    @Test(arguments: [
        ("sha1:T6KEHOHT3A3BKQPYPESWFMYFB5ZB5ZJU", DigestCheck?.some(.ok)), // Base32
        ("sha1:9f9443b8f3d8361541f8792562b3050f721ee534", .ok), // hex
        ("SHA1:9F9443B8F3D8361541F8792562B3050F721EE534", .ok),
        ("sha1:n5RDuPPYNhVB+HklYrMFD3Ie5TQ=", .ok), // base64
        ("sha1:n5RDuPPYNhVB-HklYrMFD3Ie5TQ", .ok), // base64url, unpadded
        ("sha-1:t6kehoht3a3bkqpypeswfmyfb5zb5zju", .ok),
        ("md5:MbxcK4/U8gzXRzR7dQSjhQ==", .ok),
        ("sha256:c9ecf5e54c7b3f2640ecca21f96d4c3625a2b7935104f41c5ede29935a9e52c9", .ok),
        ("sha256:1e25ffe2b6c0b0a8e7b8b1e8e4cb7d5cd1c1d9a0c5d1a6bd2b4f5a98e8e4c2f0", .mismatch),
        ("sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", .mismatch),
        ("sha1:1112H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ", .mismatch), // not Base32 (warcio's example-digest.warc)
        ("md5:dgS4u3t6FaNI1SzsZo5ULw==", .mismatch),
        ("crc32:12345678", nil),
        ("sha1:tooshort", nil),
        ("no colon", nil),
    ])
    func payloadDigestOfAResource(_ field: String, _ expected: DigestCheck?) throws {
        let input = WARCFixtures.record("resource", fields: [("WARC-Payload-Digest", field)], block: "plain text")
        let record = try #require(warcItems(input).first?.record)
        #expect(record.warc?.digest == expected, "\(field)")
        if expected == nil || field.hasPrefix("sha1:111") {
            #expect(record.warnings.count == 1, "\(field)")
        } else {
            #expect(record.warnings.isEmpty, "\(field)")
        }
        var off = WARCFramer(verifyDigests: false)
        let unchecked = try #require(warcItems(&off, input).first?.record)
        #expect(unchecked.warc?.digest == nil && unchecked.warnings.isEmpty)
    }

    @Test func digestAlgorithms() throws {
        let body = Array("plain text".utf8)
        for algorithm in [PayloadDigest.Algorithm.sha1, .sha256, .sha512, .md5] {
            let digest = try #require(body.withUnsafeBufferPointer { PayloadDigest.digest(algorithm, of: $0) })
            #expect(digest.count == algorithm.length)
            let hex = digest.map { String($0, radix: 16).leftPadded(to: 2) }.joined()
            let input = WARCFixtures.record(
                "resource", fields: [("WARC-Payload-Digest", "\(algorithm.rawValue):\(hex)")], block: body)
            #expect(try #require(warcItems(input).first?.record).warc?.digest == .ok, "\(algorithm)")
        }
        #expect(PayloadDigest.digest(.sha1, of: UnsafeBufferPointer(start: nil, count: 0)) != nil)
    }

    @Test func payloadDigestOfAResponseIsOverTheBodyChunkedOrNot() throws {
        func digest(_ text: String) -> String {
            let bytes = Array(text.utf8)
            return "sha1:"
                + bytes.withUnsafeBufferPointer { PayloadDigest.digest(.sha1, of: $0)! }.map {
                    String($0, radix: 16).leftPadded(to: 2)
                }.joined()
        }
        let storedChunks = "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Sum: 1\r\n\r\n"
        for (value, expected) in [
            (digest("hello world"), DigestCheck.ok), (digest(storedChunks), .ok), (digest("hello"), .mismatch),
        ] {
            let record = try #require(
                warcItems(WARCFixtures.response(Self.chunked, fields: [("WARC-Payload-Digest", value)])).first?.record)
            #expect(record.warc?.digest == expected)
        }
        let plain = try #require(
            warcItems(
                WARCFixtures.response(WARCFixtures.json, fields: [("WARC-Payload-Digest", digest("{\"foo\":\"bar\"}"))])
            )
            .first?.record)
        #expect(plain.warc?.digest == .ok)
    }

    /// The worker rebuilds a de-chunked body as stored from the body and the bytes de-chunking removed (no copy of the
    /// payload is kept): random chunkings, with extensions, bare LFs, trailers and cut-short bodies of truncated
    /// records, each check the digest of the stored form as the framer left it.
    @Test func storedChunkedPayloadIsRebuiltForItsDigest() throws {
        func sha1(_ bytes: [UInt8]) -> String {
            "sha1:"
                + bytes.withUnsafeBufferPointer { PayloadDigest.digest(.sha1, of: $0)! }.map {
                    String($0, radix: 16).leftPadded(to: 2)
                }.joined()
        }
        var generator = SplitMix64(seed: 18)
        var checked = 0
        for round in 0..<300 {
            let eol = generator.next() % 4 == 0 ? "\n" : "\r\n"
            var stored = ""
            var data = ""
            let chunks = Int(generator.next() % 6)
            for _ in 0..<chunks {
                let size = Int(generator.next() % 40) + 1
                let chunk = String((0..<size).map { _ in Character(Unicode.Scalar(UInt8(97 + generator.next() % 26))) })
                stored += String(size, radix: 16) + (generator.next() % 3 == 0 ? ";x=1" : "") + eol + chunk + eol
                data += chunk
            }
            let truncated = round % 5 == 4
            if truncated {
                stored += "ff" + eol + "cut" // a chunk that runs past the end of the block
            } else {
                stored += "0" + eol + (generator.next() % 2 == 0 ? "X-Sum: 1" + eol : "") + eol
            }
            let http = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + stored
            var fields = [("WARC-Payload-Digest", sha1(Array(stored.utf8)))]
            if truncated { fields.append(("WARC-Truncated", "length")) }
            var framer = WARCFramer()
            let item = try #require(FramerSplits.feed(&framer, WARCFixtures.response(http, fields: fields)).first)
            let record = try #require(item.checkingPayloadDigest().record)
            if truncated && chunks == 0 {
                // Not one chunk frames: the body was stored de-chunked, and is taken as it is.
                #expect(record.body == Array(stored.utf8), "\(round)")
                #expect(item.record?.warc?.pendingDigest?.chunkFraming == nil)
            } else {
                let pending = try #require(item.record?.warc?.pendingDigest?.chunkFraming, "round \(round)")
                #expect(pending.bytes.count == stored.utf8.count - data.utf8.count, "only what de-chunking removed")
                #expect(record.body == Array(data.utf8), "\(round)")
            }
            #expect(record.warc?.digest == .ok, "round \(round): \(stored.debugDescription)")
            checked += 1
        }
        #expect(checked == 300)
    }

    @Test func payloadDigestOfARequestIsOverItsBody() throws {
        let request = WARCFixtures.record(
            "request",
            fields: [
                ("Content-Type", "application/http; msgtype=request"),
                ("WARC-Payload-Digest", "sha1:\(Self.textSHA1Base32)"),
            ], block: "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n")
        let record = try #require(warcItems(request).first?.record)
        #expect(record.warc?.digest == .ok && record.body.count == 37)
    }

    // MARK: - Fields

    @Test func warcTruncatedIsReported() throws {
        let input = WARCFixtures.record("resource", fields: [("WARC-Truncated", "length")], block: "x")
        let record = try #require(warcItems(input).first?.record)
        #expect(record.warc?.truncated == "length")
        #expect(record.warnings.isEmpty)
        let untruncated = try #require(warcItems(WARCFixtures.record("resource", block: "x")).first?.record)
        #expect(untruncated.warc?.truncated == nil)
    }

    @Test func targetURIRepairs() throws {
        let wget = try #require(
            warcItems(WARCFixtures.record("resource", uri: "<http://example.com/>", block: "x")).first?.record)
        #expect(wget.url == "http://example.com/" && wget.warnings.isEmpty)
        let spaces = try #require(
            warcItems(WARCFixtures.record("resource", uri: "file:///example with spaces.png", block: "x")).first?.record
        )
        #expect(spaces.url == "file:///example%20with%20spaces.png")
        #expect(spaces.warnings == ["spaces in WARC-Target-URI replaced by %20"])
    }

    @Test func foldedAndUTF8FieldsInTheHeader() throws {
        let text =
            "WARC/1.0\nWARC-Type: metadata\nWhitespace:     one  two\nFold: a\n b\nFold-Trim: a\n  b\n c\n"
            + "Snowman: \u{2603}\nContent-Length: 0\n\n"
        let header = try Array(text.utf8).withUnsafeBufferPointer { try WARCHeader.parse($0).get() }
        #expect(header.version == "1.0")
        #expect(header.fields.last("Whitespace") == "one  two")
        #expect(header.fields.last("Fold") == "a b")
        #expect(header.fields.last("Fold-Trim") == "a b c")
        #expect(header.fields.last("Snowman") == "\u{2603}")
        #expect(header.warnings.count == 3)
        let items = warcEverySplit(Array((text + "\n\n").utf8))
        let record = try #require(items.first?.record)
        // The three header warnings, and LF LF after the block.
        #expect(record.warc?.type == "metadata" && record.body.isEmpty && record.warnings.count == 4)
    }

    @Test func emptyInputGivesNothing() {
        #expect(warcItems([]).isEmpty)
        #expect(warcItems([0x1F]).map(describeWARC) == ["@0 malformedRecord -"])
        #expect(warcItems([0x1F, 0x8B]).map(describeWARC) == ["@0 truncatedRecord -"])
    }

    /// Every case above in one stream, plain and gzip per record: whole, byte by byte and random splits agree.
    @Test func anySplitGivesTheSameItems() {
        let records: [[UInt8]] =
            WARCFixtures.small + [
                WARCFixtures.response(Self.chunked),
                Array("garbage\n".utf8),
                WARCFixtures.record("resource", block: "plain text", contentLength: "8"),
                WARCFixtures.record(
                    "resource", fields: [("WARC-Payload-Digest", "sha1:\(Self.textSHA1Base32)")], block: ""),
                WARCFixtures.record("resource", block: "x", contentLength: "-1"),
                WARCFixtures.small[3],
                WARCFixtures.record("resource", block: "x", contentLength: "100"),
            ]
        let plain = warcEverySplit(records.flatMap { $0 })
        #expect(plain.count == 12, "\(plain.map(describeWARC))")
        let gz = warcEverySplit(WARCFixtures.gzipPerRecord(records).bytes)
        #expect(gz.count == 12, "\(gz.map(describeWARC))")
        warcEverySplit(WARCFixtures.gzipMember(records.flatMap { $0 }))
    }
}
