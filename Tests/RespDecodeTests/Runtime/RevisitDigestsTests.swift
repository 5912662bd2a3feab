import Testing

@testable import RespDecode

/// `--resolve-revisits`' table (docs/output.md#revisits): first response wins, oldest digest evicted first.
@Suite("Revisit digests")
struct RevisitDigestsTests {
    static func record(_ type: String, _ digest: String?) -> ResponseRecord {
        var record = ResponseRecord(offset: 0, status: 200)
        record.warc = WARCRecordInfo(type: type)
        record.warc?.payloadDigest = digest
        return record
    }

    static func resolve(_ table: inout RevisitDigests, _ type: String, _ digest: String?, seq: Int) -> RecordOrigin? {
        var record = record(type, digest)
        table.resolve(&record, origin: RecordOrigin(seq: seq, input: "a", offset: Int64(seq * 100)))
        return record.warc?.revisitOf
    }

    @Test func aRevisitFindsTheFirstResponseWithItsDigest() {
        var table = RevisitDigests(capacity: 10)
        #expect(Self.resolve(&table, "revisit", "sha1:A", seq: 0) == nil)
        #expect(Self.resolve(&table, "response", "sha1:A", seq: 1) == nil)
        #expect(Self.resolve(&table, "resource", "sha1:A", seq: 2) == nil)
        #expect(Self.resolve(&table, "revisit", "sha1:A", seq: 3) == RecordOrigin(seq: 1, input: "a", offset: 100))
        #expect(Self.resolve(&table, "revisit", "sha1:B", seq: 4) == nil)
        #expect(Self.resolve(&table, "metadata", "sha1:C", seq: 5) == nil)
        #expect(Self.resolve(&table, "revisit", "sha1:C", seq: 6) == nil)
        #expect(table.count == 1)
    }

    @Test func theOldestDigestGoesFirst() {
        var table = RevisitDigests(capacity: 2)
        _ = Self.resolve(&table, "response", "sha1:A", seq: 0)
        _ = Self.resolve(&table, "response", "sha1:B", seq: 1)
        _ = Self.resolve(&table, "response", "sha1:C", seq: 2)
        #expect(table.count == 2)
        #expect(Self.resolve(&table, "revisit", "sha1:A", seq: 3) == nil)
        #expect(Self.resolve(&table, "revisit", "sha1:B", seq: 4)?.seq == 1)
        #expect(Self.resolve(&table, "revisit", "sha1:C", seq: 5)?.seq == 2)
    }

    /// A revisit that came with its `revisitOf` (an ndjson line from `frame --resolve-revisits`) keeps it.
    @Test func aCarriedResolutionIsKept() {
        var table = RevisitDigests(capacity: 2)
        _ = Self.resolve(&table, "response", "sha1:A", seq: 0)
        var revisit = Self.record("revisit", "sha1:A")
        let carried = RecordOrigin(seq: 9, input: "x", offset: 9)
        revisit.warc?.revisitOf = carried
        table.resolve(&revisit, origin: RecordOrigin(seq: 1, input: "a", offset: 1))
        #expect(revisit.warc?.revisitOf == carried)
    }
}
