import RespDecodeTestSupport
import Testing

@testable import RespDecode

// MARK: - Helpers shared by the JSON-based framers' tests (HAR, ndjson)

/// Everything an item of the HAR or ndjson framer says, for comparing runs over differently split input.
func jsonFramedSummary(_ item: FramedItem) -> String {
    switch item {
    case .record(let r):
        var text = "@\(r.offset) \(r.status) body=\(String(decoding: r.body, as: UTF8.self).debugDescription)"
        text += " headers=\(r.headers.fields.map { "\($0.name):\($0.value)" })"
        if let url = r.url { text += " url=\(url)" }
        if let method = r.method { text += " method=\(method)" }
        if let id = r.id { text += " id=\(id)" }
        if r.contentDecoded { text += " decoded" }
        if !r.warnings.isEmpty { text += " warnings=\(r.warnings)" }
        return text
    case .failure(let f):
        var text = "@\(f.offset) \(f.error.code) bytes=\(f.bytes) \"\(f.error.message)\""
        if let location = f.error.location { text += " at=\(location.offset)" }
        if let status = f.status { text += " status=\(status)" }
        if let url = f.url { text += " url=\(url)" }
        if let method = f.method { text += " method=\(method)" }
        if let id = f.id { text += " id=\(id)" }
        text += " excerpt=\(String(decoding: f.excerpt, as: UTF8.self).debugDescription)"
        return text
    }
}

/// Frames `input` with framers from `make` whole, byte by byte (when `byteByByte`) and in `randomSplits` random
/// splits (``FramerSplits``); every run must give the same items in every detail. Returns the whole run's items.
func framedInEverySplit<F: RecordFramer>(
    _ input: [UInt8], byteByByte: Bool = true, randomSplits: Int = 50, maxPiece: Int = 9,
    sourceLocation: SourceLocation = #_sourceLocation, _ make: () -> F
) -> [FramedItem] {
    let verdict = FramerSplits.verify(
        input, byteByByte: byteByByte, randomSplits: randomSplits, maxPiece: maxPiece,
        seed: UInt64(input.count) &* 31 &+ 7, make: make, describe: jsonFramedSummary)
    #expect(verdict.mismatches == [], sourceLocation: sourceLocation)
    return verdict.items
}

/// Checks what any item list must keep, whatever the input: offsets increase, a failure's bytes end before the next
/// item begins and within the input, and excerpts respect the cap.
func checkFramedContract(_ items: [FramedItem], inputCount: Int, limits: Limits, _ label: String) {
    var previousEnd: Int64 = 0
    for item in items {
        #expect(
            item.offset >= previousEnd, "\(label): item at \(item.offset) overlaps the one before (ends \(previousEnd))"
        )
        switch item {
        case .record(let record):
            previousEnd = record.offset + 1
        case .failure(let failure):
            #expect(
                failure.bytes >= 0 && failure.offset + failure.bytes <= Int64(inputCount),
                "\(label): \(jsonFramedSummary(item))")
            #expect(failure.excerpt.count <= limits.maxErrorBodyBytes, "\(label)")
            previousEnd = failure.offset + max(failure.bytes, 1)
        }
    }
}

// MARK: - HAR documents for tests

enum HARText {
    /// A HAR document around `entries` (JSON texts), with the usual members before and `after` them.
    static func document(
        _ entries: [String], before: String = #""version":"1.2","creator":{"name":"test","version":"1"},"#,
        after: String = #","pages":[]"#
    ) -> String {
        #"{"log":{"# + before + #""entries":["# + entries.joined(separator: ",\n") + "]" + after + "}}"
    }

    /// One entry.
    static func entry(
        status: String = "200", headers: String = #"[{"name":"Content-Type","value":"text/plain"}]"#,
        content: String = #"{"size":2,"mimeType":"text/plain","text":"hi"}"#,
        url: String = "https://example.com/", method: String = "GET", extra: String = ""
    ) -> String {
        #"{"startedDateTime":"2024-01-01T00:00:00Z","request":{"method":"\#(method)","url":"\#(url)","headers":[]},"#
            + #""response":{"status":\#(status),"statusText":"","headers":\#(headers),"content":\#(content)\#(extra)},"#
            + #""timings":{"wait":1}}"#
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
}

@Suite("HAR framer")
struct HARFramerTests {
    private func frame(_ text: String, limits: Limits = Limits()) -> [FramedItem] {
        framedInEverySplit(HARText.bytes(text)) { HARFramer(limits: limits) }
    }

    private func frameOnce(_ bytes: [UInt8], limits: Limits = Limits()) -> [FramedItem] {
        var framer = HARFramer(limits: limits)
        return framer.frameAll(bytes)
    }

    private func records(_ items: [FramedItem]) -> [ResponseRecord] {
        items.compactMap { if case .record(let r) = $0 { r } else { nil } }
    }

    private func failures(_ items: [FramedItem]) -> [FramingFailure] {
        items.compactMap { if case .failure(let f) = $0 { f } else { nil } }
    }

    /// The offset of the `n`th occurrence of `needle` in `text`.
    private func offset(of needle: String, in text: String, occurrence: Int = 0) -> Int64 {
        let hay = Array(text.utf8)
        let pattern = Array(needle.utf8)
        var seen = 0
        for start in 0...(hay.count - pattern.count) where Array(hay[start..<start + pattern.count]) == pattern {
            if seen == occurrence { return Int64(start) }
            seen += 1
        }
        return -1
    }

    @Test func entriesBecomeRecords() {
        let first = HARText.entry()
        let second = HARText.entry(
            status: "404",
            headers:
                #"[{"name":"Content-Type","value":"application/json"},{"name":"Set-Cookie","value":"a=1"},{"name":"Set-Cookie","value":"b=2"}]"#,
            content: #"{"size":9,"mimeType":"application/json","text":"eyJhIjoxfQ==","encoding":"base64"}"#,
            url: "https://example.com/api?q=1", method: "POST")
        let text = HARText.document([first, second])
        let items = frame(text)
        #expect(
            items.map(jsonFramedSummary) == [
                "@\(offset(of: "{\"startedDateTime\"", in: text)) 200 body=\"hi\" headers=[\"Content-Type:text/plain\"] url=https://example.com/ method=GET decoded",
                "@\(offset(of: "{\"startedDateTime\"", in: text, occurrence: 1)) 404 body=\"{\\\"a\\\":1}\" headers=[\"Content-Type:application/json\", \"Set-Cookie:a=1\", \"Set-Cookie:b=2\"] url=https://example.com/api?q=1 method=POST decoded",
            ])
    }

    @Test func aByteOrderMarkIsSkippedAndCounted() {
        let text = "\u{FEFF}" + HARText.document([HARText.entry()])
        let items = frame(text)
        #expect(records(items).map(\.offset) == [offset(of: "{\"startedDateTime\"", in: text)])
        #expect(
            records(items).first?.offset == 3
                + Int64(#"{"log":{"version":"1.2","creator":{"name":"test","version":"1"},"entries":["#.utf8.count))
        // Only at the start, and only the whole mark.
        #expect(
            failures(frameOnce([0xEF, 0xBB] + HARText.bytes(HARText.document([])))).first?.error.code
                == .malformedRecord)
        #expect(frameOnce([0xEF, 0xBB, 0xBF]).isEmpty)
    }

    @Test func membersInAnyOrderAreSkippedWhole() {
        // `entries` first, then values full of brackets and quotes in strings, unknown keys, pages after.
        let tricky = #""_x":{"a":["]}\"[{",{"}":"\\"}],"b":-1.5e3,"c":[true,false,null]},"#
        let text =
            #"{"_top":[{"log":1}],"log":{"entries":["# + HARText.entry() + #"],"# + tricky
            + #""version":"1.2","creator":{"name":"x","version":"2"},"pages":[{"id":"p","title":"]["}],"comment":""},"zz":"}"}"#
        let items = frame(text)
        #expect(items.count == 1)
        #expect(records(items).first?.status == 200)
        #expect(records(items).first?.offset == offset(of: "{\"startedDateTime\"", in: text))
    }

    @Test func headersAsNameValuePairs() {
        let entry = HARText.entry(headers: #"[["Content-Type","text/html"],["Vary","a"],["Vary","b"]]"#)
        let record = records(frame(HARText.document([entry]))).first
        #expect(
            record?.headers.fields.map { "\($0.name):\($0.value)" } == ["Content-Type:text/html", "Vary:a", "Vary:b"])
    }

    /// Polly.js writes a repeated field once with a list of values; HTTP/2 exports carry pseudo-headers. The entry is
    /// read (it was malformedRecord, JSON body and all): one field per value, pseudo-headers dropped, each with a
    /// warning. A list holding anything but strings is still malformed.
    @Test func headerValueListsAndPseudoHeaders() {
        let entry = HARText.entry(
            headers: #"[{"name":":status","value":"200"},{"name":"content-type","value":"application/json"},"#
                + #"{"name":"set-cookie","value":["a=1","b=2"]}]"#,
            content: #"{"size":-1,"mimeType":"application/json","text":"{\"a\":1}"}"#)
        let entryItems = frame(HARText.document([entry]))
        #expect(failures(entryItems).map(\.error.message) == [])
        let record = records(entryItems).first
        #expect(
            record?.headers.fields.map { "\($0.name):\($0.value)" }
                == ["content-type:application/json", "set-cookie:a=1", "set-cookie:b=2"])
        #expect(record?.body == Array(#"{"a":1}"#.utf8))
        #expect(
            record?.warnings == [
                "response.headers[0]: pseudo-header ':status' dropped",
                "response.headers[2]: 'set-cookie' has a list of 2 values, taken as as many fields",
            ])
        let mixed = HARText.entry(headers: #"[{"name":"x","value":["a",1]}]"#)
        let items = frame(HARText.document([mixed]))
        #expect(failures(items).first?.error.message.contains("has no string 'name' and 'value'") == true)
    }

    @Test func mimeTypeOnlyWhenTheHeadersHaveNoContentType() {
        let withField = HARText.entry(
            headers: #"[{"name":"content-type","value":"text/html"}]"#,
            content: #"{"size":2,"mimeType":"application/json","text":"hi"}"#)
        let without = HARText.entry(
            headers: "[]", content: #"{"size":2,"mimeType":"application/json; charset=utf-8","text":"{}"}"#)
        let noMime = HARText.entry(headers: "[]", content: #"{"size":2,"mimeType":"","text":"{}"}"#)
        let items = records(frame(HARText.document([withField, without, noMime])))
        #expect(
            items.map { $0.headers.fields.map { "\($0.name):\($0.value)" } } == [
                ["content-type:text/html"], ["Content-Type:application/json; charset=utf-8"], [],
            ])
    }

    @Test func textAndBase64Bodies() {
        let wrapped = HARText.entry(
            content: #"{"size":6,"mimeType":"application/octet-stream","text":"AAEC\r\n/f7/\n","encoding":"base64"}"#)
        let unicode = HARText.entry(content: #"{"size":6,"mimeType":"text/plain","text":"h\u00e9 \ud83d\ude00\n"}"#)
        let encodingCase = HARText.entry(
            content: #"{"size":2,"mimeType":"text/plain","text":"aGk=","encoding":"Base64"}"#)
        let unknownEncoding = HARText.entry(
            content: #"{"size":2,"mimeType":"text/plain","text":"hi","encoding":"utf-8"}"#)
        let items = records(frame(HARText.document([wrapped, unicode, encodingCase, unknownEncoding])))
        #expect(
            items.map(\.body.bytes) == [
                [0, 1, 2, 0xFD, 0xFE, 0xFF], Array("hé 😀\n".utf8), Array("hi".utf8), Array("hi".utf8),
            ])
        #expect(items.map(\.warnings.count) == [0, 0, 0, 1])
        #expect(items.allSatisfy { $0.contentDecoded })
    }

    @Test func contentEncodingIsNotAppliedAgain() {
        let entry = HARText.entry(
            headers: #"[{"name":"Content-Encoding","value":"gzip"},{"name":"Content-Type","value":"text/plain"}]"#)
        let record = records(frame(HARText.document([entry]))).first
        #expect(record?.body == Array("hi".utf8) && record?.contentDecoded == true)
        #expect(record?.headers.last("Content-Encoding") == "gzip", "the field stays, as how the body travelled")
    }

    @Test func missingBodies() {
        let noText = HARText.entry(content: #"{"size":1234,"mimeType":"image/png"}"#)
        let empty = HARText.entry(content: #"{"size":0,"mimeType":"image/png"}"#)
        let nullText = HARText.entry(content: #"{"size":0,"mimeType":"text/plain","text":null}"#)
        let noContent = #"{"request":{"method":"GET","url":"u"},"response":{"status":204,"headers":[]}}"#
        let items = records(frame(HARText.document([noText, empty, nullText, noContent])))
        #expect(items.map(\.body) == [[], [], [], []])
        #expect(items.map(\.warnings) == [["no body recorded (content.size 1234)"], [], [], []])
    }

    @Test func headResponsesHaveNoBody() {
        let recorded = HARText.entry(method: "HEAD")
        let empty = HARText.entry(content: #"{"size":0,"mimeType":"text/plain","text":""}"#, method: "HEAD")
        let badBase64 = HARText.entry(
            content: #"{"size":0,"mimeType":"text/plain","text":"!!","encoding":"base64"}"#, method: "HEAD")
        let items = records(frame(HARText.document([recorded, empty, badBase64])))
        #expect(items.map(\.body) == [[], [], []])
        #expect(items.map(\.warnings.count) == [1, 0, 1])
        #expect(items.map(\.method) == ["HEAD", "HEAD", "HEAD"])
    }

    @Test func statusZeroIsAFailureWithTheRecordedError() {
        let failed = HARText.entry(
            status: "0", headers: "[]", content: #"{"size":0,"mimeType":"x-unknown"}"#, url: "https://down.example/",
            extra: #","_error":"net::ERR_INTERNET_DISCONNECTED""#)
        let noReason = HARText.entry(status: "0", url: "https://other.example/", method: "POST")
        let text = HARText.document([failed, noReason, HARText.entry()])
        let items = frame(text)
        let bad = failures(items)
        #expect(bad.count == 2 && records(items).count == 1)
        #expect(bad.map(\.error.code) == [.malformedRecord, .malformedRecord])
        #expect(
            bad.map(\.error.message) == [
                "entry 0: no response recorded (status 0): net::ERR_INTERNET_DISCONNECTED",
                "entry 1: no response recorded (status 0)",
            ])
        #expect(bad.map(\.url) == ["https://down.example/", "https://other.example/"])
        #expect(bad.map(\.method) == ["GET", "POST"])
        #expect(bad.first?.offset == offset(of: "{\"startedDateTime\"", in: text))
        #expect(bad.first?.bytes == Int64(failed.utf8.count))
        #expect(bad.first?.excerpt == Array(failed.utf8))
    }

    @Test func anErrorEntryWithoutAResponseSaysWhatWasRecorded() {
        let request = #"{"method":"GET","url":"https://gone.example/a","headers":[]}"#
        let noResponse =
            #"{"startedDateTime":"2026-01-01T00:00:00Z","request":"# + request
            + #","_error":"net::ERR_NAME_NOT_RESOLVED"}"#
        let nullResponse = #"{"request":"# + request + #","response":null,"_error":"timeout"}"#
        let neither = #"{"request":"# + request + "}"
        let items = frame(HARText.document([noResponse, nullResponse, neither, HARText.entry()]))
        let bad = failures(items)
        #expect(bad.count == 3 && records(items).count == 1)
        #expect(
            bad.map(\.error.message) == [
                "entry 0: no response recorded: net::ERR_NAME_NOT_RESOLVED",
                "entry 1: no response recorded: timeout",
                "entry 2: no 'response', expected an object",
            ])
        #expect(bad.allSatisfy { $0.error.code == .malformedRecord && $0.url == "https://gone.example/a" })
    }

    @Test func anErrorBesideARealStatusIsAWarning() {
        let entry = HARText.entry(extra: #","_error":"net::ERR_ABORTED""#)
        #expect(
            records(frame(HARText.document([entry]))).first?.warnings == [
                "the exporter recorded an error: net::ERR_ABORTED"
            ])
        let null = HARText.entry(extra: #","_error":null"#)
        #expect(records(frame(HARText.document([null]))).first?.warnings == [])
    }

    @Test func badEntriesAmongGoodOnes() {
        let bad = [
            "42",
            #""entry""#,
            "[]",
            #"{"request":{"method":"GET","url":"https://a/"}}"#,
            HARText.entry(status: #""200""#),
            HARText.entry(status: "200.5"),
            HARText.entry(status: "1000"),
            HARText.entry(headers: #"[["Content-Type"]]"#),
            HARText.entry(headers: #"[{"name":"X"}]"#),
            HARText.entry(headers: #"{"X":"y"}"#),
            HARText.entry(content: #"{"size":1,"mimeType":"text/plain","text":"@@@","encoding":"base64"}"#),
            HARText.entry(content: #"{"size":1,"mimeType":"text/plain","text":5}"#),
            #"{"response":{"status":200,}}"#,
            #"{"response":{"status":200,"headers":[],"content":{"text":"\x"}}}"#,
        ]
        var entries: [String] = []
        for entry in bad { entries += [HARText.entry(), entry] }
        entries.append(HARText.entry())
        let items = frame(HARText.document(entries))
        #expect(items.count == entries.count)
        for (index, item) in items.enumerated() {
            switch item {
            case .record(let record):
                #expect(index % 2 == 0, "entry \(index) should have failed: \(jsonFramedSummary(item))")
                #expect(record.status == 200)
            case .failure(let failure):
                #expect(index % 2 == 1, "entry \(index) should be a record: \(jsonFramedSummary(item))")
                #expect(failure.error.code == .malformedRecord)
                #expect(failure.error.message.hasPrefix("entry \(index): "), "\(failure.error.message)")
                #expect(failure.bytes == Int64(entries[index].utf8.count))
            }
        }
        // What was read before the entry went wrong is kept.
        let headerFailure = failures([items[15]]).first
        #expect(
            headerFailure?.url == "https://example.com/" && headerFailure?.method == "GET"
                && headerFailure?.status == 200)
        #expect(failures([items[7]]).first?.url == "https://a/")
        // Where the JSON inside an entry is wrong.
        let syntax = failures([items[25]]).first
        #expect(syntax?.error.message.contains("not valid JSON") == true)
        #expect(syntax?.error.location?.offset == (syntax?.offset ?? 0) + 26)
    }

    @Test func aDocumentBrokenInTheMiddle() {
        // A missing comma between entries: two records, then one failure from the error to the end of the input.
        let entries = [HARText.entry(), HARText.entry()]
        let good = #"{"log":{"entries":["# + entries.joined(separator: ",")
        let text = good + " " + HARText.entry() + "]}}\n"
        let items = frame(text)
        #expect(records(items).count == 2)
        let failure = failures(items)
        #expect(failure.count == 1)
        #expect(failure.first?.offset == Int64(good.utf8.count + 1))
        #expect(failure.first?.bytes == Int64(text.utf8.count - good.utf8.count - 1))
        #expect(failure.first?.error.code == .malformedRecord)
        #expect(failure.first?.error.message == "expected ',' or ']' after entry 1, found '{'")
        #expect(failure.first?.excerpt.prefix(20) == Array(HARText.entry().utf8.prefix(20))[...])

        // A bracket that does not match inside an entry: the failure starts at that entry, `location` is the byte.
        let broken = #"{"response":{"status":200]}"#
        let text2 = #"{"log":{"entries":["# + HARText.entry() + "," + broken + "," + HARText.entry() + "]}}"
        let items2 = frame(text2)
        #expect(records(items2).count == 1 && failures(items2).count == 1)
        let entryStart = offset(of: broken, in: text2)
        #expect(failures(items2).first?.offset == entryStart)
        #expect(failures(items2).first?.error.location?.offset == entryStart + 25)
        #expect(failures(items2).first?.bytes == Int64(text2.utf8.count) - entryStart)
    }

    @Test func aTruncatedDocument() {
        let text = HARText.document([HARText.entry(), HARText.entry()])
        let secondStart = offset(of: "{\"startedDateTime\"", in: text, occurrence: 1)
        // Cut inside the second entry: one record, then the unfinished entry.
        let cut = String(decoding: Array(text.utf8)[..<(Int(secondStart) + 40)], as: UTF8.self)
        let items = frame(cut)
        #expect(items.map { describeKind($0) } == ["record", "truncatedRecord"])
        #expect(failures(items).first?.offset == secondStart)
        #expect(failures(items).first?.bytes == 40)
        #expect(failures(items).first?.error.message == "input ended inside entry 1")
        // Cut after the last entry: the failure covers what follows it.
        let entriesEnd = Int(secondStart) + HARText.entry().utf8.count
        let cut2 = String(decoding: Array(text.utf8)[..<(entriesEnd + 3)], as: UTF8.self)
        let items2 = frame(cut2)
        #expect(items2.map { describeKind($0) } == ["record", "record", "truncatedRecord"])
        #expect(failures(items2).first?.offset == Int64(entriesEnd))
        #expect(failures(items2).first?.bytes == 3)
        // Cut before `log`: the whole document.
        let items3 = frame(#"{"version":"1.2","lo"#)
        #expect(
            items3.map(jsonFramedSummary) == [
                #"@0 truncatedRecord bytes=20 "input ended inside the HAR document, before its 'log' object" excerpt="{\"version\":\"1.2\",\"lo""#
            ])
    }

    private func describeKind(_ item: FramedItem) -> String {
        switch item {
        case .record: "record"
        case .failure(let f): "\(f.error.code)"
        }
    }

    @Test func inputThatIsNotAHARDocument() {
        #expect(frame("").isEmpty)
        #expect(frame(" \n\t ").isEmpty)
        #expect(
            frame("[1,2]").map(jsonFramedSummary) == [
                #"@0 malformedRecord bytes=5 "expected a HAR document (a JSON object with a 'log' member), found '['" at=0 excerpt="[1,2]""#
            ])
        #expect(
            frame(#"  {"foo":{"log":{}},"bar":[1]}  "#).map(jsonFramedSummary) == [
                #"@2 malformedRecord bytes=30 "the document has no 'log' object: not a HAR document" excerpt="{\"foo\":{\"log\":{}},\"bar\":[1]}  ""#
            ])
        #expect(
            frame(#"{"log":{"version":"1.2"}}"#).map(jsonFramedSummary) == [
                #"@0 malformedRecord bytes=24 "the 'log' object has no 'entries' array" excerpt="{\"log\":{\"version\":\"1.2\"}""#
            ])
        #expect(frame(#"{"log":{"entries":{}}}"#).map { describeKind($0) } == ["malformedRecord"])
        #expect(frame(#"{"log":{"entries":[]}}"#).isEmpty)
        #expect(frame("hello").map { describeKind($0) } == ["malformedRecord"])
        #expect(frame(#"{"log" 1}"#).map { describeKind($0) } == ["malformedRecord"])
        #expect(frame(#"{"log":{"entries":[],}}"#).map { describeKind($0) } == ["malformedRecord"])
        #expect(frame(#"{"log":{"entries":[,]}}"#).map { describeKind($0) } == ["malformedRecord"])
        #expect(frame(#"{"a":[1}],"log":{"entries":[]}}"#).map { describeKind($0) } == ["malformedRecord"])
        #expect(frame(#"{"a":[1 @],"log":{"entries":[]}}"#).map { describeKind($0) } == ["malformedRecord"])
    }

    // corrupted_har/brokenfile.har's text: `log` is an array, and the document is not JSON after it either.
    @Test func brokenfile() {
        let items = frame("{\"log\":\n[\n    2,1,3\n]\n\"request:\"}")
        #expect(
            items.map(jsonFramedSummary) == [
                #"@8 malformedRecord bytes=25 "'log' is an array, expected an object" at=8 excerpt="[\n    2,1,3\n]\n\"request:\"}""#
            ])
    }

    @Test func contentAfterTheDocument() {
        let text = HARText.document([HARText.entry()]) + "\n  {\"log\":{}}\n"
        let items = frame(text)
        #expect(items.map { describeKind($0) } == ["record", "malformedRecord"])
        #expect(failures(items).first?.offset == offset(of: "  {\"log\":{}}", in: text) + 2)
        #expect(failures(items).first?.error.message == "unexpected content after the HAR document, found '{'")
        #expect(frame(HARText.document([HARText.entry()]) + "\n\n").count == 1)
    }

    @Test func duplicatedLogAndEntriesAreEachRead() {
        let text =
            #"{"log":{"entries":["# + HARText.entry(status: "201") + #"],"entries":["# + HARText.entry(status: "202")
            + #"]},"log":{"entries":["# + HARText.entry(status: "203") + "]}}"
        #expect(records(frame(text)).map(\.status) == [201, 202, 203])
        // Keys are compared unescaped.
        #expect(records(frame(#"{"\u006cog":{"entr\u0069es":["# + HARText.entry() + "]}}")).count == 1)
    }

    @Test func anEntryOverTheCapIsSkippedWithoutKeepingIt() {
        let limits = Limits(maxHeaderBytes: 100, maxBodyBytes: 100, maxErrorBodyBytes: 16)
        #expect(HARFramer(limits: limits).entryCap == 300)
        let big = HARText.entry(
            content: #"{"size":1000,"mimeType":"text/plain","text":""# + String(repeating: "x\\\"]}", count: 200)
                + #""}"#)
        let text = HARText.document([HARText.entry(), big, HARText.entry()])
        let items = frame(text, limits: limits)
        #expect(items.map { describeKind($0) } == ["record", "limitExceeded", "record"])
        let failure = failures(items).first
        #expect(failure?.offset == offset(of: big, in: text))
        #expect(failure?.bytes == Int64(big.utf8.count))
        #expect(failure?.excerpt == Array(big.utf8.prefix(16)))
        #expect(
            failure?.error.message
                == "entry 1 is \(big.utf8.count) bytes, longer than 300 (2 × maxBodyBytes + maxHeaderBytes)")
        // An entry of exactly the cap is parsed; one byte more is not.
        let frameOf = { (length: Int) -> [String] in
            let base = HARText.entry(extra: #","_pad":"""#)
            let padded = HARText.entry(
                extra: #","_pad":""# + String(repeating: "a", count: length - base.utf8.count) + #"""#)
            return self.frame(HARText.document([padded]), limits: Limits(maxHeaderBytes: 296, maxBodyBytes: 2)).map {
                self.describeKind($0)
            }
        }
        #expect(frameOf(300) == ["record"])
        #expect(frameOf(301) == ["limitExceeded"])
    }

    @Test func aHugeEntryOverTheCapInLargePieces() {
        let limits = Limits(maxHeaderBytes: 1000, maxBodyBytes: 1000)
        let big = HARText.entry(
            content: #"{"size":1,"mimeType":"text/plain","text":""# + String(repeating: "0123456789", count: 500_000)
                + #""}"#)
        let text = HARText.document([big, HARText.entry()])
        let items = framedInEverySplit(HARText.bytes(text), byteByByte: false, randomSplits: 3, maxPiece: 300_000) {
            HARFramer(limits: limits)
        }
        #expect(items.map { describeKind($0) } == ["limitExceeded", "record"])
    }

    /// The input buffer holds one entry and a read, never the document, nor an entry over the cap.
    @Test func memoryStaysWithinOneEntryAndARead() {
        let piece = 64 * 1024
        func largestBuffer(_ text: String, limits: Limits) -> (Int, [String]) {
            var framer = HARFramer(limits: limits)
            let bytes = HARText.bytes(text)
            var largest = 0
            let pieces = Array(repeating: piece, count: bytes.count / piece + 1)
            let items = FramerSplits.feed(&framer, bytes, pieces: pieces) { _, input in
                largest = max(largest, input.capacity)
            }
            return (largest, items.map { describeKind($0) })
        }
        // 40 MB of entries of 100 KB each.
        let entry = HARText.entry(
            content: #"{"size":1,"mimeType":"text/plain","text":""# + String(repeating: "b", count: 100_000) + #""}"#)
        let (many, manyKinds) = largestBuffer(HARText.document(Array(repeating: entry, count: 400)), limits: Limits())
        #expect(manyKinds == Array(repeating: "record", count: 400))
        #expect(many < 4 * (entry.utf8.count + piece), "buffer grew to \(many) bytes")
        // One entry of 20 MB over a cap of 3,000 bytes: scanned past, not kept.
        let huge = HARText.entry(
            content: #"{"size":1,"mimeType":"text/plain","text":""# + String(repeating: "c", count: 20_000_000) + #""}"#
        )
        let (skipped, skippedKinds) = largestBuffer(
            HARText.document([huge, entry]), limits: Limits(maxHeaderBytes: 1000, maxBodyBytes: 1000))
        #expect(skippedKinds == ["limitExceeded", "limitExceeded"])
        #expect(skipped < 4 * (3000 + piece), "buffer grew to \(skipped) bytes")
    }

    @Test func aBodyOverTheLimitWithinTheCap() {
        let limits = Limits(maxHeaderBytes: 1000, maxBodyBytes: 10)
        let entry = HARText.entry(content: #"{"size":1,"mimeType":"text/plain","text":"0123456789a"}"#)
        let items = frame(HARText.document([entry, HARText.entry()]), limits: limits)
        #expect(items.map { describeKind($0) } == ["limitExceeded", "record"])
        #expect(failures(items).first?.status == 200)
    }

    @Test func nestingCountsFromTheEntry() {
        let deep = HARText.entry(extra: #","_deep":[[[[[[1]]]]]]"#)
        let items = frame(HARText.document([deep, HARText.entry()]), limits: Limits(maxDepth: 5))
        #expect(items.map { describeKind($0) } == ["limitExceeded", "record"])
        #expect(records(frame(HARText.document([deep]), limits: Limits(maxDepth: 8))).count == 1)
    }

    /// Damaged documents (bytes changed, dropped, doubled, cut off) never break the framer's contract, in any split.
    @Test func damagedDocumentsKeepTheContract() {
        let entries = [
            HARText.entry(),
            HARText.entry(headers: #"[["A","1"]]"#, content: #"{"size":3,"text":"AAEC","encoding":"base64"}"#),
            HARText.entry(status: "0"), HARText.entry(method: "HEAD"), HARText.entry(),
        ]
        let original = HARText.bytes(HARText.document(entries))
        let limits = Limits(maxErrorBodyBytes: 32)
        var generator = SplitMix64(seed: 0xDA4A6E)
        let specials = Array(#"{}[]",:\ "#.utf8) + [0x0A, 0xFF, 0xC3]
        for round in 0..<150 {
            var damaged = original
            for _ in 0..<(Int(generator.next() % 3) + 1) {
                let at = Int(generator.next() % UInt64(damaged.count))
                switch generator.next() % 4 {
                case 0: damaged[at] = specials[Int(generator.next() % UInt64(specials.count))]
                case 1: damaged.remove(at: at)
                case 2: damaged.insert(damaged[at], at: at)
                default: damaged.removeLast(Int(generator.next() % UInt64(damaged.count / 2)))
                }
            }
            let items = framedInEverySplit(damaged, byteByByte: round % 10 == 0, randomSplits: 3, maxPiece: 64) {
                HARFramer(limits: limits)
            }
            checkFramedContract(items, inputCount: damaged.count, limits: limits, "round \(round)")
            #expect(!items.isEmpty, "round \(round): damage must leave a trace")
        }
    }

    /// Everything above in one document: whole, byte by byte and in random splits must agree.
    @Test func anySplitGivesTheSameItems() {
        let entries = [
            HARText.entry(),
            HARText.entry(
                headers: #"[["A","1"],["A","2"]]"#, content: #"{"size":3,"text":"AAEC","encoding":"base64"}"#),
            HARText.entry(status: "0", extra: #","_error":"boom""#),
            "17",
            HARText.entry(method: "HEAD"),
            HARText.entry(
                content: #"{"size":5,"mimeType":"text/plain","text":"\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00 ]} \u005d"}"#),
            HARText.entry(headers: #"[["only name"]]"#),
        ]
        let text =
            "\u{FEFF}" + #"{"comment":"{[\"","log":{"pages":[{"a":[]}],"entries":[ "#
            + entries.joined(separator: " ,\r\n ")
            + #" ],"creator":{}},"z":null} "#
        let items = frame(text, limits: Limits(maxErrorBodyBytes: 64))
        #expect(
            items.map { describeKind($0) } == [
                "record", "record", "malformedRecord", "malformedRecord", "record", "record", "malformedRecord",
            ])
        let cut = String(decoding: Array(text.utf8).dropLast(40), as: UTF8.self)
        #expect(frame(cut).map { describeKind($0) }.last == "truncatedRecord")
    }
}
