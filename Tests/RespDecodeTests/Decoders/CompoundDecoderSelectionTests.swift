import Foundation
import Testing

@testable import RespDecode

/// Selection in the line writer (docs/output.md#selecting-records): a skipped record gets no line, or a one-line
/// stub when it came from ndjson input; a framing failure is never skipped; the tally counts skipped records apart.
@Suite("Compound decoder selection")
struct CompoundDecoderSelectionTests {
    static func write(
        _ item: FramedItem, fields: OutputFields = .all, _ configure: (inout RecordSelection) -> Void
    ) -> (line: String, outcome: LineOutcome) {
        var settings = CompoundDecoder.Settings()
        configure(&settings.selection)
        settings.fields = fields
        let out = OutputBuffer()
        let outcome = CompoundDecoder(settings: settings).writeLine(
            for: item, source: .init(seq: 4, offset: 10, input: "in.ndjson"), into: out)
        return (String(decoding: out.array, as: UTF8.self), outcome)
    }

    static let png = ResponseRecord(
        offset: 10, status: 200, headers: HeaderFields([("Content-Type", "image/png")]), body: [1, 2, 3],
        url: "https://a.example/p.png", id: "r9")

    @Test func aSkippedRecordHasNoLine() {
        let (line, outcome) = Self.write(.record(Self.png)) { $0.types = ["text/*"] }
        #expect(line.isEmpty)
        #expect(outcome.skippedBy == "select-type")
        let (kept, keptOutcome) = Self.write(.record(Self.png)) { $0.types = ["image/*"] }
        #expect(kept.hasPrefix(#"{"seq":4,"#))
        #expect(keptOutcome.skippedBy == nil)
    }

    @Test func aSkippedNDJSONRecordHasAStub() {
        var record = Self.png
        record.framedFromNDJSON = true
        let (line, _) = Self.write(.record(record)) { $0.statuses = StatusCodeSet(parsing: "4xx") }
        #expect(
            line == #"{"seq":4,"offset":10,"input":"in.ndjson","id":"r9","skipped":true,"skippedBy":"select-status"}"#
                + "\n")
        let (projected, _) = Self.write(.record(record), fields: [.id, .url]) { $0.maxBodyBytes = 2 }
        #expect(projected == #"{"id":"r9","skipped":true,"skippedBy":"select-max-body-bytes"}"# + "\n")
    }

    /// A failure is never filtered out, even one whose status and type every filter would refuse.
    @Test func aFramingFailureIsNeverSkipped() {
        let failure = FramingFailure(
            offset: 3, error: RecordError(.malformedRecord, "bad"), status: 500,
            headers: HeaderFields([("Content-Type", "text/html")]))
        let (line, outcome) = Self.write(.failure(failure)) {
            $0.statuses = StatusCodeSet(parsing: "200")
            $0.types = ["image/*"]
            $0.urlGlob = "https://*"
        }
        #expect(line.contains(#""error":{"code":"malformedRecord""#))
        #expect(outcome.skippedBy == nil)
    }

    /// The payload digest is checked after selection: the compound decoder tells the workers it checks it itself.
    @Test func theDigestIsCheckedByTheDecoder() {
        let writer: any LineWriter = CompoundDecoder(settings: .init())
        #expect(writer.checksPayloadDigests)
        let frame: any LineWriter = RecordLineWriter()
        #expect(!frame.checksPayloadDigests)
    }

    @Test func theTallyCountsSkippedRecordsApart() {
        var tally = Tally()
        var skipped = LineOutcome()
        skipped.skippedBy = "select-type"
        var ok = LineOutcome()
        ok.ok = true
        ok.decoder = "json"
        tally.count(skipped)
        tally.count(skipped)
        tally.count(ok)
        var other = Tally()
        var url = LineOutcome()
        url.skippedBy = "select-url"
        other.count(url)
        other.count(skipped)
        tally.merge(other)
        #expect(tally.records == 1)
        #expect(tally.ok == 1)
        #expect(tally.skipped == ["select-type": 3, "select-url": 1])
        #expect(tally.byDecoder["none"] == nil)
        let statistics = Statistics()
        statistics.add(tally)
        let snapshot = statistics.snapshot
        #expect(
            snapshot.jsonLine.contains(
                #""byDecoder":{"json":{"records":1,"errors":0}},"skipped":{"select-type":3,"select-url":1},"bytesIn":0"#
            ))
        #expect(snapshot.summary.contains("  skipped by --select-type 3, --select-url 1 (not in the records above)\n"))
        #expect(!Statistics().snapshot.jsonLine.contains("skipped"))
        var undecoded = LineOutcome()
        undecoded.decoded = false
        undecoded.bodyBytes = 7
        tally.count(undecoded)
        #expect(tally.records == 1)
        #expect(tally.undecoded == 1)
        #expect(tally.bodyBytes == 7)
        statistics.add(tally)
        #expect(statistics.snapshot.jsonLine.contains(#""undecoded":1,"bytesIn""#))
    }
}
