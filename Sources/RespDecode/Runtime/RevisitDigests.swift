/// The payload digests of the responses read so far in a run, for `--resolve-revisits` (docs/output.md#revisits).
///
/// Filled and read by the reading thread, in input order, as items are numbered: the same input always resolves
/// the same way, whatever `--jobs` is. A digest keeps the first response that had it. At most `capacity` digests are
/// kept: the one kept longest goes first (FIFO), so that memory stays bounded on any input (about 260 bytes a digest:
/// 200,000 sha1 Base32 digests raised a run's peak memory by 52 MB).
struct RevisitDigests {
    let capacity: Int
    private var origins: [String: RecordOrigin] = [:]
    private var order = FIFO<String>()

    init(capacity: Int) { self.capacity = max(capacity, 1) }

    /// How many digests are kept.
    var count: Int { origins.count }

    /// Notes `record` if it is a response or resource with a payload digest; gives a revisit its `revisitOf` when
    /// its digest was noted earlier (and it has none yet, as one framed with it from ndjson).
    /// - Parameters:
    ///   - record: the record, changed in place when it is a resolved revisit.
    ///   - origin: the record's own `seq`, input and offset.
    mutating func resolve(_ record: inout ResponseRecord, origin: RecordOrigin) {
        guard let warc = record.warc, let digest = warc.payloadDigest else { return }
        if asciiCaseInsensitiveEquals(warc.type, "revisit") {
            if warc.revisitOf == nil, let found = origins[digest] { record.warc?.revisitOf = found }
        } else if asciiCaseInsensitiveEquals(warc.type, "response") || asciiCaseInsensitiveEquals(warc.type, "resource")
        {
            guard origins[digest] == nil else { return }
            if origins.count >= capacity, let oldest = order.removeFirst() { origins[oldest] = nil }
            origins[digest] = origin
            order.append(digest)
        }
    }
}
