/// Turns a byte stream into framed items: responses, and input that could not be framed.
///
/// The contract every framer keeps (so the runtime can feed it whatever `read(2)` returns):
/// - any split of the same input gives the same items;
/// - every input byte belongs to exactly one item or is inter-record filler (blank lines), so nothing is lost silently;
/// - after bad input it resynchronises and goes on; it never stops early;
/// - it holds at most one record besides the ``FramerInput`` it is lent.
///
/// Usage, in the shape of SwiftNIO's `ByteToMessageDecoder`: the owner of a ``FramerInput`` writes what was read into
/// it and calls `decode(buffer:)` until it returns `nil` (more input is needed); at the end of input it calls
/// `decodeLast(buffer:seenEOF:)` until that returns `nil`. A framer consumes from the input by moving its reader
/// index, and keeps nothing of it across calls but its own state.
public protocol RecordFramer {
    /// The next complete item from `buffer`, or `nil` when more input is needed.
    mutating func decode(buffer: inout FramerInput) -> FramedItem?
    /// The next item once no more input will come. `seenEOF`: the input ended (a record it leaves unfinished is
    /// `truncatedRecord`); `false`: reading stopped early (a signal), and only complete items are given, as by
    /// `decode`. `nil` when there are none left.
    mutating func decodeLast(buffer: inout FramerInput, seenEOF: Bool) -> FramedItem?
    /// Records read but deliberately not yielded (WARC records of types not chosen), by kind, for the statistics.
    var skippedRecords: [String: Int] { get }
}

extension RecordFramer {
    public var skippedRecords: [String: Int] { [:] }

    /// Frames a whole in-memory input at once. WARC payload digests are left pending, as the runner's workers check
    /// them: ``FramedItem/checkingPayloadDigest()`` checks one.
    public mutating func frameAll(_ bytes: some Collection<UInt8>) -> [FramedItem] {
        var input = FramerInput(bytes)
        var items: [FramedItem] = []
        while let item = decode(buffer: &input) { items.append(item) }
        while let item = decodeLast(buffer: &input, seenEOF: true) { items.append(item) }
        return items
    }
}
