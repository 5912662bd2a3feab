/// Turns a byte stream into framed items: responses, and input that could not be framed.
///
/// The contract every framer keeps (so the runtime can feed it whatever `read(2)` returns):
/// - any split of the same input gives the same items;
/// - every input byte belongs to exactly one item or is inter-record filler (blank lines), so nothing is lost silently;
/// - after bad input it resynchronises and goes on; it never stops early;
/// - it holds at most one record plus the unparsed input it was given.
///
/// Usage: `append` what was read, then call `next()` until it returns `nil`; at end of input call `finish()` and
/// drain `next()` once more.
public protocol RecordFramer {
    /// Adds input bytes. Nothing is parsed until `next()`.
    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>)
    /// Declares the end of the input.
    mutating func finish()
    /// The next complete item, or `nil` when more input is needed (after `finish()`: when the input is exhausted).
    mutating func next() -> FramedItem?
    /// Records read but deliberately not yielded (WARC records of types not chosen), by kind, for the statistics.
    var skippedRecords: [String: Int] { get }
}

extension RecordFramer {
    public var skippedRecords: [String: Int] { [:] }

    /// Adds input bytes.
    public mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { append($0) }
    }

    /// Frames a whole in-memory input at once.
    public mutating func frameAll(_ bytes: [UInt8]) -> [FramedItem] {
        append(bytes)
        finish()
        var items: [FramedItem] = []
        while let item = next() { items.append(item) }
        return items
    }
}
