/// What the workers make of each framed item: its one line. ``CompoundDecoder`` decodes it (`respdecode`);
/// ``RecordLineWriter`` writes the record itself as an ndjson input line (`respdecode frame`).
public protocol LineWriter: Sendable {
    /// Writes the line for `item` (compact JSON and a line feed) to `out`; returns what it says, for the statistics.
    func writeLine(for item: FramedItem, source: ResultLine.Source, into out: OutputBuffer) -> LineOutcome
    /// The writer checks a WARC record's pending payload digest itself (``FramedItem/checkingPayloadDigest()``), so
    /// that the worker does not before calling it: ``CompoundDecoder`` does, after selection. Default: false.
    var checksPayloadDigests: Bool { get }
}

extension LineWriter {
    public var checksPayloadDigests: Bool { false }
}

/// What one result line said, for the statistics.
public struct LineOutcome: Sendable, Equatable {
    /// The line's `ok`.
    public var ok = false
    /// The line's `decoder` (`none` when no decoder ran).
    public var decoder = "none"
    /// The line's `error.code`, when it has an error.
    public var errorCode: RecordError.Code?
    /// The body as framed (or as much of it as was read, for a framing failure).
    public var bodyBytes = 0
    /// The body after its content codings were undone.
    public var decodedBytes = 0
    /// The record was skipped by this filter (`select-status`, …; docs/output.md#selecting-records): it has no
    /// result line (or only a stub), and the statistics count it apart from the records decoded.
    public var skippedBy: String?
    /// The record's line was written without decoding its body, `--fields` asking for no key that decoding gives
    /// (docs/output.md#choosing-the-keys): the statistics count it apart, as neither ok nor an error.
    public var decoded = true

    public init() {}
}
