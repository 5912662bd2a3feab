import CLZ4
import Foundation
import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// `.warc.zst` and `.warc.lz4` through the WARC framer: the records of the plain WARC, at their frames' offsets, in
/// any split.
@Suite("WARC framer, zstd and LZ4 frames")
struct WARCCompressedFramesTests {
    static let records =
        WARCFixtures.small + [WARCFixtures.response(WARCFixtures.json, uri: "http://example.com/c", id: "<urn:uuid:5>")]

    /// The items of the plain WARC, offsets and lengths aside.
    static func plainItems() -> [String] {
        warcItems(records.flatMap { $0 }, types: nil).map { Self.strip(describeWARCFully($0)) }
    }

    /// An item's description without its offset and length, which depend on how the records are stored.
    static func strip(_ text: String) -> String {
        String(text.drop { $0 != " " }).replacing(#/ length=[0-9-]+/#, with: "")
    }

    static func compressor(_ name: String) -> ([UInt8]) -> [UInt8] {
        switch name {
        case "zstd": { FrameFixtures.zstdFrame($0) }
        case "zstd streamed, no checksum": { FrameFixtures.zstdFrame($0, checksum: false, contentSize: false) }
        case "lz4": { FrameFixtures.lz4Frame($0) }
        case "lz4 no size, no checksum": { FrameFixtures.lz4Frame($0, contentSize: false, checksum: false) }
        default: { FrameFixtures.lz4Frame($0, blockChecksum: true, linked: false) }
        }
    }

    @Test(arguments: ["zstd", "zstd streamed, no checksum", "lz4", "lz4 no size, no checksum", "lz4 block checksums"])
    func oneFramePerRecordGivesThePlainRecordsAtFrameOffsets(_ name: String) {
        let compress = Self.compressor(name)
        let (bytes, offsets) = FrameFixtures.perRecord(Self.records, compress)
        let items = warcEverySplit(bytes, types: nil, randomRuns: 10)
        #expect(items.map { $0.offset } == offsets, "\(name)")
        // Each record's length is its frame's.
        #expect(items.map(\.length) == zip(offsets, offsets.dropFirst() + [Int64(bytes.count)]).map { $1 - $0 })
        #expect(items.map { Self.strip(describeWARCFully($0)) } == Self.plainItems(), "\(name)")
    }

    @Test(arguments: ["zstd", "lz4"])
    func aBadFrameCostsItsRecordOnly(_ kind: String) throws {
        let compress: ([UInt8]) -> [UInt8] =
            kind == "zstd" ? { FrameFixtures.zstdFrame($0) } : { FrameFixtures.lz4Frame($0, blockChecksum: true) }
        var frames = Self.records.map(compress)
        frames[1][frames[1].count / 2] ^= 0x40
        let cut = Array(frames[3].dropLast(5))
        let input = Array(frames[0...2].joined()) + FrameFixtures.skippable(3, [0, 0]) + frames[4] + frames[5] + cut
        let items = warcEverySplit(input, types: nil, randomRuns: 10)
        #expect(items.count == 6, "\(items.map(describeWARC))")
        let noun = kind == "zstd" ? "zstd frame" : "LZ4 frame"
        let offset1 = Int64(frames[0].count)
        #expect(items[1].failure?.error.code == .malformedRecord)
        #expect(items[1].offset == offset1)
        #expect(items[1].failure?.error.message.hasPrefix("the \(noun) at \(offset1) is corrupt: ") == true)
        #expect(items[5].failure?.error.code == .truncatedRecord, "\(items.map(describeWARC))")
        #expect([0, 2, 3, 4].allSatisfy { items[$0].record != nil }, "\(items.map(describeWARC))")
    }

    @Test func oneFrameForAllRecordsIsReadAsAStream() {
        let bytes = FrameFixtures.zstdFrame(Self.records.flatMap { $0 })
        let items = warcEverySplit(bytes, types: nil, randomRuns: 5)
        #expect(items.count == Self.records.count)
        #expect(items[0].offset == 0 && items[0].record?.warnings == [])
        #expect(items[1].record?.warnings.first?.contains("the zstd frame at 0 holds more than one record") == true)
    }

    @Test func recordsOverTheLimitsInLargeFrames() {
        // A 600 KB body: over the whole-frame capacity and, with 64 KiB LZ4 blocks, many blocks.
        let body = String(repeating: "{\"k\":[1,2,3]}", count: 50_000)
        let big = WARCFixtures.response(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body)
        for compress in [{ FrameFixtures.zstdFrame($0) }, { FrameFixtures.lz4Frame($0) }] {
            let input = compress(big) + compress(Self.records[1])
            var limits = Limits()
            limits.maxBodyBytes = 100_000
            let items = warcEverySplit(input, limits: limits, randomRuns: 3)
            #expect(items.map(\.failure?.error.code) == [.limitExceeded, nil], "\(items.map(describeWARC))")
            #expect(items[1].offset == Int64(compress(big).count))
        }
    }
}

/// The generated `.warc.zst` files of the corpora (warc/zstd: PROVENANCE.md): the records of their source WARCs at
/// the offsets of their frames (frames/*.frames.jsonl), and an error for each damaged file.
@Suite("WARC zstd corpus", .enabled(if: Corpora.available, Corpora.skipComment))
struct WARCZstdCorpusTests {
    static let folder = "warc/zstd"

    struct Expected: Decodable {
        var file: String
        var expected: String
        var decompressedEquals: String?
        var records: Int?

        enum CodingKeys: String, CodingKey {
            case file, expected, records
            case decompressedEquals = "decompressed_equals"
        }
    }

    struct Frame: Decodable {
        var offset: Int64
        var kind: String
    }

    static func expected() throws -> [Expected] {
        let text = String(decoding: try Corpora.bytes("\(folder)/expected.jsonl"), as: UTF8.self)
        return try text.split(separator: "\n").map { try JSONDecoder().decode(Expected.self, from: Data($0.utf8)) }
    }

    /// The offset of each record's first frame, from the frames file.
    static func recordOffsets(_ file: String) throws -> [Int64] {
        try recordExtents(file).map(\.offset)
    }

    /// Each record's frames, from the frames file: the first one's offset, and the bytes up to the last one's end.
    static func recordExtents(_ file: String) throws -> [(offset: Int64, length: Int64)] {
        let text = String(decoding: try Corpora.bytes("\(folder)/frames/\(file).frames.jsonl"), as: UTF8.self)
        var extents: [(offset: Int64, length: Int64)] = []
        var seen: [String] = []
        for line in text.split(separator: "\n") {
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
            guard let object, let record = object["record"], let offset = object["offset"] as? Int,
                let length = object["length"] as? Int
            else { continue }
            if seen.last == "\(record)" {
                extents[extents.count - 1].length = Int64(offset + length) - extents[extents.count - 1].offset
            } else {
                seen.append("\(record)")
                extents.append((Int64(offset), Int64(length)))
            }
        }
        return extents
    }

    @Test func validFilesGiveTheSourceRecordsAtTheirFrameOffsets() throws {
        let valid = try Self.expected().filter { $0.expected == "ok" }
        #expect(valid.count == 4)
        for entry in valid {
            let source = try #require(entry.decompressedEquals).replacingOccurrences(of: "../", with: "warc/")
            let plain = warcItems(try Corpora.bytes(source), types: nil)
            let items = warcEverySplit(try Corpora.bytes("\(Self.folder)/\(entry.file)"), types: nil, randomRuns: 3)
            #expect(items.count == entry.records, "\(entry.file)")
            #expect(
                items.map { WARCCompressedFramesTests.strip(describeWARCFully($0)) }
                    == plain.map { WARCCompressedFramesTests.strip(describeWARCFully($0)) }, "\(entry.file)")
            #expect(items.map(\.offset) == (try Self.recordOffsets(entry.file)), "\(entry.file)")
            // `length`: from the record's first frame to the end of its last (docs/output.md#record-extents).
            #expect(items.map(\.length) == (try Self.recordExtents(entry.file)).map(\.length), "\(entry.file)")
            #expect(items.allSatisfy { $0.record != nil }, "\(entry.file)")
        }
        let first = warcItems(try Corpora.bytes("\(Self.folder)/blackbook-dict.warc.zst"), types: nil).first
        #expect(first?.offset == 8200)
    }

    @Test func damagedFilesGiveErrors() throws {
        let bad = try Self.expected().filter { $0.expected == "error" }
        #expect(bad.count == 4)
        let messages = [
            "bad-checksum.warc.zst": "Restored data doesn't match checksum",
            "bad-missing-dictionary.warc.zst": "Dictionary mismatch",
            "bad-wrong-dictionary.warc.zst": "Dictionary mismatch",
            "bad-truncated.warc.zst": "input ended inside the zstd frame at 3149",
        ]
        for entry in bad {
            let items = warcEverySplit(try Corpora.bytes("\(Self.folder)/\(entry.file)"), types: nil, randomRuns: 3)
            let failures = items.compactMap(\.failure)
            let message = try #require(messages[entry.file])
            #expect(!failures.isEmpty && failures.allSatisfy { $0.error.message.contains(message) }, "\(entry.file)")
            // Each record is one line: the ones in good frames, and one failure per bad frame.
            let offsets = try Self.recordOffsets(entry.file)
            #expect(items.map(\.offset) == offsets, "\(entry.file)")
        }
    }

    /// The implementation-defined files (docs/framings.md#warc): one frame for all records is read as a stream, the
    /// records after the first at their offsets in the decompressed stream, with a warning; a file that starts with
    /// an extension frame is read as `zstd -d` reads it (the frame is skipped).
    @Test func implementationDefinedFiles() throws {
        let plain = warcItems(try Corpora.bytes("warc/warcio/data/example.warc"), types: nil)
        let stream = warcEverySplit(
            try Corpora.bytes("\(Self.folder)/nonconforming-one-frame-for-all-records.warc.zst"), types: nil,
            randomRuns: 3)
        #expect(stream.map(\.offset) == plain.map(\.offset))
        #expect(
            stream.dropFirst().allSatisfy { $0.record?.warnings.first?.contains("holds more than one record") == true })
        let extensionFirst = warcEverySplit(
            try Corpora.bytes("\(Self.folder)/bad-starts-with-extension-frame.warc.zst"), types: nil, randomRuns: 3)
        #expect(extensionFirst.map(\.offset) == (try Self.recordOffsets("bad-starts-with-extension-frame.warc.zst")))
        #expect(extensionFirst.allSatisfy { $0.record != nil })
    }
}
