/// One framed HTTP response, as the framers hand it to the decoder chain.
///
/// A record carries what its input told about it (offset, URL, ids) and the response itself (status, header fields,
/// body bytes after transfer-decoding). A framing failure is not a record but a ``FramingFailure``; both become one
/// ``FramedItem`` each, and each gets exactly one output line.
public struct ResponseRecord: Sendable {
    /// Byte offset of the record's first byte in its input.
    public var offset: Int64
    /// The record's extent in its input from `offset`, for archives (docs/output.md#record-extents): the record up to
    /// the end of its block, or its gzip member or zstd/lz4 frame(s) in a compressed file, as CDX(J) indexes give it.
    /// `nil` elsewhere.
    public var length: Int64?
    /// HTTP status code.
    public var status: Int
    /// Header fields in the order received.
    public var headers: HeaderFields
    /// The body after transfer-decoding (de-chunked), before content-decoding: its own bytes, or bytes lent by the
    /// buffer the input was read into.
    public var body: Body
    /// Trailer fields of a chunked body, if any.
    public var trailers: HeaderFields?
    /// Request URL, when the input gives it.
    public var url: String?
    /// Request method, when the input gives it.
    public var method: String?
    /// Record identifier echoed back (ndjson input).
    public var id: String?
    /// What the WARC record around the response said about it (WARC input only).
    public var warc: WARCRecordInfo?
    /// What the ARC header line of the record said about it (ARC input only; its URL is `url`).
    public var arc: ARCRecordInfo?
    /// The body is already content-decoded (HAR): a `Content-Encoding` field describes how it travelled, and is
    /// not undone again.
    public var contentDecoded: Bool
    /// Things worth knowing about the framing that did not stop it (e.g. "Transfer-Encoding overrides Content-Length").
    public var warnings: [String]
    /// The record is a line of ndjson input: skipped by a `--select-…` filter, it still gets a one-line stub
    /// (docs/output.md#selecting-records).
    public var framedFromNDJSON = false

    public init(
        offset: Int64,
        length: Int64? = nil,
        status: Int,
        headers: HeaderFields = HeaderFields(),
        body: [UInt8] = [],
        trailers: HeaderFields? = nil,
        url: String? = nil,
        method: String? = nil,
        id: String? = nil,
        warc: WARCRecordInfo? = nil,
        contentDecoded: Bool = false,
        warnings: [String] = [],
        arc: ARCRecordInfo? = nil
    ) {
        self.offset = offset
        self.length = length
        self.status = status
        self.headers = headers
        self.body = Body(body)
        self.trailers = trailers
        self.url = url
        self.method = method
        self.id = id
        self.warc = warc
        self.contentDecoded = contentDecoded
        self.warnings = warnings
        self.arc = arc
    }
}

/// A `WARC-Payload-Digest` that the framer parsed and left for a worker to check (the hashing is the costly part of
/// reading a .warc.gz, and the reading thread is the one that cannot be shared): what the check needs, as data. The
/// check is `ResponseRecord.checkPayloadDigest()` (Framing/WARC/PayloadDigest.swift).
public struct PendingPayloadDigest: Sendable, Hashable {
    /// The algorithm's name as `WARC-Payload-Digest` labels are read: `sha1`, `sha256`, `sha512`, `md5`.
    let algorithm: String
    /// The digest's bytes.
    let value: [UInt8]
    /// The payload is the record's `body[payloadStart...]` (after the request head of a request record).
    let payloadStart: Int
    /// A response whose body was de-chunked: what it takes to rebuild the payload as stored (chunked), checked when
    /// the body does not match, as writers disagree on which one they digest (warcio issue 74).
    let chunkFraming: ChunkFraming?
}

/// The bytes that de-chunking removed from a body (chunk-size lines, the line ends after chunk data, the last chunk
/// and the trailer section), in order, with the body offset each run stood before: the body and these are the body
/// as stored, at a few bytes per chunk instead of a second copy.
public struct ChunkFraming: Sendable, Hashable {
    /// The removed bytes, one run after another.
    let bytes: [UInt8]
    /// For each run, the body offset it stood before (non-decreasing).
    let bodyOffsets: [Int]
    /// For each run, its length in `bytes`.
    let lengths: [Int]
}

/// The WARC header fields of the record a response came from (docs/framings.md#warc).
public struct WARCRecordInfo: Sendable, Hashable {
    /// `WARC-Type`: `response`, `resource`, …
    public var type: String
    /// `WARC-Record-ID`, as written (`<urn:uuid:…>`).
    public var recordId: String?
    /// `WARC-Date`, as written.
    public var date: String?
    /// `WARC-Truncated`, as written (`length`, `time`, `disconnect`, `unspecified`): the writer cut the payload.
    public var truncated: String?
    /// The outcome of checking `WARC-Payload-Digest`; `nil` when the record has none, or its algorithm is unknown —
    /// or while the check is still pending.
    public var digest: DigestCheck?
    /// The digest the framer found and left for a worker to check (``ResponseRecord/checkPayloadDigest()``, before
    /// the line is written): `digest` is set then.
    public var pendingDigest: PendingPayloadDigest?

    // Revisits and indexes (docs/output.md#revisits, docs/output.md#cdxj-index).

    /// `WARC-Payload-Digest`, as written (the first such field): what revisits are resolved by and a CDXJ index
    /// says as `digest`.
    public var payloadDigest: String?
    /// A revisit's `WARC-Refers-To`, `WARC-Refers-To-Target-URI` and `WARC-Refers-To-Date`, when it has any.
    public var refersTo: WARCRefersTo?
    /// The line of this run (or of the run that framed an ndjson input) whose response has the payload this revisit
    /// stands for (`--resolve-revisits`).
    public var revisitOf: RecordOrigin?
    /// The block was read as an HTTP message: the record's status and header fields are the HTTP head's (not the
    /// `200` and WARC `Content-Type` a non-HTTP block gets).
    public var httpBlock = false
    /// A de-chunked body whose record has no `WARC-Payload-Digest`: what it takes to rebuild the payload as stored,
    /// for a CDXJ index's computed `digest`.
    public var storedChunkFraming: ChunkFraming?

    public init(
        type: String, recordId: String? = nil, date: String? = nil, truncated: String? = nil,
        digest: DigestCheck? = nil
    ) {
        self.type = type
        self.recordId = recordId
        self.date = date
        self.truncated = truncated
        self.digest = digest
    }
}

/// What a revisit record says about the record it revisits (WARC 1.1 §5.11, §5.12, §5.13), fields as written.
public struct WARCRefersTo: Sendable, Hashable {
    /// `WARC-Refers-To`: the revisited record's `WARC-Record-ID`.
    public var recordId: String?
    /// `WARC-Refers-To-Target-URI`.
    public var targetURI: String?
    /// `WARC-Refers-To-Date`.
    public var date: String?

    public init(recordId: String? = nil, targetURI: String? = nil, date: String? = nil) {
        self.recordId = recordId
        self.targetURI = targetURI
        self.date = date
    }
}

/// The ARC header line of the record a response came from, besides its URL (docs/framings.md#arc).
public struct ARCRecordInfo: Sendable, Hashable {
    /// The IP-address field, as written.
    public var ip: String?
    /// The Archive-date field, as written (14 digits, `YYYYMMDDhhmmss`, in well-formed files).
    public var date: String?

    // Indexes (docs/output.md#cdxj-index).

    /// The block was read as an HTTP message (an http or https URL, a block that is not empty): the record's status
    /// and header fields are the HTTP head's.
    public var httpBlock = false
    /// A de-chunked body: what it takes to rebuild the payload as stored, for a CDXJ index's computed `digest`.
    public var storedChunkFraming: ChunkFraming?

    public init(ip: String? = nil, date: String? = nil) {
        self.ip = ip
        self.date = date
    }
}

/// Where a line of a run came from: its `seq`, its input's name (`nil` for standard input) and its record's offset.
public struct RecordOrigin: Sendable, Hashable {
    public var seq: Int
    public var input: String?
    public var offset: Int64

    public init(seq: Int, input: String?, offset: Int64) {
        self.seq = seq
        self.input = input
        self.offset = offset
    }
}

/// The outcome of checking a payload digest.
public enum DigestCheck: String, Sendable, Hashable {
    case ok
    case mismatch
}

/// Input that could not be framed into a response: it still gets its own line, with `error`.
public struct FramingFailure: Sendable, Hashable {
    /// Byte offset in the input where the unframeable bytes begin.
    public var offset: Int64
    /// The failed record's extent in its input from `offset`, for archives, where it is known (see
    /// ``ResponseRecord/length``).
    public var length: Int64?
    /// `malformedRecord`, `truncatedRecord` or `limitExceeded`.
    public var error: RecordError
    /// The status code, when the response head was read before the failure.
    public var status: Int?
    /// The header fields, when the response head was read before the failure (the line reports `contentType`).
    public var headers: HeaderFields?
    /// Up to the error-body cap of the bytes concerned, for the line's `body` (`bytes` counts them all).
    public var excerpt: [UInt8]
    /// How many input bytes this failure stands for.
    public var bytes: Int64
    /// What the input told about the record before it failed, where it did: its URL, method and `id` (ndjson), and
    /// its WARC record's fields.
    public var url: String?
    public var method: String?
    public var id: String?
    public var warc: WARCRecordInfo?
    /// Its ARC header line's fields, when an ARC record failed after its header line was read.
    public var arc: ARCRecordInfo?
    /// A record over `maxBodyBytes` whose body was read as it was skipped, not held (docs/reliability.md#limits): the
    /// body's size as framed (de-chunked). `nil` otherwise.
    public var bodyBytes: Int64?
    /// What is worth knowing about a record over `maxBodyBytes` read as it was skipped: the framing's warnings, and
    /// the type its body's first bytes show (docs/output.md#records-over-the-body-limit).
    public var warnings: [String] = []

    public init(
        offset: Int64, length: Int64? = nil, error: RecordError, status: Int? = nil, headers: HeaderFields? = nil,
        excerpt: [UInt8] = [], bytes: Int64 = 0, url: String? = nil, method: String? = nil, id: String? = nil,
        warc: WARCRecordInfo? = nil, arc: ARCRecordInfo? = nil
    ) {
        self.offset = offset
        self.length = length
        self.error = error
        self.status = status
        self.headers = headers
        self.excerpt = excerpt
        self.bytes = bytes
        self.url = url
        self.method = method
        self.id = id
        self.warc = warc
        self.arc = arc
    }
}

/// What a framer yields: a response, or input that could not be framed.
public enum FramedItem: Sendable {
    case record(ResponseRecord)
    case failure(FramingFailure)

    /// Byte offset of the item in its input.
    public var offset: Int64 {
        switch self {
        case .record(let record): record.offset
        case .failure(let failure): failure.offset
        }
    }

    /// The item's extent in its input from `offset`, where the framing knows it (archives).
    public var length: Int64? {
        switch self {
        case .record(let record): record.length
        case .failure(let failure): failure.length
        }
    }

    /// Bytes of the item's body (or of the failure's excerpt): what makes a batch full (``weigh(lastBlock:)``'s
    /// `bytes`).
    var heldBytes: Int {
        var noBlock: ObjectIdentifier?
        return weigh(lastBlock: &noBlock).bytes
    }

    /// The item's weight, items being weighed in input order: `bytes`, of its body (and of a chunked body's framing,
    /// or of a failure's excerpt), and `held`, the memory the item holds. A body lent by the input's buffer holds the
    /// buffer's whole block (which it keeps alive) when it is another block than the one the item before held
    /// (`lastBlock`), and nothing more while it is the same. One pass for both: the reader weighs every record it
    /// batches.
    func weigh(lastBlock: inout ObjectIdentifier?) -> (bytes: Int, held: Int) {
        switch self {
        case .record(let record):
            let digest = record.warc?.pendingDigest?.chunkFraming?.bytes.count ?? 0
            let bytes = record.body.count + digest
            guard let block = record.body.lenderIdentity else { return (bytes, bytes) }
            guard block != lastBlock else { return (bytes, digest) }
            lastBlock = block
            return (bytes, record.body.lenderCapacity + digest)
        case .failure(let failure):
            return (failure.excerpt.count, failure.excerpt.count)
        }
    }
}
