import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// Records over the limits, read as they are skipped (OverLimitBlock.swift, docs/reliability.md#limits): their
/// limitExceeded item says what the record's line would (status, fields, digest, body size) and what its body looks
/// like, whatever the split, plain or gzip, without holding the block.
@Suite("WARC records over the limits")
struct WARCOverLimitTests {
    /// Small limits: a block over 1,536 bytes is skipped.
    static let limits = Limits(maxHeaderBytes: 512, maxBodyBytes: 1024)
    /// Limits a few KB record is well within (the reference: the same record framed and checked as usual).
    static let roomy = Limits(maxHeaderBytes: 512, maxBodyBytes: 1 << 20)

    /// A JSON array of `count` bytes (after a space when `count` is even).
    static func jsonBody(_ count: Int) -> [UInt8] {
        Array(((count % 2 == 0 ? " [" : "[") + String(repeating: "1,", count: (count - 3) / 2) + "1]").utf8)
    }

    static func sha1(_ bytes: [UInt8]) -> String {
        let digest = bytes.withUnsafeBufferPointer { PayloadDigest.digest(.sha1, of: $0) }!
        return "sha1:" + PayloadDigest.base32(digest)
    }

    /// Chunks of `size` bytes of `body`, CRLF after each, the last chunk and `tail`.
    static func chunked(_ body: [UInt8], size: Int, tail: String = "0\r\n\r\n") -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < body.count {
            let n = min(size, body.count - i)
            out += Array((String(n, radix: 16) + "\r\n").utf8) + body[i..<i + n] + Array("\r\n".utf8)
            i += n
        }
        return out + Array(tail.utf8)
    }

    static func response(
        head: String, body: [UInt8], digest: String?, id: Int = 1, contentLength: String? = nil
    ) -> [UInt8] {
        var fields = [("Content-Type", "application/http; msgtype=response")]
        if let digest { fields.append(("WARC-Payload-Digest", digest)) }
        return WARCFixtures.record(
            "response", uri: "http://example.com/\(id)", id: "<urn:x:\(id)>", fields: fields,
            block: Array(head.utf8) + body, contentLength: contentLength)
    }

    /// Everything a failure says that this feature adds, and the rest of it.
    static func describe(_ item: FramedItem) -> String {
        switch item {
        case .record(let r):
            return "record @\(r.offset) \(r.status) \(r.body.count) digest=\(r.warc?.digest.map(\.rawValue) ?? "-")"
        case .failure(let f):
            let fields = f.headers?.fields.map { "\($0.name):\($0.value)" } ?? []
            return
                "\(f.error.code) @\(f.offset) length=\(f.length.map(String.init) ?? "-") bytes=\(f.bytes) status=\(f.status.map(String.init) ?? "-") fields=\(fields) bodyBytes=\(f.bodyBytes.map(String.init) ?? "-") digest=\(f.warc?.digest?.rawValue ?? "-") type=\(f.warc?.type ?? "-") id=\(f.warc?.recordId ?? "-") url=\(f.url ?? "-") warnings=\(f.warnings) excerpt=\(f.excerpt.count)"
        }
    }

    /// Frames `input` whole, byte by byte (when short enough) and in random splits: all must agree.
    static func everySplit(
        _ input: [UInt8], limits: Limits = limits, sourceLocation: SourceLocation = #_sourceLocation
    ) -> [FramedItem] {
        let verdict = FramerSplits.verify(
            input, byteByByte: input.count < 40_000, randomSplits: 20, maxPiece: 301,
            make: { WARCFramer(limits: limits) }, describe: { describe($0.checkingPayloadDigest()) })
        #expect(verdict.mismatches == [], sourceLocation: sourceLocation)
        return verdict.items.map { $0.checkingPayloadDigest() }
    }

    /// The over-limit item says what the record framed within roomy limits says: status, fields, digest, size.
    static func expectSameAsHeld(
        _ record: [UInt8], sniffed: String?, sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        let held = try #require(
            warcItems(record, limits: roomy).first?.record, "reference not framed", sourceLocation: sourceLocation)
        let items = everySplit(record + WARCFixtures.small[3], sourceLocation: sourceLocation)
        #expect(items.count == 2, sourceLocation: sourceLocation)
        #expect(items.last?.record?.body == Array("plain text".utf8), sourceLocation: sourceLocation)
        let failure = try #require(items.first?.failure, sourceLocation: sourceLocation)
        #expect(failure.error.code == .limitExceeded, sourceLocation: sourceLocation)
        #expect(failure.error.message.hasSuffix("skipped, the body not decoded"), sourceLocation: sourceLocation)
        #expect(failure.status == held.status, sourceLocation: sourceLocation)
        #expect(failure.headers == held.headers, sourceLocation: sourceLocation)
        #expect(failure.warc?.digest == held.warc?.digest, sourceLocation: sourceLocation)
        #expect(failure.bodyBytes == Int64(held.body.count), sourceLocation: sourceLocation)
        #expect(
            failure.url == held.url && failure.warc?.recordId == held.warc?.recordId, sourceLocation: sourceLocation)
        #expect(failure.warc?.date == held.warc?.date && failure.warc?.type == held.warc?.type)
        #expect(failure.bytes == Int64(record.count), sourceLocation: sourceLocation)
        let sniffWarnings = failure.warnings.filter { $0.hasPrefix("the body was not decoded") }
        #expect(
            sniffWarnings == sniffed.map { ["the body was not decoded; its first bytes look like \($0) (sniffed)"] }
                ?? [],
            sourceLocation: sourceLocation)
        // The held record's own warnings are the line's too.
        #expect(
            failure.warnings.filter { !$0.hasPrefix("the body was not decoded") } == held.warnings,
            sourceLocation: sourceLocation)
    }

    @Test func responseWithDigestOkAndMismatch() throws {
        let body = Self.jsonBody(3000)
        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n"
        let ok = Self.response(head: head, body: body, digest: Self.sha1(body))
        try Self.expectSameAsHeld(ok, sniffed: "application/json")
        let items = Self.everySplit(ok)
        #expect(items.first?.failure?.warc?.digest == .ok && items.first?.failure?.bodyBytes == 3000)
        #expect(items.first?.failure?.headers?.last("Content-Type") == "application/json")
        let wrong = Self.response(head: head, body: body, digest: Self.sha1(body + [0x20]))
        try Self.expectSameAsHeld(wrong, sniffed: "application/json")
        #expect(Self.everySplit(wrong).first?.failure?.warc?.digest == .mismatch)
        // Hex, and a value no payload can have, are read as the held path reads them.
        let hex = Self.response(
            head: head, body: body,
            digest: "sha1:"
                + body.withUnsafeBufferPointer { PayloadDigest.digest(.sha1, of: $0)! }
                .map { String($0, radix: 16).leftPadded(to: 2) }.joined())
        try Self.expectSameAsHeld(hex, sniffed: "application/json")
        let never = Self.response(head: head, body: body, digest: "sha1:1112H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ")
        try Self.expectSameAsHeld(never, sniffed: "application/json")
        // Without a digest: none on the line.
        let none = Self.response(head: head, body: body, digest: nil)
        try Self.expectSameAsHeld(none, sniffed: "application/json")
        #expect(Self.everySplit(none).first?.failure?.warc?.digest == nil)
    }

    /// A chunked body: its size de-chunked; the digest of the body de-chunked or as stored matches, as when held.
    @Test func chunkedBodies() throws {
        let body = Self.jsonBody(2500)
        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        let stored = Self.chunked(body, size: 700, tail: "0\r\nX-Trailer: 1\r\n\r\n")
        for digest in [Self.sha1(body), Self.sha1(stored), Self.sha1(body + [1])] {
            let record = Self.response(head: head, body: stored, digest: digest)
            try Self.expectSameAsHeld(record, sniffed: "application/json")
            let failure = try #require(Self.everySplit(record).first?.failure)
            #expect(failure.bodyBytes == 2500)
            #expect(failure.warc?.digest == (digest == Self.sha1(body + [1]) ? .mismatch : .ok))
        }
        // Declared chunked, stored de-chunked (Common Crawl): taken as is, with the held path's warning.
        let asIs = Self.response(head: head, body: body, digest: Self.sha1(body))
        try Self.expectSameAsHeld(asIs, sniffed: "application/json")
        // Bare LF after chunk data, a chunk extension: read as when held.
        let lf = Array("5;x=y\n[1,1,\n".utf8) + Self.chunked(Array(body.dropFirst(5)), size: 999)
        try Self.expectSameAsHeld(
            Self.response(head: head, body: lf, digest: Self.sha1(body)), sniffed: "application/json")
    }

    /// Interim heads are skipped; a record that is not HTTP (resource) or a request record is read as when held.
    @Test func otherBlocks() throws {
        let body = Self.jsonBody(2000)
        let interim =
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\n\r\n"
        try Self.expectSameAsHeld(
            Self.response(head: interim, body: body, digest: Self.sha1(body)), sniffed: "application/json")
        let resource = WARCFixtures.record(
            "resource", uri: "http://example.com/r",
            fields: [
                ("Content-Type", "application/json"), ("WARC-Payload-Digest", Self.sha1(body)),
            ], block: body)
        try Self.expectSameAsHeld(resource, sniffed: "application/json")
        // A request record (types: all): the payload is what follows the request head.
        let request = WARCFixtures.record(
            "request",
            fields: [
                ("Content-Type", "application/http; msgtype=request"), ("WARC-Payload-Digest", Self.sha1(body)),
            ], block: Array("POST /a HTTP/1.1\r\nHost: x\r\n\r\n".utf8) + body)
        let failure = try #require(
            FramerSplits.verify(
                request, randomSplits: 10, maxPiece: 301, make: { WARCFramer(limits: Self.limits, types: nil) },
                describe: Self.describe
            ).items.first?.failure)
        #expect(failure.warc?.digest == .ok && failure.bodyBytes == 2000 && failure.status == 200)
        // A binary body: its type, sniffed.
        let png: [UInt8] =
            [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [0, 0, 0, 13] + Array("IHDR".utf8)
            + [0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0, 0x90, 0x77, 0x53, 0xDE] + [UInt8](repeating: 7, count: 2000)
        try Self.expectSameAsHeld(
            Self.response(head: "HTTP/1.1 200 OK\r\n\r\n", body: png, digest: nil), sniffed: "image/png")
        // Zeros show no type: no warning.
        try Self.expectSameAsHeld(
            Self.response(head: "HTTP/1.1 200 OK\r\n\r\n", body: [UInt8](repeating: 0, count: 2000), digest: nil),
            sniffed: nil)
    }

    /// An HTTP head over maxHeaderBytes: no status, the digest not checked (the payload's start is unknown).
    @Test func headTooLong() throws {
        let body = Self.jsonBody(2000)
        let head = "HTTP/1.1 200 OK\r\nX-Long: \(String(repeating: "a", count: 700))\r\n\r\n"
        let items = Self.everySplit(Self.response(head: head, body: body, digest: Self.sha1(body)))
        let failure = try #require(items.first?.failure)
        #expect(failure.error.code == .limitExceeded && failure.status == nil && failure.warc?.digest == nil)
        #expect(failure.bodyBytes == nil)
        #expect(
            failure.warnings == [
                "HTTP header section longer than 512 bytes (maxHeaderBytes): WARC-Payload-Digest not checked"
            ])
    }

    /// Cut short (the input ends; in gzip, the next record's member): the status and type, no digest nor size.
    @Test func cutShort() throws {
        let body = Self.jsonBody(3000)
        let head = "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n\r\n"
        let record = Self.response(head: head, body: body, digest: Self.sha1(body))
        let items = Self.everySplit(Array(record.dropLast(500)))
        let failure = try #require(items.first?.failure)
        #expect(failure.error.code == .truncatedRecord && failure.status == 404 && failure.warc?.digest == nil)
        #expect(failure.bodyBytes == nil && failure.headers?.last("Content-Type") == "application/json")
        #expect(failure.warnings == ["the body was not decoded; its first bytes look like application/json (sniffed)"])
        // gzip: a record whose Content-Length says 1,000 bytes too many, cut by the next record's member.
        let liar = Self.response(
            head: head, body: body, digest: Self.sha1(body),
            contentLength: String(Array(head.utf8).count + body.count + 1000))
        let (gz, offsets) = WARCFixtures.gzipPerRecord([liar, WARCFixtures.small[3]])
        let cut = Self.everySplit(gz)
        #expect(cut.count == 2 && cut.last?.record?.offset == offsets[1])
        let gzFailure = try #require(cut.first?.failure)
        #expect(gzFailure.error.code == .limitExceeded && gzFailure.status == 404 && gzFailure.warc?.digest == nil)
    }

    /// gzip per record: the same as plain, the member's length; the inflated stream is not held.
    @Test func gzipMembers() throws {
        let body = Self.jsonBody(3000)
        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n"
        let records = [
            Self.response(head: head, body: body, digest: Self.sha1(body)),
            Self.response(head: head, body: body, digest: Self.sha1([1]), id: 2),
            WARCFixtures.small[3],
        ]
        let (gz, offsets) = WARCFixtures.gzipPerRecord(records)
        let items = Self.everySplit(gz)
        #expect(items.count == 3)
        let first = try #require(items.first?.failure)
        #expect(first.warc?.digest == .ok && first.bodyBytes == 3000 && first.status == 200)
        #expect(first.offset == 0 && first.length == offsets[1])
        #expect(first.warnings == ["the body was not decoded; its first bytes look like application/json (sniffed)"])
        #expect(items[1].failure?.warc?.digest == .mismatch && items[1].failure?.length == offsets[2] - offsets[1])
        #expect(items[2].record?.offset == offsets[2])
    }

    /// A record of 4 MB, plain and gzip, fed in pieces: the framer holds no more than for a small one.
    @Test func nothingOfTheBlockIsHeld() throws {
        let body = [UInt8]("{\"a\":\"".utf8) + [UInt8](repeating: 0x61, count: 4 << 20) + Array("\"}".utf8)
        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n"
        let record = Self.response(head: head, body: body, digest: Self.sha1(body))
        for input in [record, WARCFixtures.gzipMember(record)] {
            var framer = WARCFramer(limits: Self.limits)
            var most = 0
            let pieces = Array(repeating: 4096, count: input.count / 4096 + 1)
            let items = FramerSplits.feed(&framer, input, pieces: pieces) { framer, input in
                most = max(most, input.writerIndex + framer.bufferedByteCount)
            }.map { $0.checkingPayloadDigest() }
            #expect(most <= 256 * 1024, "buffered \(most) bytes")
            let failure = try #require(items.first?.failure)
            #expect(failure.warc?.digest == .ok && failure.bodyBytes == Int64(body.count))
        }
    }

    /// `verifyDigests: false` (--no-verify-digests): no digest work, no digest on the line.
    @Test func digestsOff() throws {
        let body = Self.jsonBody(3000)
        let record = Self.response(head: "HTTP/1.1 200 OK\r\n\r\n", body: body, digest: Self.sha1(body))
        var framer = WARCFramer(limits: Self.limits, verifyDigests: false)
        let failure = try #require(warcItems(&framer, record).first?.failure)
        #expect(failure.warc?.digest == nil && failure.bodyBytes == 3000)
    }
}

extension WARCOverLimitTests {
    /// A block within maxBodyBytes + maxHeaderBytes whose body is over maxBodyBytes is held, and its line says the
    /// same as a longer one's.
    @Test func heldBlockWhoseBodyIsOver() throws {
        let body = Self.jsonBody(1100)
        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n"
        for digest in [Self.sha1(body), Self.sha1([1])] {
            let record = Self.response(head: head, body: body, digest: digest)
            let failure = try #require(Self.everySplit(record + WARCFixtures.small[3]).first?.failure)
            #expect(failure.error.message == "body longer than 1024 bytes (maxBodyBytes)")
            #expect(failure.bodyBytes == 1100 && failure.status == 200)
            #expect(failure.warc?.digest == (digest == Self.sha1(body) ? .ok : .mismatch))
            #expect(
                failure.warnings == ["the body was not decoded; its first bytes look like application/json (sniffed)"])
        }
        // An HTTP head over maxHeaderBytes in a held block: the failure is the head's, as before.
        let long = "HTTP/1.1 200 OK\r\nX-Long: \(String(repeating: "a", count: 600))\r\n\r\n"
        let failure = try #require(
            Self.everySplit(Self.response(head: long, body: Array("{}".utf8), digest: nil)).first?.failure)
        #expect(failure.error.code == .limitExceeded && failure.bodyBytes == nil && failure.warnings.isEmpty)
    }
}

extension WARCOverLimitTests {
    /// Random chunked bodies (chunk sizes, LF or CRLF, extensions, trailers, a body stored de-chunked, digests of the
    /// body or of the stored bytes or of neither): read as they are skipped, each says what the record held whole
    /// says (status, fields, warnings, digest, body size).
    @Test func randomChunkedBodiesAgreeWithTheHeldPath() throws {
        var random = SplitMix64(seed: 22)
        var compared = 0
        for _ in 0..<60 {
            let body = (0..<(1600 + Int(random.next() % 1500))).map { _ in UInt8(ascii: "a") + UInt8(random.next() % 26)
            }
            var stored: [UInt8] = []
            if random.next() % 5 == 0 {
                stored = body // declared chunked, stored de-chunked
            } else {
                var i = 0
                while i < body.count {
                    let n = min(body.count - i, 1 + Int(random.next() % 900))
                    let ext = random.next() % 4 == 0 ? ";x=1" : ""
                    let end = random.next() % 3 == 0 ? "\n" : "\r\n"
                    stored += Array("\(String(n, radix: 16))\(ext)\(end)".utf8) + body[i..<i + n] + Array(end.utf8)
                    i += n
                }
                stored += Array((random.next() % 2 == 0 ? "0\r\n\r\n" : "0\r\nX-T: 1\r\n\r\n").utf8)
            }
            let digest =
                switch random.next() % 3 {
                case 0: Self.sha1(body)
                case 1: Self.sha1(stored)
                default: Self.sha1([])
                }
            let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: text/plain\r\n\r\n"
            let record = Self.response(head: head, body: stored, digest: digest)
            guard warcItems(record, limits: Self.roomy).first?.record != nil else { continue }
            try Self.expectSameAsHeld(record, sniffed: nil)
            compared += 1
        }
        #expect(compared == 60)
    }
}

extension WARCOverLimitTests {
    /// The result line of `item` (as the workers write it), placed as `placed` (its offset and length).
    static func resultLine(_ item: FramedItem, placed: FramedItem? = nil) -> String {
        let out = OutputBuffer()
        let place = placed ?? item
        let source = ResultLine.Source(seq: 0, offset: place.offset, length: place.length, input: nil)
        _ = CompoundDecoder(settings: .init()).writeLine(for: item.checkingPayloadDigest(), source: source, into: out)
        return String(decoding: out.bytes, as: UTF8.self)
    }

    /// `respdecode frame` then `--input ndjson` gives the direct run's line (issue 8), for records over the limit
    /// too: their digest, warnings and body size go through `frame`'s line.
    @Test func throughFrameTheLineIsTheSame() throws {
        let body = Self.jsonBody(3000)
        let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n"
        let record = Self.response(head: head, body: body, digest: Self.sha1(body))
        var items = warcItems(record + Array(record.dropLast(100)), limits: Self.limits)
        items += warcItems(Self.response(head: head, body: Self.jsonBody(1100), digest: nil), limits: Self.limits)
        var http = HTTPStreamFramer(limits: Self.limits)
        items += FramerSplits.feed(&http, Array("HTTP/1.1 200 OK\r\nContent-Length: 3000\r\n\r\n".utf8) + body)
        #expect(items.count == 4 && items.allSatisfy { $0.failure?.error.code != nil })
        for item in items {
            let direct = Self.resultLine(item)
            let framed = OutputBuffer()
            let source = ResultLine.Source(seq: 0, offset: item.offset, length: item.length, input: nil)
            _ = RecordLineWriter().writeLine(for: item.checkingPayloadDigest(), source: source, into: framed)
            var reader = NDJSONFramer()
            let back = reader.frameAll(framed.bytes)
            guard case .failure(var failure)? = back.first, back.count == 1 else {
                Issue.record("not one failure: \(back)")
                continue
            }
            failure.id = item.failure?.id
            #expect(Self.resultLine(.failure(failure), placed: item) == direct)
            #expect(direct.contains("\"bodyBytes\":") == (item.failure?.bodyBytes != nil))
        }
    }
}

extension WARCOverLimitTests {
    /// Garbage blocks under tiny limits (heads and chunk-size lines cut anywhere, limits below the 7 bytes that tell
    /// a block's kind), fed to the reader whole, byte by byte and in random pieces: no trap, the same outcome; and
    /// through the framer (blocks held or skipped), every split gives the same items.
    @Test func garbageUnderTinyLimits() {
        var random = SplitMix64(seed: 7)
        let pieces = [
            "HTTP/1.1 200 OK\r\n", "HTTP/1.1 100 Continue\r\n\r\n", "Transfer-Encoding: chunked\r\n", "\r\n", "\n",
            "5\r\nhello\r\n", "0\r\n\r\n", "zz\r\n", "{\"a\":1}", "Content-Type: text/html\r\n", "<html>", "\r",
        ]
        func outcome(_ o: OverLimitBlock.Outcome) -> String {
            "\(o.status ?? -1) \(o.headers?.count ?? -1) \(o.digest.map(\.rawValue) ?? "-") \(o.bodyBytes ?? -1) \(o.warnings)"
        }
        for _ in 0..<200 {
            var block: [UInt8] = []
            for _ in 0..<(1 + random.next() % 12) {
                block += Array(pieces[Int(random.next() % UInt64(pieces.count))].utf8)
            }
            let limits = Limits(maxHeaderBytes: 1 + Int(random.next() % 40), maxBodyBytes: 1 + Int(random.next() % 40))
            let type = random.next() % 4 == 0 ? "resource" : "response"
            var fields = [("Content-Type", type == "response" ? "application/http; msgtype=response" : "text/plain")]
            if random.next() % 2 == 0 { fields.append(("WARC-Payload-Digest", Self.sha1(block))) }
            let record = WARCFixtures.record(type, fields: fields, block: block)
            let headerEnd = record.count - block.count - 4
            let parsed = record.withUnsafeBufferPointer {
                WARCHeader.parse(UnsafeBufferPointer(rebasing: $0[..<headerEnd]))
            }
            guard case .success(let header) = parsed else {
                Issue.record("header not parsed: \(parsed)")
                continue
            }
            var results: Set<String> = []
            for size in [block.count, 1, 1 + Int(random.next() % 9)] {
                let reader = OverLimitBlock(header: header, warnings: [], limits: limits, verifyDigests: true)
                var i = 0
                while i < block.count {
                    let n = min(size, block.count - i)
                    block.withUnsafeBufferPointer { reader.feed(UnsafeBufferPointer(rebasing: $0[i..<i + n])) }
                    i += n
                }
                results.insert(outcome(reader.finish(complete: true)))
            }
            #expect(results.count == 1, "\(results)")
            let verdict = FramerSplits.verify(
                record + WARCFixtures.small[3], byteByByte: false, randomSplits: 8, maxPiece: 13,
                make: { WARCFramer(limits: Limits(maxHeaderBytes: 512, maxBodyBytes: limits.maxBodyBytes)) },
                describe: { Self.describe($0.checkingPayloadDigest()) })
            #expect(verdict.mismatches == [])
        }
    }
}

extension WARCOverLimitTests {
    /// ARC records over the limit (skipped, or held whole) say what the record would: an `http` URL's HTTP head, a
    /// `dns:` record's status 200 and ARC Content-type; body size and sniffed type; no digest (ARC has none).
    @Test func arcRecords() throws {
        for (head, url, status, type) in [
            (
                "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n\r\n", "http://example.com/a", 404,
                "application/json"
            ),
            ("", "dns:example.com", 200, "text/dns"),
        ] {
            // 3,001 bytes: skipped as it passes; 1,101: held whole (within maxBodyBytes + maxHeaderBytes).
            for size in [3001, 1101] {
                let block = head + String(decoding: Self.jsonBody(size), as: UTF8.self)
                let input = ARCFixtures.plain([
                    ARCFixtures.filedesc(version: .v1), ARCFixtures.record(url, block, mime: type),
                    ARCFixtures.record("http://example.com/b", ARCFixtures.http),
                ])
                let items = Self.everySplit(input)
                #expect(items.count == 2, "\(items.map(Self.describe))")
                let failure = try #require(items.first?.failure)
                #expect(failure.error.code == .limitExceeded && failure.status == status, "\(Self.describe(items[0]))")
                #expect(failure.headers?.last("Content-Type") == type && failure.warc == nil)
                #expect(failure.bodyBytes == Int64(size) && failure.url == url, "\(Self.describe(items[0]))")
                #expect(
                    failure.warnings == [
                        "the body was not decoded; its first bytes look like application/json (sniffed)"
                    ])
                #expect(items.last?.record?.status == 200)
            }
        }
    }
}
