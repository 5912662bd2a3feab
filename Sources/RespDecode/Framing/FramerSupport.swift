// What every framer does the same way: the queue of items made and not yet handed out, and the quoting of unexpected
// input in error messages. (The input itself, its compaction and search: FramerInput.swift.)

/// Items a framer has made and not yet handed out, oldest first. A framer hands out one of these before it
/// parses further.
struct FramedItemQueue {
    /// Items are moved out as they are handed out (nil after), not copied: a copy of a record retains each of its
    /// strings and arrays once more.
    private var items: [FramedItem?] = []
    private var index = 0

    mutating func append(_ item: consuming FramedItem) { items.append(item) }

    /// Whether every item has been handed out.
    var isEmpty: Bool { index == items.count }

    /// The oldest item not handed out yet, if any.
    mutating func pop() -> FramedItem? {
        guard index < items.count else { return nil }
        let item = items[index].take()
        index += 1
        if index == items.count {
            items.removeAll(keepingCapacity: true)
            index = 0
        }
        return item
    }
}

/// The bytes at `position` up to and including the first one that cannot continue `prefix`, quoted with `\n`, `\r`
/// and `\xHH` escapes: the same text however the input was split.
func quotedMismatch(_ buffer: FramerInput, at position: Int, expecting prefix: StaticString) -> String {
    var end = position
    while end < buffer.writerIndex && end - position < prefix.utf8CodeUnitCount
        && buffer[end] == prefix.utf8Start[end - position]
    {
        end += 1
    }
    end = Swift.min(buffer.writerIndex, end + 1)
    var text = ""
    for b in buffer.bytes(in: position..<end) {
        switch b {
        case 0x0A: text += "\\n"
        case 0x0D: text += "\\r"
        case 0x20..<0x7F: text.unicodeScalars.append(Unicode.Scalar(b))
        default: text += "\\x" + String(b, radix: 16, uppercase: true).leftPadded(to: 2)
        }
    }
    return "'\(text)'"
}

/// What the framers that step over the input they are lent share (HTTP, HAR, ndjson; WARC also steps over a stream
/// of its own when the input is gzip): the caller's ``FramerInput`` swapped in as `input` for the call (which costs
/// nothing) and back, the loop that hands out the items a step made before stepping again, the end of input, and the
/// reader index as `position`. A framer is then its state: `step()` and what it reads.
protocol LentInputFramer: RecordFramer {
    /// The caller's input during a call; empty between calls.
    var input: FramerInput { get set }
    /// Items made and not yet handed out.
    var outbox: FramedItemQueue { get set }
    /// The input has ended (`decodeLast` with `seenEOF`).
    var finished: Bool { get set }
    /// Makes progress from `input[position...]`: frames, consumes or fails something.
    /// - Returns: `false` when nothing more can be done until more input comes (or, `finished`, at all).
    mutating func step() -> Bool
    /// Called after the input is swapped in, before the first step of a call. Default: nothing.
    mutating func inputLent()
    /// Called before the input is swapped back. Default: nothing.
    mutating func inputReturning()
}

extension LentInputFramer {
    mutating func inputLent() {}
    mutating func inputReturning() {}

    /// The next item from `buffer`: the items made so far first, then steps until one is made or more input is
    /// needed.
    /// - Parameters:
    ///   - buffer: the caller's input, lent for the call.
    ///   - ended: no more input will come.
    /// - Returns: the next item, or nil.
    mutating func next(lending buffer: inout FramerInput, ended: Bool) -> FramedItem? {
        if ended { finished = true }
        swap(&input, &buffer)
        inputLent()
        defer {
            inputReturning()
            swap(&input, &buffer)
        }
        while true {
            if let item = outbox.pop() { return item }
            guard step() else { return nil }
        }
    }

    /// The reader index of the lent input: where the next step starts.
    var position: Int {
        get { input.readerIndex }
        set { input.readerIndex = newValue }
    }

    /// Bytes of the lent input not yet consumed.
    var available: Int { input.readableBytes }
}
