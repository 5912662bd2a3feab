import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// Spans of a `.warc.gz` framed apart and taken back in order (Runtime/MemberSpans.swift) give exactly the items of
/// one framer reading the whole input, whatever the members hold and wherever the spans are cut.
@Suite("Member spans")
struct MemberSpansTests {
    /// Frames `input` as the runner does with several jobs, with spans of about `target` bytes read `chunk` bytes at a
    /// time (every span framed at once, as a worker would); the items, the skipped counts and how many spans the
    /// workers' framing was taken for.
    static func spanned(
        _ input: [UInt8], target: Int, maximum: Int = 1 << 20, chunk: Int = 4096, idleEvery: Int = 0,
        configuration: Configuration = Configuration()
    ) -> (items: [String], skipped: [String: Int], taken: Int, framedHere: Int) {
        var buffer = FramerInput()
        let assembler = SpanAssembler(configuration: configuration, streamOffset: 0)
        var items: [String] = []
        var position = 0
        var reads = 0
        func take(_ span: MemberSpan) {
            if span.delegated { span.frame(configuration: configuration) }
            assembler.take(span) { items.append(describeWARCFully($0.checkingPayloadDigest())) }
        }
        while true {
            let ended = position == input.count
            let idle = idleEvery > 0 && reads % idleEvery == 0
            while let span = MemberSpans.cut(
                from: &buffer, ended: ended, seenEOF: true, idle: idle, target: target, maximum: maximum)
            {
                take(span)
                if span.isLast { break }
            }
            if ended { break }
            let n = min(chunk, input.count - position)
            buffer.write(input[position..<position + n])
            position += n
            reads += 1
        }
        return (items, assembler.skippedRecords, assembler.spansTaken, assembler.spansFramedHere)
    }

    /// One framer over the whole input: the reference.
    static func whole(_ input: [UInt8], configuration: Configuration = Configuration()) -> (
        items: [String], skipped: [String: Int]
    ) {
        var framer = WARCFramer(
            limits: configuration.limits, types: configuration.warcTypes, verifyDigests: configuration.verifyDigests)
        let items = framer.frameAll(input).map { describeWARCFully($0.checkingPayloadDigest()) }
        return (items, framer.skippedRecords)
    }

    static func expectSame(
        _ input: [UInt8], targets: [Int] = [64, 300, 1000, 5000], chunks: [Int] = [97, 4096],
        configuration: Configuration = Configuration(), sourceLocation: SourceLocation = #_sourceLocation
    ) -> Int {
        let reference = whole(input, configuration: configuration)
        var taken = 0
        for target in targets {
            for chunk in chunks {
                for idleEvery in [0, 3] {
                    let run = spanned(
                        input, target: target, maximum: 8 * target, chunk: chunk, idleEvery: idleEvery,
                        configuration: configuration)
                    #expect(
                        run.items == reference.items, "target \(target), chunk \(chunk), idle \(idleEvery)",
                        sourceLocation: sourceLocation)
                    #expect(run.skipped == reference.skipped, sourceLocation: sourceLocation)
                    taken += run.taken
                }
            }
        }
        return taken
    }

    /// Responses of a few hundred bytes each, numbered.
    static func responses(_ count: Int, from first: Int = 0) -> [[UInt8]] {
        (first..<first + count).map { n in
            let body = "{\"n\":\(n),\"text\":\"\(String(repeating: "word\(n % 7) ", count: 5 + n % 40))\"}"
            let http =
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
            return WARCFixtures.response(http, uri: "http://example.com/\(n)", id: "<urn:uuid:\(n)>")
        }
    }

    @Test func memberPerRecordIsTakenFromTheWorkers() {
        var records = Self.responses(300)
        records.insert(WARCFixtures.small[0], at: 0)
        records.insert(WARCFixtures.small[2], at: 100)
        let input = records.flatMap { WARCFixtures.gzipMember($0) }
        let taken = Self.expectSame(input)
        // The spans after the first are the workers' (the test would pass with every span framed by the reader).
        #expect(taken > 100)
    }

    @Test func recordsSplitAcrossMembersAreFramedOnByTheReader() {
        var input: [UInt8] = []
        for (n, record) in Self.responses(200).enumerated() {
            if n % 5 == 2 {
                // Head in one member, block in the next: no member boundary between them is a record boundary.
                input += WARCFixtures.gzipMember(Array(record.prefix(40)))
                input += WARCFixtures.gzipMember(Array(record.dropFirst(40)))
            } else {
                input += WARCFixtures.gzipMember(record)
            }
        }
        #expect(Self.expectSame(input) > 0)
    }

    @Test func membersHoldingSeveralRecordsKeepTheirDecompressedOffsets() {
        // Offsets in the decompressed stream (records that do not start their member) depend on all that was inflated
        // before: the spans must give the same numbers.
        let records = Self.responses(240)
        var input: [UInt8] = []
        for group in stride(from: 0, to: records.count, by: 6) {
            input += WARCFixtures.gzipMember(records[group..<min(group + 6, records.count)].flatMap { $0 })
            input += WARCFixtures.gzipMember(Self.responses(1, from: 1000 + group)[0])
        }
        _ = Self.expectSame(input)
    }

    @Test func gzipAsAWholeIsOneFramer() {
        let input = WARCFixtures.gzipMember(Self.responses(200).flatMap { $0 })
        _ = Self.expectSame(input)
    }

    @Test func falseMemberHeadersInsideStoredDataAreNotBelieved() {
        // Stored (level 0) members whose data is full of 1F 8B 08 00: the scan finds headers that are none.
        let records = (0..<150).map { n -> [UInt8] in
            let body = Array(repeating: [0x1F, 0x8B, 0x08, 0x00] as [UInt8], count: 30 + n % 20).flatMap { $0 }
            let http = Array("HTTP/1.1 200 OK\r\nContent-Type: image/png\r\nContent-Length: \(body.count)\r\n\r\n".utf8)
            return WARCFixtures.record(
                "response", uri: "http://example.com/\(n)", id: "<urn:uuid:\(n)>",
                fields: [("Content-Type", "application/http; msgtype=response")], block: http + body)
        }
        let input = records.flatMap { WARCFixtures.gzipMember($0, level: 0) }
        _ = Self.expectSame(input)
    }

    @Test func corruptTruncatedAndPlainBytesBetweenMembers() {
        var input: [UInt8] = []
        for (n, record) in Self.responses(160).enumerated() {
            var member = WARCFixtures.gzipMember(record)
            switch n % 23 {
            case 3: member[member.count / 2] ^= 0x55 // corrupt data
            case 7: member[member.count - 3] ^= 0x01 // a wrong length in the trailer
            case 11: member += Array("garbage between members\r\n".utf8)
            case 13: member = record // a plain record among members
            case 17:
                // Runs of bytes between members longer than a span's maximum: a span is cut inside them, and the next
                // starts with plain bytes, where one framer is still reading gzip members (line ends are filler: the
                // span before ends at a member boundary).
                member += Array(String(repeating: "not gzip; ", count: 300).utf8)
            case 19:
                member += Array(
                    (String(repeating: "\r\n", count: 2000) + "WARC/1.0\r\nWARC-Type: x\r\nBad Field\r\n\r\n").utf8)
            default: break
            }
            input += member
        }
        input += Array(WARCFixtures.gzipMember(Self.responses(1, from: 999)[0]).dropLast(9)) // cut short
        _ = Self.expectSame(input)
    }

    @Test func overlongBlocksAndWrongLengthsResynchronise() {
        var configuration = Configuration()
        configuration.limits.maxBodyBytes = 300
        var records = Self.responses(120)
        records[10] = WARCFixtures.record(
            "resource", uri: "http://example.com/big", fields: [("Content-Type", "text/plain")],
            block: String(repeating: "x", count: 5000))
        records[40] = WARCFixtures.record(
            "resource", uri: "http://example.com/long", fields: [("Content-Type", "text/plain")], block: "short",
            contentLength: "900")
        records[70] = Array(records[70].dropLast(2)) // a separator short
        let input = records.flatMap { WARCFixtures.gzipMember($0) }
        _ = Self.expectSame(input, configuration: configuration)
        _ = Self.expectSame(input)
    }

    @Test func typesNotChosenAreCountedOnce() {
        var configuration = Configuration()
        configuration.warcTypes = ["resource"]
        var records = Self.responses(100)
        for n in stride(from: 0, to: 100, by: 9) {
            records[n] = WARCFixtures.record(
                "resource", uri: "http://example.com/r\(n)", id: "<urn:uuid:r\(n)>",
                fields: [("Content-Type", "text/plain")], block: "resource \(n)")
        }
        let input = records.flatMap { WARCFixtures.gzipMember($0) }
        _ = Self.expectSame(input, configuration: configuration)
    }

    @Test func randomMixturesAgree() {
        var random = SplitMix64(seed: 22)
        for round in 0..<12 {
            var input: [UInt8] = []
            var n = 0
            while input.count < 20_000 {
                let records = Self.responses(1 + Int(random.next() % 4), from: n)
                n += records.count
                switch random.next() % 8 {
                case 0: input += WARCFixtures.gzipMember(records.flatMap { $0 })
                case 1: input += records.flatMap { $0 }
                case 2:
                    let all = records.flatMap { $0 }
                    let cut = Int(random.next() % UInt64(all.count))
                    input += WARCFixtures.gzipMember(Array(all[..<cut])) + WARCFixtures.gzipMember(Array(all[cut...]))
                default: input += records.flatMap { WARCFixtures.gzipMember($0) }
                }
            }
            let reference = Self.whole(input)
            for target in [50, 700, 3000] {
                let run = Self.spanned(input, target: target, maximum: 4 * target, chunk: 1 + Int(random.next() % 3000))
                #expect(run.items == reference.items, "round \(round), target \(target)")
                #expect(run.skipped == reference.skipped)
            }
        }
    }
}
