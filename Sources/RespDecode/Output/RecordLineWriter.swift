/// Writes each framed item as an ndjson input line (docs/framings.md#ndjson, with the fields of NDJSONFramer's file
/// comment):
/// what `respdecode frame` prints, so that a line-oriented engine can spread the records of WARC, HAR or raw HTTP
/// inputs evenly over its workers, and `respdecode --input ndjson` decode them there into the lines a direct run gives.
///
///     {"id":"crawl.warc.gz:1234","url":"…","method":"GET","warcType":"response","warcRecordId":"<urn:uuid:…>",
///      "warcDate":"…","payloadDigest":"sha1:…","digest":"ok","status":200,"headers":[["Content-Type","application/json"]],
///      "trailers":[…],"contentDecoded":true,"warnings":["…"],"bodyBase64":"…"}
///     {"id":"crawl.warc.gz:5678",…,"error":{"code":"truncatedRecord","message":"…","offset":5678},"bodyBytes":912,
///      "bodyBase64":"…"}
///
/// `id` is the record's own (ndjson input) or `INPUT:OFFSET`: the input's name (`-` for standard input) and the
/// record's byte offset in it, so it is unique over a run's inputs and says where to look. Header fields keep their
/// order, case and repeats; the body is the one the framer made (de-chunked, Content-Encoding still on, except a HAR
/// body, which is already decoded and says `contentDecoded`). A framing failure keeps its error, its excerpt of the
/// input as the body and how many bytes it stood for. Nothing is decoded, so the line is ok whenever a record was
/// framed.
public struct RecordLineWriter: LineWriter {
    public init() {}

    public func writeLine(for item: FramedItem, source: ResultLine.Source, into out: OutputBuffer) -> LineOutcome {
        let line = ResultLine(out)
        var outcome = LineOutcome()
        switch item {
        case .record(let record):
            begin(id: record.id, source: source, out: out)
            line.provenance(id: nil, url: record.url, method: record.method, warc: record.warc, arc: record.arc)
            line.revisit(record.warc, allDigests: true)
            if let digest = record.warc?.digest { line.string("digest", digest.rawValue) }
            line.integer("status", record.status)
            line.fieldPairs("headers", record.headers)
            if let trailers = record.trailers { line.fieldPairs("trailers", trailers) }
            if record.contentDecoded { line.bool("contentDecoded", true) }
            if !record.warnings.isEmpty { line.stringArray("warnings", record.warnings) }
            record.body.withUnsafeBufferPointer { line.base64("bodyBase64", $0) }
            outcome.ok = true
            outcome.bodyBytes = record.body.count
            outcome.decodedBytes = record.body.count
        case .failure(let failure):
            begin(id: failure.id, source: source, out: out)
            line.provenance(id: nil, url: failure.url, method: failure.method, warc: failure.warc, arc: failure.arc)
            line.revisit(failure.warc, allDigests: true)
            // A record over the body limit read as it was skipped: its digest's check and warnings (the sniffed
            // type) go with it (docs/output.md#records-over-the-body-limit).
            if let digest = failure.warc?.digest { line.string("digest", digest.rawValue) }
            if let status = failure.status { line.integer("status", status) }
            if let headers = failure.headers { line.fieldPairs("headers", headers) }
            if !failure.warnings.isEmpty { line.stringArray("warnings", failure.warnings) }
            if let size = failure.bodyBytes { line.integer("overLimitBodyBytes", Int(clamping: size)) }
            line.error(failure.error)
            let total = max(failure.bytes, Int64(failure.excerpt.count))
            if total > 0 {
                line.integer("bodyBytes", Int(clamping: total))
                line.base64("bodyBase64", failure.excerpt)
            }
            outcome.errorCode = failure.error.code
            outcome.bodyBytes = Int(clamping: total)
        }
        line.end()
        return outcome
    }

    /// `{"id":…`: the record's own id, or `INPUT:OFFSET`; then an archive record's `length` (its extent in the input
    /// from that offset), which the ndjson framer does not read back: it says where the record was.
    private func begin(id: String?, source: ResultLine.Source, out: OutputBuffer) {
        out.append(ascii: "{\"id\":")
        out.appendJSONString(id ?? "\(source.input ?? "-"):\(source.offset)")
        if let length = source.length {
            out.append(ascii: ",\"length\":")
            out.append(decimal: length)
        }
    }
}
