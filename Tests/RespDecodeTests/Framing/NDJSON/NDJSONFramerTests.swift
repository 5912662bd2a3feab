import RespDecodeTestSupport
import Testing

@testable import RespDecode

@Suite("ndjson framer")
struct NDJSONFramerTests {
    private func frame(_ text: String, limits: Limits = Limits()) -> [FramedItem] {
        framedInEverySplit(Array(text.utf8)) { NDJSONFramer(limits: limits) }
    }

    private func summaries(_ text: String, limits: Limits = Limits()) -> [String] {
        frame(text, limits: limits).map(jsonFramedSummary)
    }

    private func kinds(_ items: [FramedItem]) -> [String] {
        items.map { if case .failure(let f) = $0 { "\(f.error.code)" } else { "record" } }
    }

    private func records(_ items: [FramedItem]) -> [ResponseRecord] {
        items.compactMap { if case .record(let r) = $0 { r } else { nil } }
    }

    private func failures(_ items: [FramedItem]) -> [FramingFailure] {
        items.compactMap { if case .failure(let f) = $0 { f } else { nil } }
    }

    @Test func theSpecExample() {
        let line = #"{"status":200,"headers":[["Content-Type","application/json"]],"body":"{\"a\":1}"}"# + "\n"
        #expect(summaries(line) == [#"@0 200 body="{\"a\":1}" headers=["Content-Type:application/json"]"#])
    }

    @Test func everyHeaderShape() {
        let text =
            [
                #"{"status":200,"headers":[["A","1"],["A","2"],["B",""]]}"#,
                #"{"status":200,"headers":[{"name":"A","value":"1"},{"name":"A","value":"2"}]}"#,
                #"{"status":200,"headers":{"Content-Type":"text/plain","Set-Cookie":["a=1","b=2"],"Empty":[]}}"#,
                #"{"status":200,"headers":[]}"#,
                #"{"status":200,"headers":{}}"#,
                #"{"status":200,"headers":null}"#,
                #"{"status":200}"#,
            ].joined(separator: "\n") + "\n"
        #expect(
            records(frame(text)).map { $0.headers.fields.map { "\($0.name):\($0.value)" } } == [
                ["A:1", "A:2", "B:"], ["A:1", "A:2"], ["Content-Type:text/plain", "Set-Cookie:a=1", "Set-Cookie:b=2"],
                [], [], [], [],
            ])
    }

    @Test func bodiesAsTextOrBase64() {
        let text = [
            #"{"status":200,"body":"h\u00e9\n\"x\""}"#,
            #"{"status":200,"bodyBase64":"AAEC/f7/"}"#,
            #"{"status":200,"bodyBase64":"aGVs\nbG8="}"#,
            #"{"status":200,"body":null,"bodyBase64":"aGk"}"#,
            #"{"status":204,"body":""}"#,
            #"{"status":200,"headers":[["Content-Encoding","gzip"]],"bodyBase64":"H4sIAAAAAAAAAwMAAAAAAAAAAAA="}"#,
        ].joined(separator: "\n")
        let items = records(frame(text))
        #expect(
            items.map(\.body.bytes) == [
                Array("hé\n\"x\"".utf8), [0, 1, 2, 0xFD, 0xFE, 0xFF], Array("hello".utf8), Array("hi".utf8), [],
                [0x1F, 0x8B, 8, 0, 0, 0, 0, 0, 0, 3, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0],
            ])
        #expect(items.allSatisfy { !$0.contentDecoded }, "ndjson bodies are as they were on the wire")
    }

    @Test func idsUrlsAndMethods() {
        let text = [
            #"{"id":"r-1","url":"https://a/","method":"GET","status":200}"#,
            #"{"id":12345678901234567890,"status":200}"#,
            #"{"id":-1.5e3,"status":200}"#,
            #"{"id":null,"url":null,"status":200,"extra":{"nested":[1,2,{"x":null}]}}"#,
        ].joined(separator: "\n")
        let items = records(frame(text))
        #expect(items.map(\.id) == ["r-1", "12345678901234567890", "-1.5e3", nil])
        #expect(items.map(\.url) == ["https://a/", nil, nil, nil])
        #expect(items.map(\.method) == ["GET", nil, nil, nil])
    }

    @Test func offsetsAreLineStartsAndBlankLinesAreFiller() {
        let text = "\n\r\n  \t \n" + #"{"status":201}"# + "\r\n\n" + #"{"status":202}"# + "\n   \n"
        #expect(summaries(text) == ["@8 201 body=\"\" headers=[]", "@25 202 body=\"\" headers=[]"])
    }

    @Test func badLinesAmongGoodOnesKeepOrderAndCounts() {
        let bad = [
            "not json",
            "[1,2]",
            #""string""#,
            #"{"status":200,}"#,
            "{}",
            #"{"status":"200"}"#,
            #"{"status":200.0}"#,
            #"{"status":42}"#,
            #"{"id":"keep-me","url":"https://b/","status":200,"body":"a","bodyBase64":"YQ=="}"#,
            #"{"status":200,"bodyBase64":"@@"}"#,
            #"{"status":200,"body":5}"#,
            #"{"status":200,"bodyBase64":[]}"#,
            #"{"status":200,"headers":[["A"]]}"#,
            #"{"status":200,"headers":[{"name":"A"}]}"#,
            #"{"status":200,"headers":{"A":1}}"#,
            #"{"status":200,"headers":{"A":["x",2]}}"#,
            #"{"status":200,"headers":"A: b"}"#,
            #"{"status":200,"headers":[5]}"#,
            #"{"status":200,"url":5}"#,
            #"{"status":200,"method":true}"#,
            #"{"status":200,"id":{}}"#,
            #"{"status":200} {"status":200}"#,
        ]
        var lines: [String] = []
        for line in bad { lines += [#"{"status":200,"body":"ok"}"#, line] }
        lines.append(#"{"status":200,"body":"ok"}"#)
        let items = frame(lines.joined(separator: "\n") + "\n")
        #expect(items.count == lines.count)
        for (index, item) in items.enumerated() {
            switch item {
            case .record(let record):
                #expect(index % 2 == 0, "line \(index) should have failed: \(lines[index])")
                #expect(record.body == Array("ok".utf8))
            case .failure(let failure):
                #expect(index % 2 == 1, "line \(index) should be a record: \(jsonFramedSummary(item))")
                #expect(failure.error.code == .malformedRecord, "\(lines[index]): \(failure.error)")
                #expect(failure.bytes == Int64(lines[index].utf8.count + 1))
                #expect(failure.excerpt == Array((lines[index] + "\n").utf8))
            }
        }
        let both = failures([items[17]]).first
        #expect(both?.id == "keep-me" && both?.url == "https://b/" && both?.status == 200)
        #expect(both?.error.message == "both 'body' and 'bodyBase64'")
        let headerProblem = failures([items[25]]).first
        #expect(
            headerProblem?.status == 200
                && headerProblem?.error.message == "headers[0] is not a [name, value] pair of strings")
        let syntax = failures([items[7]]).first
        #expect(syntax?.error.message == "line is not JSON: expected a string key, found '}'")
        #expect(syntax?.error.location?.offset == (syntax?.offset ?? 0) + 14)
    }

    @Test func theLastLineWithoutALineFeed() {
        #expect(
            summaries(#"{"status":200}"# + "\n" + #"{"status":201,"body":"x"}"#) == [
                "@0 200 body=\"\" headers=[]", "@15 201 body=\"x\" headers=[]",
            ])
        #expect(summaries(#"{"status":200}"# + "\r").count == 1)
        let cut = frame(#"{"status":200}"# + "\n" + #"{"status":201,"body":"abc"#)
        #expect(kinds(cut) == ["record", "truncatedRecord"])
        #expect(failures(cut).first?.bytes == 25 && failures(cut).first?.offset == 15)
        // The same bytes ended by a line feed are a complete line that is broken.
        #expect(kinds(frame(#"{"status":201,"body":"abc"# + "\n")) == ["malformedRecord"])
        // Not JSON at all is malformed even without a line feed.
        #expect(kinds(frame("nope")) == ["malformedRecord"])
    }

    @Test func aLineOverTheCapIsSkippedWithoutKeepingIt() {
        let limits = Limits(maxHeaderBytes: 20, maxBodyBytes: 40, maxErrorBodyBytes: 10)
        #expect(NDJSONFramer(limits: limits).lineCap == 100)
        let long = #"{"status":200,"body":""# + String(repeating: "x", count: 200) + #""}"#
        let text = #"{"status":201}"# + "\n" + long + "\r\n" + #"{"status":202}"# + "\n" + long
        let items = frame(text, limits: limits)
        #expect(kinds(items) == ["record", "limitExceeded", "record", "limitExceeded"])
        let skipped = failures(items)
        #expect(skipped.map(\.offset) == [15, Int64(15 + long.utf8.count + 2 + 15)])
        #expect(skipped.map(\.bytes) == [Int64(long.utf8.count + 2), Int64(long.utf8.count)])
        #expect(skipped.first?.excerpt == Array(long.utf8.prefix(10)))
        // Exactly the cap is parsed, one byte more is not (the line end does not count).
        func line(_ length: Int) -> String {
            let base = #"{"status":200,"_":""}"#
            return #"{"status":200,"_":""# + String(repeating: "y", count: length - base.utf8.count) + #""}"#
        }
        #expect(kinds(frame(line(100) + "\r\n", limits: limits)) == ["limitExceeded"], "the CR counts")
        #expect(kinds(frame(line(100) + "\n", limits: limits)) == ["record"])
        #expect(kinds(frame(line(100), limits: limits)) == ["record"])
        #expect(kinds(frame(line(101) + "\n", limits: limits)) == ["limitExceeded"])
        #expect(kinds(frame(line(101), limits: limits)) == ["limitExceeded"])
    }

    @Test func aHugeLineInLargePieces() {
        let limits = Limits(maxHeaderBytes: 100, maxBodyBytes: 1000)
        let huge = #"{"status":200,"body":""# + String(repeating: "z", count: 5_000_000) + #""}"#
        let text = huge + "\n" + #"{"status":200}"# + "\n"
        let items = framedInEverySplit(Array(text.utf8), byteByByte: false, randomSplits: 3, maxPiece: 300_000) {
            NDJSONFramer(limits: limits)
        }
        #expect(kinds(items) == ["limitExceeded", "record"])
    }

    /// The input buffer holds one line and a read, never a line over the cap.
    @Test func memoryStaysWithinOneLineAndARead() {
        let piece = 64 * 1024
        let limits = Limits(maxHeaderBytes: 1000, maxBodyBytes: 1000)
        let huge = #"{"status":200,"body":""# + String(repeating: "z", count: 20_000_000) + #""}"#
        let bytes = Array((huge + "\n" + #"{"status":200}"# + "\n").utf8)
        var framer = NDJSONFramer(limits: limits)
        var largest = 0
        let pieces = Array(repeating: piece, count: bytes.count / piece + 1)
        let items = FramerSplits.feed(&framer, bytes, pieces: pieces) { _, input in
            largest = max(largest, input.capacity)
        }
        #expect(kinds(items) == ["limitExceeded", "record"])
        #expect(largest < 4 * (3000 + piece), "buffer grew to \(largest) bytes")
    }

    @Test func limits() {
        #expect(
            kinds(frame(#"{"status":200,"body":"0123456789a"}"#, limits: Limits(maxHeaderBytes: 100, maxBodyBytes: 10)))
                == [
                    "limitExceeded"
                ])
        #expect(
            kinds(
                frame(
                    #"{"status":200,"bodyBase64":"MDEyMzQ1Njc4OWE="}"#,
                    limits: Limits(maxHeaderBytes: 100, maxBodyBytes: 10))) == [
                    "limitExceeded"
                ])
        #expect(kinds(frame(#"{"status":200,"x":[[[[1]]]]}"#, limits: Limits(maxDepth: 4))) == ["limitExceeded"])
        #expect(kinds(frame(#"{"status":200,"x":[[[1]]]}"#, limits: Limits(maxDepth: 4))) == ["record"])
    }

    @Test func aByteOrderMarkAtTheStartIsSkipped() {
        #expect(
            summaries("\u{FEFF}" + #"{"status":200}"# + "\n" + #"{"status":201}"#) == [
                "@3 200 body=\"\" headers=[]", "@18 201 body=\"\" headers=[]",
            ])
        #expect(kinds(frame(#"{"status":200}"# + "\n\u{FEFF}" + #"{"status":201}"#)) == ["record", "malformedRecord"])
        #expect(kinds(frame("\u{FEFF}")).isEmpty)
        #expect(kinds(framedInEverySplit([0xEF, 0xBB]) { NDJSONFramer() }) == ["malformedRecord"])
    }

    @Test func emptyInput() {
        #expect(frame("").isEmpty)
        #expect(frame("\n\n\r\n").isEmpty)
    }

    /// Damaged streams never break the framer's contract, in any split; a damaged line costs at most itself and the
    /// lines it was joined with.
    @Test func damagedStreamsKeepTheContract() {
        let lines = (0..<12).map { #"{"status":200,"headers":[["A","\#($0)"]],"body":"line \#($0)","id":\#($0)}"# }
        let original = Array((lines.joined(separator: "\n") + "\n").utf8)
        let limits = Limits(maxErrorBodyBytes: 32)
        var generator = SplitMix64(seed: 0x5EED_2)
        let specials = Array(#"{}[]",:\ "#.utf8) + [0x0A, 0x0D, 0xFF]
        for round in 0..<150 {
            var damaged = original
            let at = Int(generator.next() % UInt64(damaged.count))
            switch generator.next() % 3 {
            case 0: damaged[at] = specials[Int(generator.next() % UInt64(specials.count))]
            case 1: damaged.remove(at: at)
            default: damaged.removeLast(Int(generator.next() % UInt64(damaged.count / 2)))
            }
            let items = framedInEverySplit(damaged, byteByByte: round % 10 == 0, randomSplits: 3, maxPiece: 64) {
                NDJSONFramer(limits: limits)
            }
            checkFramedContract(items, inputCount: damaged.count, limits: limits, "round \(round)")
            let lineCount = damaged.split(separator: 0x0A, omittingEmptySubsequences: true).count
            #expect(items.count <= lineCount && items.count >= lineCount - 1, "round \(round)")
        }
    }

    /// Everything above in one stream: whole, byte by byte and in random splits must agree.
    @Test func anySplitGivesTheSameItems() {
        let text = [
            #"{"status":200,"headers":[["Content-Type","application/json"]],"body":"{\"a\":[1,2]}","id":"a"}"#,
            "",
            #"{"status":404,"headers":{"X":["1","2"]},"bodyBase64":"bm90IGZvdW5k","id":7}"#,
            "garbage",
            #"{"status":200,"body":"é\u00e9\ud83d\ude00\r\n"}"#,
            #"{"status":200,"body":"\ud800"}"#,
            "  ",
            #"{"status":200,"body":"\u000a"}"#,
            #"{"status":200,"bo"#,
        ].joined(separator: "\r\n")
        let items = frame(text, limits: Limits(maxErrorBodyBytes: 8))
        #expect(
            kinds(items) == [
                "record", "record", "malformedRecord", "record", "malformedRecord", "record", "truncatedRecord",
            ])
    }
}

/// The fields `respdecode frame` adds to ndjson records, and the lines that misuse them.
@Suite("ndjson framer: fields frame writes")
struct NDJSONFramedFieldsTests {
    private func items(_ text: String) -> [FramedItem] {
        framedInEverySplit(Array(text.utf8)) { NDJSONFramer() }
    }

    private func message(_ line: String) -> String? {
        guard case .failure(let failure)? = items(line + "\n").first, failure.error.code == .malformedRecord else {
            return nil
        }
        return failure.error.message
    }

    @Test func carriedFieldsAreRead() {
        let line =
            #"{"status":200,"warcType":"resource","warcDate":"d","digest":"ok","contentDecoded":true,"#
            + #""trailers":{"X-A":["1","2"]},"warnings":["w"],"body":"x"}"#
        guard case .record(let record)? = items(line).first else {
            Issue.record("not a record")
            return
        }
        #expect(record.warc == WARCRecordInfo(type: "resource", date: "d", digest: .ok))
        #expect(record.contentDecoded)
        #expect(record.trailers?.fields.map { "\($0.name)=\($0.value)" } == ["X-A=1", "X-A=2"])
        #expect(record.warnings == ["w"])
    }

    /// The revisit fields `frame` writes come back as they were (docs/output.md#revisits).
    @Test func carriedRevisitFieldsAreRead() {
        let line =
            #"{"status":200,"warcType":"revisit","warcTruncated":"length","payloadDigest":"sha1:AB","#
            + #""refersTo":{"recordId":"<urn:a>","date":"2020-01-01T00:00:00Z","other":1},"#
            + #""revisitOf":{"seq":3,"input":"a.warc","offset":120}}"#
        guard case .record(let record)? = items(line).first else {
            Issue.record("not a record")
            return
        }
        #expect(record.warc?.truncated == "length")
        #expect(record.warc?.payloadDigest == "sha1:AB")
        #expect(record.warc?.refersTo == WARCRefersTo(recordId: "<urn:a>", date: "2020-01-01T00:00:00Z"))
        #expect(record.warc?.revisitOf == RecordOrigin(seq: 3, input: "a.warc", offset: 120))
    }

    @Test func aCarriedFailureNeedsNoStatus() {
        let line =
            #"{"id":"x","error":{"code":"limitExceeded","message":"m","offset":7,"line":1,"column":2},"bodyBytes":99,"bodyBase64":"AAE="}"#
        guard case .failure(let failure)? = items(line).first else {
            Issue.record("not a failure")
            return
        }
        #expect(failure.error == RecordError(.limitExceeded, "m", location: .init(offset: 7, line: 1, column: 2)))
        #expect(failure.id == "x" && failure.bytes == 99 && failure.excerpt == [0, 1] && failure.status == nil)
    }

    @Test(arguments: [
        (#"{"status":200,"contentDecoded":"yes"}"#, "'contentDecoded' is a string, expected a boolean"),
        (#"{"status":200,"warnings":[1]}"#, "'warnings' is not an array of strings"),
        (#"{"status":200,"digest":"bad"}"#, #"'digest' is not "ok" or "mismatch""#),
        (
            #"{"status":200,"warcRecordId":"<x>"}"#,
            "'warcRecordId', 'warcDate', 'warcTruncated', 'digest', 'payloadDigest', 'refersTo' and 'revisitOf' need "
                + "'warcType'"
        ),
        (#"{"status":200,"warcType":"revisit","refersTo":"x"}"#, "'refersTo' is a string, expected an object"),
        (
            #"{"status":200,"warcType":"revisit","refersTo":{"date":1}}"#,
            "'refersTo.date' is a number, expected a string"
        ),
        (
            #"{"status":200,"warcType":"revisit","revisitOf":{"seq":1}}"#,
            "'revisitOf' needs integers 'seq' and 'offset' from 0"
        ),
        (
            #"{"status":200,"warcType":"revisit","revisitOf":{"seq":-1,"offset":0}}"#,
            "'revisitOf' needs integers 'seq' and 'offset' from 0"
        ),
        (#"{"status":200,"warcType":5}"#, "'warcType' is a number, expected a string"),
        (#"{"status":200,"trailers":[["A"]]}"#, "trailers[0] is not a [name, value] pair of strings"),
        (#"{"status":200,"bodyBytes":3}"#, "'bodyBytes' without 'error'"),
        (
            #"{"error":{"code":"invalidJSON","message":"m"}}"#,
            "'error' is not an object with a framing error's 'code' (malformedRecord, truncatedRecord or limitExceeded) "
                + "and a string 'message'"
        ),
        (
            #"{"error":{"code":"malformedRecord"}}"#,
            "'error' is not an object with a framing error's 'code' (malformedRecord, truncatedRecord or limitExceeded) "
                + "and a string 'message'"
        ),
        (#"{"error":{"code":"malformedRecord","message":"m"},"bodyBytes":-1}"#, "'bodyBytes' is not a count of bytes"),
        (
            #"{"error":{"code":"malformedRecord","message":"m"},"status":42}"#,
            "'status' 42 is not an HTTP status code (100-999)"
        ),
    ])
    func misusedFieldsMakeTheLineMalformed(_ line: String, _ expected: String) {
        #expect(message(line) == expected)
    }
}
