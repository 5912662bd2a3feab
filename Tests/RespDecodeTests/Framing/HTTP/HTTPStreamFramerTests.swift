import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// Frames `input` fed in pieces of the given sizes (the rest in one piece), and describes every item.
func frame(_ input: [UInt8], pieces: [Int] = [], limits: Limits = Limits()) -> [String] {
    var framer = HTTPStreamFramer(limits: limits)
    return FramerSplits.feed(&framer, input, pieces: pieces).map(describe)
}

func frame(_ text: String, pieces: [Int] = [], limits: Limits = Limits()) -> [String] {
    frame(Array(text.utf8), pieces: pieces, limits: limits)
}

/// Everything an item says, for comparing runs over differently split input.
func describeFully(_ item: FramedItem) -> String {
    switch item {
    case .record(let r):
        return "\(describe(item)) headers=\(r.headers.fields.map { "\($0.name):\($0.value)" }) warnings=\(r.warnings)"
    case .failure(let f):
        return "\(describe(item)) \(f.error) excerpt=\(f.excerpt) headers=\(f.headers?.fields.map(\.name) ?? [])"
    }
}

/// Frames `input` whole, byte by byte and in 50 random splits; all must agree in every detail. Returns the items.
func frameEverySplit(
    _ text: String, limits: Limits = Limits(), sourceLocation: SourceLocation = #_sourceLocation
) -> [String] {
    let verdict = FramerSplits.verify(
        Array(text.utf8), make: { HTTPStreamFramer(limits: limits) }, describe: describeFully)
    #expect(verdict.mismatches == [], sourceLocation: sourceLocation)
    return verdict.items.map(describe)
}

/// A compact, comparable summary of an item.
func describe(_ item: FramedItem) -> String {
    switch item {
    case .record(let r):
        var text = "@\(r.offset) \(r.status) body=\(String(decoding: r.body, as: UTF8.self).debugDescription)"
        text += " fields=\(r.headers.count)"
        if let trailers = r.trailers { text += " trailers=\(trailers.fields.map { "\($0.name):\($0.value)" })" }
        if !r.warnings.isEmpty { text += " warnings=\(r.warnings.count)" }
        return text
    case .failure(let f):
        return "@\(f.offset) \(f.error.code) status=\(f.status.map(String.init) ?? "-") bytes=\(f.bytes)"
    }
}

@Suite("HTTP stream framer")
struct HTTPStreamFramerTests {
    @Test func contentLengthBodies() {
        let items = frame(
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhelloHTTP/1.0 201 Created\r\nContent-Length: 0\r\n\r\n")
        #expect(items == ["@0 200 body=\"hello\" fields=1", "@43 201 body=\"\" fields=1"])
    }

    @Test func chunkedWithExtensionsAndTrailers() {
        let input =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5;name=value;q=\"a; b\"\r\nhello\r\n6\r\n world\r\n0\r\nX-Checksum: abc\r\nX-Other: t2\r\n\r\n"
        #expect(frame(input) == ["@0 200 body=\"hello world\" fields=1 trailers=[\"X-Checksum:abc\", \"X-Other:t2\"]"])
    }

    @Test func noBodyFor204And304EvenWithContentLength() {
        let items = frame(
            "HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\nHTTP/1.1 304 Not Modified\r\nContent-Length: 100\r\n\r\n"
                + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        #expect(items == ["@0 204 body=\"\" fields=1", "@47 304 body=\"\" fields=1", "@97 200 body=\"ok\" fields=1"])
    }

    @Test func interimResponsesFoldIntoTheNextRecord() {
        let items = frame(
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
                + "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx")
        #expect(items == ["@0 200 body=\"x\" fields=1 warnings=1"])
    }

    @Test func interimAtEndOfInputIsTruncated() {
        #expect(frame("HTTP/1.1 100 Continue\r\n\r\n") == ["@0 truncatedRecord status=- bytes=25"])
    }

    @Test func closeDelimitedLastBody() {
        #expect(
            frame("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end\n") == [
                "@0 200 body=\"until the end\\n\" fields=1"
            ])
    }

    @Test func chunkedWinsOverContentLengthWithAWarning() {
        let items = frame(
            "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n")
        #expect(items == ["@0 200 body=\"hi\" fields=2 warnings=1"])
    }

    @Test func differingDuplicateContentLengthIsMalformed() {
        let items = frame(
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab\r\n"
                + "HTTP/1.1 200 OK\r\nContent-Length: 1, 1\r\n\r\nc")
        // The failure covers the message and what follows it up to the next line that starts with `HTTP/1.`.
        #expect(items == ["@0 malformedRecord status=200 bytes=61", "@61 200 body=\"c\" fields=1"])
    }

    @Test(arguments: ["-1", "+5", "0x10", "1 3", "", "1000000000000000000000", "12a"])
    func invalidContentLengthIsMalformed(_ value: String) {
        let items = frame("HTTP/1.1 200 OK\r\nContent-Length: \(value)\r\n\r\n")
        #expect(items.count == 1 && items[0].contains("malformedRecord"), "\(items)")
    }

    @Test func bareLineFeedsAreAccepted() {
        #expect(
            frame("HTTP/1.1 200 OK\nContent-Length: 2\n\nhiHTTP/1.1 204 No Content\n\n") == [
                "@0 200 body=\"hi\" fields=1", "@37 204 body=\"\" fields=0",
            ])
    }

    @Test func bareCarriageReturnIsMalformed() {
        let items = frame("HTTP/1.1 200 OK\r\nFoo: 1\rBar: 1\r\n\r\n")
        #expect(items == ["@0 malformedRecord status=- bytes=34"])
    }

    @Test func garbageIsOneFailureThenResynchronises() {
        let items = frame(
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nA" + "this is not HTTP\nnor this\n"
                + "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nB")
        #expect(
            items == [
                "@0 200 body=\"A\" fields=1", "@39 malformedRecord status=- bytes=26", "@65 200 body=\"B\" fields=1",
            ])
    }

    /// Three digits below 100 are no status code (RFC 9110 §15), as in the HAR and ndjson framings: one error, then
    /// the next status line (found by the http fuzz target: `frame` wrote a 050 that ndjson refused).
    @Test func aStatusBelow100IsMalformed() {
        let items = frame(
            "HTTP/1.1 050 Odd\r\nContent-Length: 1\r\n\r\nA" + "HTTP/1.1 100 Continue\r\n\r\n"
                + "HTTP/1.1 999 Top\r\nContent-Length: 0\r\n\r\n")
        #expect(items == ["@0 malformedRecord status=- bytes=40", "@40 999 body=\"\" fields=1 warnings=1"])
    }

    @Test func malformedHeadResynchronisesAtTheNextStatusLine() {
        let items = frame(
            "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\nbody\r\n" + "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
        #expect(items == ["@0 malformedRecord status=- bytes=38", "@38 202 body=\"\" fields=1"])
    }

    @Test func headerSectionLimit() {
        let limits = Limits(maxHeaderBytes: 64)
        let big = "HTTP/1.1 200 OK\r\nX: " + String(repeating: "a", count: 100) + "\r\n\r\n"
        let items = frame(big + "HTTP/1.1 204 No Content\r\n\r\n", limits: limits)
        #expect(items.count == 2)
        #expect(items[0].contains("limitExceeded"))
        #expect(items[1].hasSuffix("204 body=\"\" fields=0"))
    }

    @Test func bodyLimitSkipsTheDeclaredBody() {
        let limits = Limits(maxBodyBytes: 4)
        let items = frame(
            "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
            limits: limits)
        #expect(items == ["@0 limitExceeded status=200 bytes=49", "@49 200 body=\"ok\" fields=1"])
    }

    @Test func chunkedAndCloseDelimitedBodyLimits() {
        let limits = Limits(maxBodyBytes: 4)
        let chunked = frame(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n", limits: limits)
        #expect(chunked == ["@0 limitExceeded status=200 bytes=68"])
        let toEnd = frame("HTTP/1.1 200 OK\r\n\r\n0123456789", limits: limits)
        #expect(toEnd == ["@0 limitExceeded status=200 bytes=29"])
    }

    @Test func truncatedRecords() {
        #expect(frame("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc") == ["@0 truncatedRecord status=200 bytes=42"])
        #expect(frame("HTTP/1.1 200 OK\r\nContent-Le") == ["@0 truncatedRecord status=- bytes=27"])
        #expect(
            frame("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab") == [
                "@0 truncatedRecord status=200 bytes=52"
            ])
        #expect(frame("HTTP/1.") == ["@0 truncatedRecord status=- bytes=7"])
    }

    @Test func switchingProtocolsEndsHTTP() {
        let items = frame("HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n\u{0}\u{0}binary frames")
        #expect(items == ["@0 101 body=\"\" fields=1", "@50 malformedRecord status=- bytes=15"])
    }

    @Test func obsoleteLineFoldingIsJoinedWithAWarning() {
        var framer = HTTPStreamFramer()
        let items = framer.frameAll(Array("HTTP/1.1 200 OK\r\nX-Folded: a\r\n  b\r\nContent-Length: 0\r\n\r\n".utf8))
        guard case .record(let record) = items.first else {
            Issue.record("no record: \(items)")
            return
        }
        #expect(record.headers.last("x-folded") == "a b")
        #expect(record.warnings.count == 1)
        #expect(
            frame("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n  , identity\r\n\r\n").first?.contains(
                "malformedRecord") == true)
    }

    @Test(arguments: [
        "2 \r\nhi\r\n0\r\n\r\n", // trailing space after the size
        "2 ext\r\nhi\r\n0\r\n\r\n", // extension without ';'
        "2;\r\nhi\r\n0\r\n\r\n", // empty extension
        "2;a=\"b\r\nhi\r\n0\r\n\r\n", // unbalanced quote
        "zz\r\nhi\r\n0\r\n\r\n", // not hex
        "11111111111111111\r\n", // more than 16 hex digits
        "2\r\nhiXX0\r\n\r\n", // data not followed by CRLF
    ])
    func malformedChunks(_ chunks: String) {
        let items = frame("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks)
        #expect(items.first?.contains("malformedRecord status=200") == true, "\(items)")
    }

    @Test func transferCodingOtherThanChunked() {
        #expect(
            frame("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nabc") == [
                "@0 200 body=\"abc\" fields=1 warnings=1"
            ])
        #expect(
            frame("HTTP/1.1 200 OK\r\nTransfer-Encoding: anything\r\nContent-Length: 1\r\n\r\nx").first?
                .contains("malformedRecord") == true)
        // RFC 9112 §6.3: in a response whose final coding is not chunked, the body runs until the connection closes.
        #expect(
            frame("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nx") == [
                "@0 200 body=\"x\" fields=1 warnings=1"
            ])
        #expect(
            frame("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n0\r\n\r\n").first?
                .contains("malformedRecord") == true)
    }

    @Test func blankLinesBetweenMessagesAreSkipped() {
        #expect(
            frame("\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n\r\n\nHTTP/1.1 204 No Content\r\n\r\n\r\n") == [
                "@4 204 body=\"\" fields=0", "@34 204 body=\"\" fields=0",
            ])
    }

    // docs/reliability.md#raw-http-framing: a 1 MB header line and 100,000 tiny headers stop at the header limit, and
    // framing goes on with the next response.
    @Test func hugeHeaderSectionsStopAtTheLimit() {
        let next = "HTTP/1.1 204 No Content\r\n\r\n"
        let longLine = "HTTP/1.1 200 OK\r\nX-Long: " + String(repeating: "a", count: 1 << 20) + "\r\n\r\n" + next
        let items = frame(longLine, pieces: [4096, 65536, 300_000])
        #expect(items.count == 2 && items[0].contains("limitExceeded") && items[1].contains("204"), "\(items)")
        let manyHeaders = "HTTP/1.1 200 OK\r\n" + String(repeating: "A: b\r\n", count: 100_000) + "\r\n" + next
        let many = frame(manyHeaders)
        #expect(many.count == 2 && many[0].contains("limitExceeded") && many[1].contains("204"), "\(many)")
    }

    // docs/reliability.md#raw-http-framing: chunk sizes that are not plain hex are rejected.
    @Test(arguments: ["-1", "+4", "0x4", " 4", ""])
    func chunkSizesThatAreNotHex(_ size: String) {
        let items = frame("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\(size)\r\nabcd\r\n0\r\n\r\n")
        #expect(items.first?.contains("malformedRecord status=200") == true, "\(items)")
    }

    // llhttp: `chunkedchunked` is not chunked, so the body runs to the end of input.
    @Test func chunkedchunkedIsNotChunked() {
        #expect(
            frame("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunkedchunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n") == [
                "@0 200 body=\"2\\r\\nhi\\r\\n0\\r\\n\\r\\n\" fields=1 warnings=1"
            ])
    }

    /// Failures found after the head keep its status and fields, so the line can report `contentType`.
    @Test func failuresAfterTheHeadKeepIt() {
        var framer = HTTPStreamFramer()
        let items = framer.frameAll(
            Array("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n\r\nabc".utf8))
        guard case .failure(let failure) = items.first else {
            Issue.record("expected a failure: \(items)")
            return
        }
        #expect(failure.status == 200 && failure.headers?.last("Content-Type") == "text/plain")
    }

    // Review finding: a response right after a bad head starts a line, so framing resumes there, in any split.
    @Test func resyncResumesRightAfterABadHead() {
        let items = frameEverySplit(
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"
                + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi" + "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"
        )
        #expect(
            items == [
                "@0 malformedRecord status=200 bytes=57", "@57 200 body=\"hi\" fields=1", "@97 201 body=\"\" fields=1",
            ])
    }

    // Review finding: where chunk data runs straight into the next response, that response is kept, in any split.
    @Test func chunkedBodyRunningIntoTheNextResponse() {
        let items = frameEverySplit(
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello"
                + "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n")
        #expect(items == ["@0 malformedRecord status=200 bytes=55", "@55 201 body=\"\" fields=1"])
    }

    // Review finding: an interim response before a malformed head belongs to that failure only.
    @Test func interimBeforeAMalformedHead() {
        let items = frameEverySplit(
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nBad Header\r\n\r\n"
                + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi")
        #expect(items == ["@0 malformedRecord status=- bytes=56", "@56 200 body=\"hi\" fields=1"])
    }

    // Review finding: interim responses are bounded like a head; a flood gives limit failures, then the response.
    @Test func interimFloodIsBounded() {
        let flood = String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: 6_000) + "HTTP/1.1 204 No Content\r\n\r\n"
        let items = frame(flood)
        #expect(items.count == 3, "\(items.count) items")
        #expect(items.dropLast().allSatisfy { $0.contains("limitExceeded") })
        // The interim responses after the last limit failure are folded into the 204, with a warning.
        #expect(items.last?.contains("204 body=\"\" fields=0 warnings=1") == true, "\(items)")
    }

    // Review finding: a failure's excerpt is the raw input from its offset, and its byte count never runs past the
    // end of the input.
    @Test func failureExcerptsAreTheRawInput() {
        let truncatedInput = "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"
        var framer = HTTPStreamFramer()
        guard case .failure(let truncated) = framer.frameAll(Array(truncatedInput.utf8)).first else {
            Issue.record("no failure")
            return
        }
        #expect(truncated.excerpt == Array(truncatedInput.utf8) && truncated.bytes == Int64(truncatedInput.utf8.count))

        let chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\nzz\r\n"
        framer = HTTPStreamFramer()
        guard case .failure(let badChunk) = framer.frameAll(Array(chunked.utf8)).first else {
            Issue.record("no failure")
            return
        }
        #expect(badChunk.excerpt == Array(chunked.utf8) && badChunk.bytes == Int64(chunked.utf8.count))

        let overLimit = "HTTP/1.1 200 OK\r\nContent-Length: 999999999\r\n\r\nabc"
        framer = HTTPStreamFramer(limits: Limits(maxBodyBytes: 100))
        guard case .failure(let skipped) = framer.frameAll(Array(overLimit.utf8)).first else {
            Issue.record("no failure")
            return
        }
        #expect(skipped.error.code == .limitExceeded && skipped.bytes == Int64(overLimit.utf8.count))
    }

    // Review finding: a limit the size of the address space must not overflow the framer's arithmetic.
    @Test func hugeLimitsDoNotOverflow() {
        let limits = Limits(maxHeaderBytes: .max, maxBodyBytes: .max, maxErrorBodyBytes: 4096)
        #expect(
            frame("HTTP/1.1 200 OK\r\nContent-Length: 100000000000000\r\n\r\nab", limits: limits) == [
                "@0 truncatedRecord status=200 bytes=54"
            ])
        #expect(
            frame("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n", limits: limits) == [
                "@0 200 body=\"hi\" fields=1"
            ])
    }

    @Test func garbageMessagesDoNotDependOnTheSplit() {
        let items = frameEverySplit("xyz\nHTTP/1.1 204 No Content\r\n\r\n")
        #expect(items == ["@0 malformedRecord status=- bytes=4", "@4 204 body=\"\" fields=0"])
    }

    @Test func emptyInputGivesNothing() {
        #expect(frame("").isEmpty)
    }

    /// Every framing case above in one stream: whole, byte by byte and in random splits must agree.
    @Test func anySplitGivesTheSameItems() {
        let stream = Array(Self.mixedStream.utf8)
        let whole = frame(stream)
        #expect(whole.count == 13, "\(whole)")
        #expect(frame(stream, pieces: Array(repeating: 1, count: stream.count)) == whole)
        #expect(frameEverySplit(Self.mixedStream).count == 13)
        var generator = SplitMix64(seed: 0x5EED)
        for _ in 0..<200 {
            var pieces: [Int] = []
            var total = 0
            while total < stream.count {
                let size = Int(generator.next() % 23) + 1
                pieces.append(size)
                total += size
            }
            #expect(frame(stream, pieces: pieces) == whole)
        }
    }

    static let mixedStream =
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{\"foo\":\"bar\"}"
        + "HTTP/1.1 100 Continue\r\n\r\n"
        + "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;a=\"x;y\"\r\nhello\r\n0\r\nT: 1\r\n\r\n"
        + "\r\nHTTP/1.1 204 No Content\r\n\r\n"
        + "garbage line\n"
        + "HTTP/1.1 304 Not Modified\nContent-Length: 7\n\n"
        + "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab\n"
        + "HTTP/1.1 404 Not Found\r\nContent-Length: 9\r\n\r\nnot found"
        + "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n1\r\nx\r\n0\r\n\r\n"
        + "HTTP/1.1 200 OK\r\nX: a\r\n b\r\nContent-Length: 0\r\n\r\n"
        + "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2 \r\nhi\r\n0\r\n\r\n"
        + "HTTP/1.1 101 Switching Protocols\r\n\r\n"
        + "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
        + "HTTP/1.0 200 OK\r\n\r\nthe rest of the input"
}
