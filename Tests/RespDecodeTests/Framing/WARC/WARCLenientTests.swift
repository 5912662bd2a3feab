import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// The separators after a block that writers get wrong, repaired with a warning (docs/framings.md#warc), and the
/// `length` of each record (docs/output.md#record-extents).
@Suite("WARC framer: lenient record ends")
struct WARCLenientTests {
    /// One way of writing records wrong, as warcio and fastwarc still read them.
    struct Variant: CustomTestStringConvertible, Sendable {
        var name: String
        /// The line end in the header section.
        var eol = "\r\n"
        /// What follows the block.
        var separator: String
        /// How far the Content-Length is off.
        var lengthDelta = 0
        /// The warnings of a record followed by another one, and of the last one.
        var warnings: [String]
        var lastWarnings: [String]
        var testDescription: String { name }
    }

    static func repaired(_ what: String, then: String, hint: Bool = false) -> String {
        "record end repaired: the block is followed by \(what) then \(then), not CRLF CRLF"
            + (hint ? " (its Content-Length may count line ends that end the block)" : "")
    }

    static let crcrlf = "WARC header lines end CR CR LF: read as CRLF"

    static let variants: [Variant] = [
        Variant(
            name: "one CRLF", separator: "\r\n", warnings: [repaired("CRLF", then: "the next record")],
            lastWarnings: [repaired("CRLF", then: "the end of the input")]),
        Variant(
            name: "LF LF", separator: "\n\n",
            warnings: ["record end repaired: the block is followed by LF LF, not CRLF CRLF"],
            lastWarnings: ["record end repaired: the block is followed by LF LF, not CRLF CRLF"]),
        Variant(
            name: "one LF", separator: "\n", warnings: [repaired("LF", then: "the next record")],
            lastWarnings: [repaired("LF", then: "the end of the input")]),
        Variant(
            name: "nothing", separator: "", warnings: [repaired("nothing", then: "the next record")],
            lastWarnings: [repaired("nothing", then: "the end of the input")]),
        Variant(
            name: "CR CR LF line ends", eol: "\r\r\n", separator: "\r\r\n\r\r\n",
            warnings: [repaired("CR CRLF CR CRLF", then: "the next record"), crcrlf],
            lastWarnings: [repaired("CR CRLF CR CRLF", then: "the end of the input"), crcrlf]),
        Variant(
            name: "Content-Length counts CRLF CRLF", separator: "\r\n\r\n", lengthDelta: 4,
            warnings: [repaired("nothing", then: "the next record", hint: true)],
            lastWarnings: [repaired("nothing", then: "the end of the input", hint: true)]),
        Variant(
            name: "Content-Length counts one CRLF", separator: "\r\n\r\n", lengthDelta: 2,
            warnings: [repaired("CRLF", then: "the next record", hint: true)],
            lastWarnings: [repaired("CRLF", then: "the end of the input", hint: true)]),
    ]

    /// A record written the variant's way, and its extent as warcio counts it (version line to the end of the block
    /// as its Content-Length says).
    static func record(_ variant: Variant, _ n: Int) -> (bytes: [UInt8], extent: Int) {
        let body = "{\"n\":\(n)}"
        let block = Array(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
                .utf8)
        let lines = [
            "WARC/1.1", "WARC-Type: response", "WARC-Record-ID: <urn:uuid:\(n)>", "WARC-Date: 2024-01-02T03:04:05Z",
            "WARC-Target-URI: http://example.com/\(n)", "Content-Type: application/http; msgtype=response",
            "Content-Length: \(block.count + variant.lengthDelta)",
        ]
        let head = Array((lines.joined(separator: variant.eol) + variant.eol + variant.eol).utf8)
        return (head + block + Array(variant.separator.utf8), head.count + block.count + variant.lengthDelta)
    }

    /// Frames `input` whole, byte by byte, split in two at every point and in random splits: all must agree.
    static func everySplit(_ input: [UInt8], sourceLocation: SourceLocation = #_sourceLocation) -> [FramedItem] {
        let verdict = FramerSplits.verify(
            input, randomSplits: 20, maxPiece: 61, splits: (1..<input.count).map { [$0] },
            make: { WARCFramer() }, describe: { describeWARCFully($0.checkingPayloadDigest()) },
            state: { "skipped: \($0.skippedRecords.sorted { $0.key < $1.key })" })
        #expect(verdict.mismatches == [], sourceLocation: sourceLocation)
        return verdict.items
    }

    @Test(arguments: variants)
    func plain(_ variant: Variant) throws {
        let records = (0..<3).map { Self.record(variant, $0) }
        let items = Self.everySplit(records.flatMap(\.bytes))
        #expect(items.count == 3, "\(items.map(describeWARC))")
        var offset = 0
        for (k, item) in items.enumerated() {
            let record = try #require(item.record, "\(describeWARC(item))")
            #expect(record.url == "http://example.com/\(k)" && record.status == 200)
            #expect(String(decoding: record.body, as: UTF8.self).hasPrefix("{\"n\":\(k)}"))
            // (Then, where the Content-Length counts the separator, the HTTP Content-Length that differs.)
            let expected = k == 2 ? variant.lastWarnings : variant.warnings
            #expect(Array(record.warnings.prefix(expected.count)) == expected)
            #expect(record.warnings.count == expected.count + (variant.lengthDelta == 0 ? 0 : 1))
            #expect(record.offset == Int64(offset) && record.length == Int64(records[k].extent))
            offset += records[k].bytes.count
        }
    }

    @Test(arguments: variants)
    func gzipPerRecord(_ variant: Variant) throws {
        let records = (0..<3).map { Self.record(variant, $0).bytes }
        let members = records.map { WARCFixtures.gzipMember($0) }
        let items = Self.everySplit(members.flatMap { $0 })
        #expect(items.count == 3, "\(items.map(describeWARC))")
        var offset = 0
        for (k, item) in items.enumerated() {
            let record = try #require(item.record, "\(describeWARC(item))")
            #expect(record.url == "http://example.com/\(k)")
            // (Then, where the Content-Length counts the separator, the HTTP Content-Length that differs.)
            let expected = k == 2 ? variant.lastWarnings : variant.warnings
            #expect(Array(record.warnings.prefix(expected.count)) == expected)
            #expect(record.warnings.count == expected.count + (variant.lengthDelta == 0 ? 0 : 1))
            #expect(record.offset == Int64(offset) && record.length == Int64(members[k].count))
            offset += members[k].count
        }
    }

    /// A Content-Length that counts a separator that was not written: in a .warc.gz the record's member ends 4 bytes
    /// before it, and the block ends there (warcio reads these); in a plain WARC nothing tells where the block ends,
    /// so each record fails (warcio and FastWARC fail too).
    @Test func lengthPastTheMemberEnd() throws {
        let variant = Variant(name: "", separator: "", lengthDelta: 4, warnings: [], lastWarnings: [])
        let records = (0..<3).map { Self.record(variant, $0).bytes }
        let members = records.map { WARCFixtures.gzipMember($0) }
        let items = Self.everySplit(members.flatMap { $0 })
        let tooLong =
            "Content-Length (81) runs 4 bytes past the end of the record's gzip member: the block ends with the member"
        #expect(items.count == 3)
        for (k, item) in items.enumerated() {
            let record = try #require(item.record, "\(describeWARC(item))")
            #expect(String(decoding: record.body, as: UTF8.self) == "{\"n\":\(k)}")
            #expect(
                record.warnings == [
                    tooLong, Self.repaired("nothing", then: k == 2 ? "the end of the input" : "the next record"),
                ])
            #expect(record.length == Int64(members[k].count))
        }
        #expect(Self.everySplit(records.flatMap { $0 }).allSatisfy { $0.failure != nil })
        // More than a separator's length: a wrong length, as before.
        let five = Variant(name: "", separator: "", lengthDelta: 5, warnings: [], lastWarnings: [])
        let wrong = (0..<2).map { WARCFixtures.gzipMember(Self.record(five, $0).bytes) }
        #expect(Self.everySplit(wrong.flatMap { $0 }).allSatisfy { $0.failure != nil })
    }

    /// A Content-Length that is really wrong (a block followed by more than line ends) still fails and resumes at
    /// the next record, as warcio's example-trunc.warc needs; so does a CRLF file whose every line end became CR CR LF,
    /// blocks included (the Content-Lengths no longer fit: each record is one failure, none is lost silently).
    @Test func wrongLengthsStillFail() {
        let good = Self.record(Self.variants[0], 9).bytes
        let short = WARCFixtures.record("resource", block: "plain text", contentLength: "8", trailer: "\r\n")
        let items = Self.everySplit(short + good)
        #expect(items.map(describeWARC).first == "@0 malformedRecord resource")
        #expect(items.count == 2 && items[1].record != nil)

        var converted: [UInt8] = []
        for byte in (0..<3).flatMap({ WARCFixtures.response(WARCFixtures.json, id: "<urn:uuid:\($0)>") }) {
            if byte == 0x0A { converted.append(0x0D) }
            converted.append(byte)
        }
        let failures = Self.everySplit(converted)
        #expect(failures.count == 3 && failures.allSatisfy { $0.failure?.error.code == .malformedRecord })
    }

    /// Length of records and failures, plain and gzip; a record that does not start its member has none.
    @Test func lengths() throws {
        let plain = WARCFixtures.small.flatMap { $0 }
        #expect(warcItems(plain, types: nil).map(\.length) == WARCFixtures.small.map { Int64($0.count - 4) })
        // Extra line ends after a record, inside its member: still the member's length.
        let padded = WARCFixtures.small.map { WARCFixtures.gzipMember($0 + Array("\r\n\r\n".utf8)) }
        #expect(Self.everySplit(padded.flatMap { $0 }).map(\.length) == [padded[1], padded[3]].map { Int64($0.count) })
        // Gzip as a whole: no record has its own member.
        let whole = warcItems(WARCFixtures.gzipMember(plain), types: nil)
        #expect(whole.count == 5 && whole.allSatisfy { $0.length == nil })
        // A plain failure: the bytes it stands for.
        let garbage = Array("garbage\n".utf8)
        let items = warcItems(garbage + WARCFixtures.small[3])
        #expect(items.map(\.length) == [8, Int64(WARCFixtures.small[3].count - 4)])
        // A failure in its own member: the member.
        let bad = WARCFixtures.gzipMember(WARCFixtures.record("resource", block: "x", contentLength: "-1"))
        let good = WARCFixtures.gzipMember(WARCFixtures.small[3])
        #expect(Self.everySplit(bad + good).map(\.length) == [Int64(bad.count), Int64(good.count)])
        // A record split across members: from its first member's start to its last member's end.
        let split = WARCFixtures.small[3]
        let members =
            WARCFixtures.gzipMember(Array(split.prefix(50))) + WARCFixtures.gzipMember(Array(split.dropFirst(50)))
        #expect(Self.everySplit(members + good).map(\.length) == [Int64(members.count), Int64(good.count)])
    }
}
