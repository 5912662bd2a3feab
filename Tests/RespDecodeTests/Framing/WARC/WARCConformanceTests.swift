import Foundation
import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// The WARC framer against warcio 1.8.1's index of its own test files and against jwarc's test WARCs, in
/// `../shared/corpora/warc`.
@Suite("WARC framing conformance", .enabled(if: Corpora.available, Corpora.skipComment))
struct WARCConformanceTests {
    static let data = "warc/warcio/data"
    static let index = "warc/warcio/expected-index-warcio-1.8.1"

    /// What an index line and one of our items have in common.
    struct Entry: Equatable, CustomStringConvertible {
        var offset: Int64
        var type: String?
        var uri: String?
        var id: String?
        var description: String { "@\(offset) \(type ?? "-") \(uri ?? "-") \(id ?? "-")" }
    }

    /// warcio's index lines for a data file.
    static func warcioEntries(_ file: String) throws -> [Entry] {
        let text = String(decoding: try Corpora.bytes("\(index)/\(file).jsonl"), as: UTF8.self)
        return try text.split(separator: "\n").map { line in
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String], "\(file): \(line)")
            return Entry(
                offset: Int64(object["offset"] ?? "") ?? -1, type: object["warc-type"], uri: object["warc-target-uri"],
                id: object["warc-record-id"])
        }
    }

    /// Our items as index entries: records, and failures with what their WARC header said.
    static func entries(_ items: [FramedItem]) -> [Entry] {
        items.map { item in
            switch item {
            case .record(let r): Entry(offset: r.offset, type: r.warc?.type, uri: r.url, id: r.warc?.recordId)
            case .failure(let f): Entry(offset: f.offset, type: f.warc?.type, uri: f.url, id: f.warc?.recordId)
            }
        }
    }

    static func frame(_ path: String, types: Set<String>? = nil) throws -> [FramedItem] {
        warcItems(try Corpora.bytes(path), types: types)
    }

    static func isARC(_ file: String) -> Bool { file.hasSuffix(".arc") || file.hasSuffix(".arc.gz") }

    /// The data files warcio indexes without an error, ARC files aside (ARCConformanceTests reads those).
    static func indexedFiles() throws -> [String] {
        try Corpora.files(in: data).map(\.lastPathComponent).filter { file in
            !isARC(file) && Corpora.available
                && FileManager.default.fileExists(atPath: Corpora.url("\(index)/\(file).jsonl").path)
                && !FileManager.default.fileExists(atPath: Corpora.url("\(index)/\(file).error.txt").path)
        }
    }

    @Test func everyFileWarcioIndexesGivesTheSameRecords() throws {
        let files = try Self.indexedFiles()
        #expect(files.count == 9, "\(files)")
        for file in files {
            let items = try Self.frame("\(Self.data)/\(file)")
            #expect(Self.entries(items) == (try Self.warcioEntries(file)), "\(file)")
            for item in items where file != "example-trunc.warc" {
                #expect(item.record != nil, "\(file): \(describeWARCFully(item))")
            }
            // Every digest that is checked passes in these files (example-digest.warc aside).
            if file != "example-digest.warc" {
                #expect(items.allSatisfy { $0.record?.warc?.digest != .mismatch }, "\(file)")
            }
            // Records split any way give the same.
            warcEverySplit(try Corpora.bytes("\(Self.data)/\(file)"), randomRuns: 5)
        }
    }

    // MARK: - Record extents

    /// Offset and length of every index line of `path` (warcio index's JSON lines).
    static func extents(jsonLines text: String, _ name: String) throws -> [(offset: Int64, length: Int64)] {
        try text.split(separator: "\n").filter { $0.hasPrefix("{") }.map { line in
            let object = try #require(
                try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String], "\(name): \(line)")
            return (Int64(object["offset"] ?? "") ?? -1, Int64(object["length"] ?? "") ?? -1)
        }
    }

    /// Every record we read has the offset and length that warcio's index gives it (docs/output.md#record-extents);
    /// the items are the index lines, in order (a failure where warcio read a damaged record: its offset only).
    static func checkExtents(_ path: String, against expected: [(offset: Int64, length: Int64)]) throws {
        let items = try frame(path)
        #expect(items.map(\.offset) == expected.map(\.offset), "\(path)")
        for (item, line) in zip(items, expected) {
            switch item {
            case .record(let r): #expect(r.length == line.length, "\(path) @\(r.offset)")
            case .failure(let f): #expect(f.length == nil || path.hasSuffix(".warc"), "\(path) @\(f.offset)")
            }
        }
    }

    /// The WARC files of the warcio and webarchive-discovery corpora against their committed warcio 1.8.1 indexes
    /// (files warcio cannot index aside): the `offset` and `length` cdxj-indexer and pywb use.
    @Test func offsetsAndLengthsAreWarcios() throws {
        var checked = 0
        for file in try Self.indexedFiles() {
            let text = String(decoding: try Corpora.bytes("\(Self.index)/\(file).jsonl"), as: UTF8.self)
            try Self.checkExtents("\(Self.data)/\(file)", against: try Self.extents(jsonLines: text, file))
            checked += 1
        }
        let discovery = "warc/webarchive-discovery"
        let files = Corpora.allFiles(under: discovery).filter { $0.hasSuffix(".warc") || $0.hasSuffix(".warc.gz") }
        for relative in files {
            let path = "\(discovery)/\(relative)"
            let name = (relative as NSString).lastPathComponent
            let index = "\(discovery)/expected-index-warcio-1.8.1/\(name).jsonl"
            guard FileManager.default.fileExists(atPath: Corpora.url(index).path) else { continue }
            let text = String(decoding: try Corpora.bytes(index), as: UTF8.self)
            try Self.checkExtents(path, against: try Self.extents(jsonLines: text, name))
            checked += 1
        }
        #expect(checked == 9 + 8)
    }

    /// The `warcio` command, if installed (jwarc's files have no committed index).
    static let warcioCommand: String? = {
        let paths = (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":")
        return paths.map { "\($0)/warcio" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// jwarc's WARCs against `warcio index`, run now: skipped where warcio is not installed (CI).
    @Test(.enabled(if: warcioCommand != nil, "warcio is not installed: jwarc's record extents are not checked"))
    func jwarcOffsetsAndLengthsAreWarcios() throws {
        for name in ["cc.warc.gz", "gzip_extra_sl.warc.gz", "fold.warc", "utf8field.warc"] {
            let path = "warc/jwarc/\(name)"
            let process = Process()
            process.executableURL = URL(fileURLWithPath: try #require(Self.warcioCommand))
            process.arguments = ["index", "-f", "offset,length", Corpora.url(path).path]
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            try process.run()
            let output = pipe.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let expected = try Self.extents(jsonLines: String(decoding: output, as: UTF8.self), name)
            try Self.checkExtents(path, against: expected)
            // fold.warc and utf8field.warc end inside their header: our failure stands for the whole file, as
            // warcio's record does.
            let items = try Self.frame(path)
            #expect(items.map(\.length) == expected.map(\.length), "\(name)")
        }
    }

    /// warcio warns "Record not followed by newline" at 2560 and goes on; the response is our failure item.
    @Test func exampleTruncIsOneFailure() throws {
        let items = try Self.frame("\(Self.data)/example-trunc.warc")
        #expect(items.map(\.offset) == [0, 488, 1197, 2566])
        let failure = try #require(items[2].failure)
        #expect(failure.error.code == .malformedRecord)
        #expect(
            failure.error.message
                == "the block is not followed by CRLF CRLF: its Content-Length (973) is probably wrong")
        #expect(failure.error.location?.offset == 2560)
        #expect(failure.warc?.type == "response" && failure.url == "http://example.com/")
        #expect(failure.warc?.recordId == "<urn:uuid:a9c51e3e-0221-11e7-bf66-0242ac120005>")
        #expect(failure.bytes == 2566 - 1197)
    }

    @Test func exampleDigests() throws {
        let example = try Self.frame("\(Self.data)/example.warc")
        // The response's payload digest passes; the revisit's is the digest of a payload stored elsewhere.
        #expect(example.map { $0.record?.warc?.digest } == [nil, nil, .ok, nil, nil, nil])
        let gz = try Self.frame("\(Self.data)/example.warc.gz")
        // In the gzip version the requests carry the digest of their empty body too.
        #expect(gz.map { $0.record?.warc?.digest } == [nil, nil, .ok, .ok, nil, .ok])
        // Four request records: Base32 (deliberately wrong, not even Base32), base64, base64, base64url.
        let digests = try Self.frame("\(Self.data)/example-digest.warc")
        #expect(digests.map { $0.record?.warc?.digest } == [.mismatch, .ok, .ok, .ok])
        // A chunked response with a hex digest.
        let chunked = try Self.frame("\(Self.data)/example-iana.org-chunked.warc")
        let response = try #require(chunked[1].record)
        #expect(response.warc?.digest == .ok)
        #expect(response.body.starts(with: Array("<!doctype html>".utf8)))
        #expect(String(decoding: response.body, as: UTF8.self).contains("Internet Assigned Numbers Authority"))
        #expect(response.warnings.isEmpty)
    }

    /// warcio refuses a gzip file that is one member ("non-chunked gzip file detected"): it is read all the same.
    @Test func wholeFileGzipIsRead() throws {
        let whole = try Self.frame("\(Self.data)/example-bad-non-chunked.warc.gz")
        let plain = try Self.frame("\(Self.data)/example.warc")
        #expect(whole.count == 6)
        #expect(whole.map { $0.record?.warc } == plain.map { $0.record?.warc })
        #expect(whole.map { $0.record?.url } == plain.map { $0.record?.url })
        #expect(whole.map(\.offset) == plain.map(\.offset))
        for item in whole.dropFirst() {
            #expect(
                item.record?.warnings.first
                    == "offset is in the decompressed stream: the gzip member at 0 holds more than one record")
        }
        // The other whole-file gzip: six records, the two responses' digests pass.
        let bad = try Self.frame("\(Self.data)/example-bad.warc.gz.bad")
        #expect(
            bad.map { $0.record?.warc?.type } == ["warcinfo", "response", "request", "revisit", "request", "response"])
        #expect(bad.compactMap { $0.record?.warc?.digest } == [.ok, .ok])
        #expect(bad.first?.record?.warc?.recordId == "<urn:uuid:fbd6cf0a-6160-4550-b343-12188dc05234>")
    }

    /// warcio stops at the second member ("Unknown archive format, first line: ['<!doctype', 'html>']"): the members
    /// are cut in the wrong places, but together they inflate to a valid WARC, which is read; the payload digest
    /// of the response proves its body whole.
    @Test func membersCutInTheWrongPlaces() throws {
        let items = try Self.frame("\(Self.data)/example-wrong-chunks.warc.gz")
        #expect(items.count == 2)
        let response = try #require(items[0].record)
        #expect(response.offset == 0 && response.warc?.type == "response" && response.warc?.digest == .ok)
        #expect(response.warc?.recordId == "<urn:uuid:80d63307-60af-43e0-903f-574b2f432b7e>")
        let request = try #require(items[1].record)
        #expect(request.warc?.type == "request" && request.offset == 2009)
        #expect(
            request.warnings == [
                "offset is in the decompressed stream: the gzip member at 1130 holds more than one record"
            ])
    }

    /// Damaged versions of warcio's files: flipped bytes anywhere, any truncation, never a crash or a silent loss.
    @Test func damagedExamplesNeverEndSilently() throws {
        for file in ["example.warc", "example.warc.gz"] {
            let input = try Corpora.bytes("\(Self.data)/\(file)")
            var generator = SplitMix64(seed: 7)
            for _ in 0..<300 {
                var damaged = input
                let at = Int(generator.next() % UInt64(input.count))
                damaged[at] ^= UInt8(truncatingIfNeeded: generator.next() | 1)
                let items = warcItems(damaged, types: nil)
                // Six records in, at least one item out per record that survived, at most one item per record plus
                // one per damaged stretch.
                #expect(!items.isEmpty && items.count <= 8, "\(file) byte \(at): \(items.map(describeWARC))")
            }
        }
    }

    // MARK: - jwarc

    @Test func commonCrawlResponse() throws {
        let items = try Self.frame("warc/jwarc/cc.warc.gz", types: WARCFramer.defaultTypes)
        #expect(items.count == 1)
        let record = try #require(items.first?.record)
        #expect(record.url == "http://commoncrawl.org/" && record.status == 200 && record.offset == 0)
        #expect(record.warc?.digest == .ok)
        // Common Crawl keeps the original framing fields under other names; the body is as stored.
        #expect(record.headers.last("X-Crawler-Transfer-Encoding") == "chunked")
        #expect(record.warnings.isEmpty)
    }

    /// jwarc's test cuts cc.warc.gz by 1 to N bytes and expects an error every time.
    @Test func everyTruncationOfTheCommonCrawlRecordIsAnError() throws {
        let input = try Corpora.bytes("warc/jwarc/cc.warc.gz")
        for cut in 1..<input.count {
            let items = warcItems(Array(input[..<cut]))
            #expect(items.count == 1 && items[0].failure != nil, "cut at \(cut): \(items.map(describeWARC))")
        }
    }

    @Test func gzipExtraField() throws {
        let items = try Self.frame("warc/jwarc/gzip_extra_sl.warc.gz")
        let record = try #require(items.first?.record)
        #expect(items.count == 1 && record.warc?.type == "warcinfo")
        #expect(record.warc?.recordId == "<urn:uuid:b23fcfc5-71ca-4e9c-84e1-b7938cedf4c4>")
        #expect(record.body.starts(with: Array("software: Wget/1.20.3".utf8)))
    }

    /// fold.warc's header (LF line ends, folded and UTF-8 values) parses, but its header section has no end: the file
    /// stops after `Content-Length: 0`, so it is a truncated record. With the end added it is a record.
    @Test func foldedFields() throws {
        let input = try Corpora.bytes("warc/jwarc/fold.warc")
        #expect(warcItems(input).map(describeWARC) == ["@0 truncatedRecord -"])
        let completed = input + Array("\n\r\n\r\n".utf8)
        let header = try completed.withUnsafeBufferPointer { try WARCHeader.parse($0).get() }
        #expect(header.fields.last("Whitespace") == "one  two")
        #expect(header.fields.last("Fold") == "a b")
        #expect(header.fields.last("Fold-Trim") == "a b c")
        #expect(header.fields.last("Quoted-Fold") == "\"a b\"")
        #expect(header.fields.last("Snowman") == "\u{2603}")
        let record = try #require(warcItems(completed).first?.record)
        #expect(record.warc?.type == "metadata" && record.body.isEmpty)
    }

    /// utf8field.warc: a UTF-8 field name and nothing after it (no line end, no Content-Length): truncated.
    @Test func utf8FieldName() throws {
        let items = try Self.frame("warc/jwarc/utf8field.warc")
        #expect(items.map(describeWARC) == ["@0 truncatedRecord -"])
        #expect(items.first?.failure?.bytes == 21)
    }
}
