// What every framer does the same way: the queue of items made and not yet handed out, the compaction of its input
// buffer, and the quoting of unexpected input in error messages.

/// Items a framer has made and not yet handed out, oldest first. A framer's `next()` hands out one of these before it
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

extension Array where Element == UInt8 {
    /// Whether the bytes at `index` are `prefix`.
    func starts(with prefix: StaticString, at index: Int) -> Bool {
        let n = prefix.utf8CodeUnitCount
        guard count - index >= n else { return false }
        let p = prefix.utf8Start
        for k in 0..<n where self[index + k] != p[k] { return false }
        return true
    }

    /// Whether the bytes from `index` to the end are a proper prefix of `prefix` (more input could complete it).
    func isPrefix(of prefix: StaticString, at index: Int) -> Bool {
        let n = count - index
        guard n < prefix.utf8CodeUnitCount else { return false }
        let p = prefix.utf8Start
        for k in 0..<n where self[index + k] != p[k] { return false }
        return true
    }
}

/// Drops the consumed front (`buffer[..<position]`) of a framer's input buffer when all of it is consumed, or when
/// the consumed part is at least 64 KiB and at least half of it — so each byte is moved O(1) times on average.
/// - Returns: how many bytes were dropped (0 when the buffer was left as it was); `offset` (the input offset of
///   `buffer[0]`) has moved on by as many, and `position` is 0 after a drop.
@discardableResult
func compactInput(_ buffer: inout [UInt8], position: inout Int, offset: inout Int64) -> Int {
    guard position > 0 else { return 0 }
    if position == buffer.count {
        buffer.removeAll(keepingCapacity: true)
    } else if position >= 64 * 1024 && position * 2 >= buffer.count {
        buffer.removeSubrange(0..<position)
    } else {
        return 0
    }
    let dropped = position
    offset += Int64(dropped)
    position = 0
    return dropped
}

/// The bytes at `position` up to and including the first one that cannot continue `prefix`, quoted with `\n`, `\r`
/// and `\xHH` escapes: the same text however the input was split.
func quotedMismatch(_ buffer: [UInt8], at position: Int, expecting prefix: StaticString) -> String {
    var end = position
    while end < buffer.count && end - position < prefix.utf8CodeUnitCount
        && buffer[end] == prefix.utf8Start[end - position]
    {
        end += 1
    }
    end = Swift.min(buffer.count, end + 1)
    var text = ""
    for b in buffer[position..<end] {
        switch b {
        case 0x0A: text += "\\n"
        case 0x0D: text += "\\r"
        case 0x20..<0x7F: text.unicodeScalars.append(Unicode.Scalar(b))
        default: text += "\\x" + String(b, radix: 16, uppercase: true).leftPadded(to: 2)
        }
    }
    return "'\(text)'"
}
