/// What the workers make of each framed item: its one line. ``CompoundDecoder`` decodes it (`respdecode`);
/// ``RecordLineWriter`` writes the record itself as an ndjson input line (`respdecode frame`).
public protocol LineWriter: Sendable {
    /// Writes the line for `item` (compact JSON and a line feed) to `out`; returns what it says, for the statistics.
    func writeLine(for item: FramedItem, source: ResultLine.Source, into out: OutputBuffer) -> LineOutcome
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

    public init() {}
}
