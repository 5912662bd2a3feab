// What every framer does the same way: the queue of items made and not yet handed out, and the quoting of unexpected
// input in error messages. (The input itself, its compaction and search: FramerInput.swift.)

/// Items a framer has made and not yet handed out, oldest first. A framer hands out one of these before it
/// parses further.
struct FramedItemQueue {
    private var items: [FramedItem] = []
    private var index = 0

    mutating func append(_ item: FramedItem) { items.append(item) }

    /// The oldest item not handed out yet, if any.
    mutating func pop() -> FramedItem? {
        guard index < items.count else { return nil }
        let item = items[index]
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
