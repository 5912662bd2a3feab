/// Reads a binary property list (`bplist00`) and writes it as one JSON value. Own code, because Foundation's
/// PropertyListSerialization segfaults on any non-empty set, leaks on every failed parse and expands shared
/// references without bound (measured on Swift 6.3.1 Linux).
///
/// Mapping: dictionary → object (string keys only, members in file order, duplicates kept), array and set → array,
/// ASCII and UTF-16 strings → string, integer → exact decimal (up to 128 bits), real → shortest round-trip number
/// (non-finite as the strings `"Infinity"`, `"-Infinity"`, `"NaN"`), date → ISO 8601 UTC string, booleans and null
/// → themselves, data → `{"base64":"…"}`, UID → `{"CF$UID":n}`. Anything else (fill bytes, UTF-8 strings, ordered
/// sets, unknown markers) is an `invalidPropertyList` error.
///
/// The reader never trusts the file: every offset, count and reference is checked against the file with
/// overflow-safe arithmetic before it is used, nothing is allocated in proportion to a declared count, reference
/// cycles are errors, and the nesting depth, the number of emitted objects (shared references count once per use)
/// and the size of the JSON text are all bounded by `Limits`. It uses an explicit stack, so no input makes it recurse.
struct BinaryPlistReader {
    /// Bounds on what one property list may make the reader do.
    struct Limits: Sendable {
        /// Deepest allowed nesting of arrays, sets and dictionaries; the top container is at depth 1. Deeper is
        /// `limitExceeded`.
        var maxDepth: Int
        /// Most objects that may be written, counting every dictionary key and value, array element and the top
        /// object, each time it is written (a shared object is written once per reference). More is
        /// `limitExceeded`.
        var maxObjects: Int
        /// Most bytes of JSON text the value may take. More is `limitExceeded`.
        var maxValueBytes: Int
    }

    /// The bounds applied to every `read`.
    var limits: Limits

    /// Writes the value; on error throws and leaves `output` exactly as it was on entry (rollback to the mark).
    ///
    /// Errors are `invalidPropertyList` for anything malformed (with the byte offset of the offending object, or of
    /// the trailer) and `limitExceeded` when a `Limits` bound is crossed.
    func read(_ body: UnsafeBufferPointer<UInt8>, into output: OutputBuffer) throws(RecordError) {
        let mark = output.mark
        do {
            let layout = try BinaryPlistLayout(body)
            // Scratch for the walk: one bit per object (set while the object is an open container on the current
            // path, for cycle detection) and one frame per open container. Both are bounded by the file size,
            // since `layout` has checked that the offset table of `objectCount` entries fits in the file.
            let words = (layout.objectCount + 63) / 64
            let frameCapacity = max(1, min(limits.maxDepth, layout.objectCount))
            try withUnsafeTemporaryAllocation(of: UInt64.self, capacity: words) { (onPath) throws(RecordError) in
                onPath.initialize(repeating: 0)
                try withUnsafeTemporaryAllocation(of: BinaryPlistWalker.Frame.self, capacity: frameCapacity) {
                    (frames) throws(RecordError) in
                    var walker = BinaryPlistWalker(
                        layout: layout, output: output, mark: mark, limits: limits,
                        onPath: onPath.baseAddress!, frames: frames.baseAddress!)
                    try walker.run()
                }
            }
        } catch {
            output.rollback(to: mark)
            throw error
        }
    }
}

/// The validated header, trailer and offset table of a binary property list.
private struct BinaryPlistLayout {
    let base: UnsafePointer<UInt8>
    /// Where the offset table starts; objects live in `8 ..< dataEnd`.
    let dataEnd: Int
    let offsetSize: Int
    let refSize: Int
    let objectCount: Int
    let topObject: Int

    init(_ body: UnsafeBufferPointer<UInt8>) throws(RecordError) {
        let length = body.count
        guard let base = body.baseAddress, length >= 8 else {
            throw RecordError(
                .invalidPropertyList, "binary property list: shorter than its 8-byte header",
                location: .init(offset: 0))
        }
        // "bplist00", first byte lowest.
        let magic: UInt64 = 0x3030_7473_696C_7062
        guard UInt64(littleEndian: UnsafeRawPointer(base).loadUnaligned(as: UInt64.self)) == magic else {
            throw RecordError(
                .invalidPropertyList, "binary property list: header is not \"bplist00\"",
                location: .init(offset: 0))
        }
        guard length >= 8 + 32 else {
            throw RecordError(
                .invalidPropertyList, "binary property list: truncated, no room for the 32-byte trailer",
                location: .init(offset: length))
        }
        let trailer = length - 32
        let offsetSize = Int(base[trailer + 6])
        let refSize = Int(base[trailer + 7])
        let objectCount = readBigEndian(base, trailer + 8, 8)
        let topObject = readBigEndian(base, trailer + 16, 8)
        let tableOffset = readBigEndian(base, trailer + 24, 8)
        func invalid(_ message: String) -> RecordError {
            RecordError(.invalidPropertyList, "binary property list: " + message, location: .init(offset: trailer))
        }
        guard (1...8).contains(offsetSize) else { throw invalid("offset size \(offsetSize) is not 1 to 8 bytes") }
        guard (1...8).contains(refSize) else { throw invalid("object reference size \(refSize) is not 1 to 8 bytes") }
        guard objectCount >= 1 else { throw invalid("no objects") }
        guard topObject < objectCount else {
            throw invalid("top object \(topObject) is not below the object count \(objectCount)")
        }
        // The table must start after the header and at least one object byte, and end by the trailer.
        guard tableOffset > 8, tableOffset < UInt64(trailer) else {
            throw invalid("offset table at \(tableOffset) is not between the header and the trailer")
        }
        let tableStart = Int(tableOffset)
        guard objectCount <= UInt64((trailer - tableStart) / offsetSize) else {
            throw invalid("offset table of \(objectCount) \(offsetSize)-byte entries does not fit before the trailer")
        }
        let count = Int(objectCount)
        // Every object starts after the header and before the table.
        var position = tableStart
        for _ in 0..<count {
            let offset = readBigEndian(base, position, offsetSize)
            guard offset >= 8, offset < tableOffset else {
                throw RecordError(
                    .invalidPropertyList,
                    "binary property list: object offset \(offset) is outside the object area",
                    location: .init(offset: position))
            }
            position &+= offsetSize
        }
        self.base = base
        self.dataEnd = tableStart
        self.offsetSize = offsetSize
        self.refSize = refSize
        self.objectCount = count
        self.topObject = Int(topObject)
    }

    /// The (validated) byte offset of object `index` (< `objectCount`).
    @inline(__always) func offset(of index: Int) -> Int {
        Int(truncatingIfNeeded: readBigEndian(base, dataEnd &+ index &* offsetSize, offsetSize))
    }
}

/// Reads the `size`-byte (1…8) big-endian unsigned integer at `base + position`. Requires `position + size - 8 ≥ 0`
/// and the bytes inside the buffer: it loads the 8 bytes ending at the integer, which holds for everything after the
/// 8-byte header.
@inline(__always)
private func readBigEndian(_ base: UnsafePointer<UInt8>, _ position: Int, _ size: Int) -> UInt64 {
    let word = UnsafeRawPointer(base + (position &+ size &- 8)).loadUnaligned(as: UInt64.self)
    return UInt64(bigEndian: word) & (UInt64.max &>> UInt64(truncatingIfNeeded: 64 &- size &* 8))
}

/// The walk over the object graph from the top object, writing JSON as it goes.
///
/// Output goes through a cursor into room reserved in the `OutputBuffer`, committed in batches (`flush`), rather than
/// through the buffer's append methods: each access to the buffer's stored properties costs a dynamic exclusivity
/// check, which made up a third of the run time when every byte went through them.
private struct BinaryPlistWalker {
    /// An open array, set or dictionary.
    struct Frame {
        /// Object index, to clear its `onPath` bit when closed.
        var object: Int
        /// Byte offset of the object, for error locations.
        var offset: Int
        /// Position of the next (key) reference.
        var next: Int
        /// Members still to write.
        var remaining: Int
        /// For dictionaries, the distance from a key reference to its value reference; 0 for arrays.
        var valueDistance: Int
        var isDictionary: Bool
        var isFirst: Bool
    }

    let base: UnsafePointer<UInt8>
    let dataEnd: Int
    let refSize: Int
    let objectCount: Int
    let topObject: Int
    let layout: BinaryPlistLayout
    let output: OutputBuffer
    let mark: Int
    let maxDepth: Int
    let maxObjects: Int
    let maxValueBytes: Int
    let onPath: UnsafeMutablePointer<UInt64>
    let frames: UnsafeMutablePointer<Frame>
    var depth = 0
    var emitted = 0

    /// Where the next byte goes; `roomEnd` is the end of the buffer's allocation.
    var cursor: UnsafeMutablePointer<UInt8>
    var roomEnd: UnsafeMutablePointer<UInt8>
    /// `output.end` and `output.count` when last synchronised: bytes from `syncStart` to `cursor` are written but
    /// not yet committed.
    var syncStart: UnsafeMutablePointer<UInt8>
    var syncCount: Int

    init(
        layout: BinaryPlistLayout, output: OutputBuffer, mark: Int, limits: BinaryPlistReader.Limits,
        onPath: UnsafeMutablePointer<UInt64>, frames: UnsafeMutablePointer<Frame>
    ) {
        self.layout = layout
        self.base = layout.base
        self.dataEnd = layout.dataEnd
        self.refSize = layout.refSize
        self.objectCount = layout.objectCount
        self.topObject = layout.topObject
        self.output = output
        self.mark = mark
        self.maxDepth = limits.maxDepth
        self.maxObjects = limits.maxObjects
        self.maxValueBytes = limits.maxValueBytes
        self.onPath = onPath
        self.frames = frames
        syncStart = output.end
        cursor = syncStart
        roomEnd = output.base + output.capacity
        syncCount = output.count
    }

    mutating func run() throws(RecordError) {
        try emit(UInt64(topObject), referencedFrom: dataEnd)
        while depth > 0 {
            let top = frames + (depth - 1)
            if top.pointee.remaining == 0 {
                put(top.pointee.isDictionary ? UInt8(ascii: "}") : UInt8(ascii: "]"))
                let object = top.pointee.object
                onPath[object >> 6] &= ~(1 &<< UInt64(object & 63))
                depth -= 1
                try checkValueBytes(at: top.pointee.offset)
                continue
            }
            if top.pointee.isFirst {
                top.pointee.isFirst = false
            } else {
                put(UInt8(ascii: ","))
            }
            let position = top.pointee.next
            top.pointee.next = position &+ refSize
            top.pointee.remaining -= 1
            let from = top.pointee.offset
            if top.pointee.isDictionary {
                let key = readBigEndian(base, position, refSize)
                try emitKey(key, referencedFrom: from)
                put(UInt8(ascii: ":"))
                try emit(readBigEndian(base, position &+ top.pointee.valueDistance, refSize), referencedFrom: from)
            } else {
                try emit(readBigEndian(base, position, refSize), referencedFrom: from)
            }
            try checkValueBytes(at: from)
        }
        // A scalar top object has not been checked yet.
        try checkValueBytes(at: layout.offset(of: topObject))
        flush()
    }

    // MARK: Output

    /// Bytes of JSON written for this value so far.
    @inline(__always) var written: Int { mutating get { syncCount &+ syncStart.distance(to: cursor) &- mark } }

    /// Makes room for `n` more bytes at `cursor`.
    @inline(__always) mutating func ensure(_ n: Int) {
        if cursor.distance(to: roomEnd) < n { grow(n) }
    }

    @inline(never) mutating func grow(_ n: Int) {
        flush()
        output.reserve(max(n, 1 << 16))
        resync()
    }

    /// Commits the bytes written through the cursor.
    mutating func flush() {
        output.commit(syncStart.distance(to: cursor))
        syncStart = cursor
        syncCount = output.count
    }

    /// Takes up the buffer's state after it was written to directly (after a `flush`).
    mutating func resync() {
        syncStart = output.end
        cursor = syncStart
        roomEnd = output.base + output.capacity
        syncCount = output.count
    }

    @inline(__always) mutating func put(_ byte: UInt8) {
        ensure(1)
        cursor.pointee = byte
        cursor += 1
    }

    /// Writes a short literal (at most 16 bytes) with two word stores rather than a `memmove` call.
    @inline(__always) mutating func put(_ text: StaticString) {
        let n = text.utf8CodeUnitCount
        ensure(16)
        let raw = UnsafeMutableRawPointer(cursor)
        raw.storeBytes(of: packed(text, from: 0).littleEndian, as: UInt64.self)
        if n > 8 { raw.storeBytes(of: packed(text, from: 8).littleEndian, toByteOffset: 8, as: UInt64.self) }
        cursor += n
    }

    // MARK: Errors and budgets

    func invalid(_ message: String, at offset: Int) -> RecordError {
        RecordError(.invalidPropertyList, "binary property list: " + message, location: .init(offset: offset))
    }

    @inline(__always) mutating func checkValueBytes(at offset: Int) throws(RecordError) {
        if written > maxValueBytes { throw valueTooLarge(at: offset) }
    }

    /// Throws unless `additional` more bytes of JSON would still fit the value budget.
    @inline(__always) mutating func checkRoom(_ additional: Int, at offset: Int) throws(RecordError) {
        if additional > maxValueBytes &- written { throw valueTooLarge(at: offset) }
    }

    func valueTooLarge(at offset: Int) -> RecordError {
        RecordError(
            .limitExceeded, "binary property list: JSON text exceeds the limit of \(maxValueBytes) bytes",
            location: .init(offset: offset))
    }

    /// Validates a reference, counts the object against the budget and returns its offset.
    @inline(__always) mutating func resolve(_ reference: UInt64, referencedFrom from: Int) throws(RecordError) -> Int {
        guard reference < UInt64(objectCount) else {
            throw invalid("object reference \(reference) is not below the object count \(objectCount)", at: from)
        }
        emitted += 1
        guard emitted <= maxObjects else {
            throw RecordError(
                .limitExceeded,
                "binary property list: more than \(maxObjects) objects (shared ones count once per use)",
                location: .init(offset: from))
        }
        return layout.offset(of: Int(truncatingIfNeeded: reference))
    }

    /// Reads the length of the object at `offset` with marker low nibble `low`: the nibble itself, or for 0xF the
    /// integer object that follows. Returns the length and where the payload starts.
    @inline(__always) mutating func length(at offset: Int, low: Int) throws(RecordError) -> (count: Int, payload: Int) {
        if low != 0xF { return (low, offset &+ 1) }
        let p = offset &+ 1
        guard p < dataEnd else { throw invalid("truncated length", at: offset) }
        let marker = base[p]
        guard marker & 0xF0 == 0x10, marker & 0x0F <= 3 else {
            throw invalid("length is not a 1, 2, 4 or 8-byte integer object", at: offset)
        }
        let size = 1 &<< Int(marker & 0x0F)
        guard size <= dataEnd &- p &- 1 else { throw invalid("truncated length", at: offset) }
        let value = readBigEndian(base, p &+ 1, size)
        guard value <= UInt64(Int.max) else { throw invalid("negative length", at: offset) }
        return (Int(value), p &+ 1 &+ size)
    }

    /// Throws unless `count` items of `unit` bytes from `payload` lie inside the object area.
    @inline(__always)
    mutating func checkPayload(_ payload: Int, count: Int, unit: Int, at offset: Int) throws(RecordError) {
        guard payload <= dataEnd, count <= (dataEnd &- payload) / unit else {
            throw invalid("object of \(count) items runs past the object area", at: offset)
        }
    }

    /// Throws unless `size` payload bytes follow the marker byte at `offset` inside the object area.
    @inline(__always) mutating func checkFixed(_ size: Int, at offset: Int, _ what: StaticString) throws(RecordError) {
        guard size <= dataEnd &- offset &- 1 else { throw invalid("truncated \(what)", at: offset) }
    }

    // MARK: Objects

    /// Writes a dictionary key, which must be an ASCII or UTF-16 string.
    mutating func emitKey(_ reference: UInt64, referencedFrom from: Int) throws(RecordError) {
        let offset = try resolve(reference, referencedFrom: from)
        let marker = Int(base[offset])
        switch marker >> 4 {
        case 0x5: try emitASCII(at: offset, low: marker & 0xF)
        case 0x6: try emitUTF16(at: offset, low: marker & 0xF)
        default: throw invalid("dictionary key is not a string (marker 0x\(hex(marker)))", at: offset)
        }
    }

    /// Writes any object; containers are opened (pushed) and filled by `run`.
    mutating func emit(_ reference: UInt64, referencedFrom from: Int) throws(RecordError) {
        let offset = try resolve(reference, referencedFrom: from)
        let marker = Int(base[offset])
        let low = marker & 0xF
        switch marker >> 4 {
        case 0x0:
            switch marker {
            case 0x00: put("null")
            case 0x08: put("false")
            case 0x09: put("true")
            default: throw invalid("unsupported object marker 0x\(hex(marker))", at: offset)
            }
        case 0x1:
            guard low <= 4 else { throw invalid("integer of unsupported size (marker 0x\(hex(marker)))", at: offset) }
            let size = 1 &<< low
            try checkFixed(size, at: offset, "integer")
            let p = offset &+ 1
            ensure(PlistText.maxDecimalBytes)
            switch size {
            case 16:
                cursor += PlistText.writeDecimal(
                    high: Int64(bitPattern: readBigEndian(base, p, 8)),
                    low: readBigEndian(base, p &+ 8, 8), to: cursor)
            case 8:
                cursor += PlistText.writeDecimal(Int64(bitPattern: readBigEndian(base, p, 8)), to: cursor)
            default:
                cursor += PlistText.writeDecimal(readBigEndian(base, p, size), to: cursor)
            }
        case 0x2:
            let value: Double
            if marker == 0x23 {
                try checkFixed(8, at: offset, "real")
                value = Double(bitPattern: readBigEndian(base, offset &+ 1, 8))
            } else if marker == 0x22 {
                try checkFixed(4, at: offset, "real")
                // Widened exactly, so the text is the float's exact value as plistlib reads it.
                value = Double(Float(bitPattern: UInt32(truncatingIfNeeded: readBigEndian(base, offset &+ 1, 4))))
            } else {
                throw invalid("real of unsupported size (marker 0x\(hex(marker)))", at: offset)
            }
            ensure(PlistText.maxRealBytes)
            cursor += PlistText.writeReal(value, to: cursor)
        case 0x3:
            guard marker == 0x33 else { throw invalid("unsupported date marker 0x\(hex(marker))", at: offset) }
            try checkFixed(8, at: offset, "date")
            let seconds = Double(bitPattern: readBigEndian(base, offset &+ 1, 8))
            ensure(PlistText.maxDateBytes)
            guard let n = PlistText.writeDate(secondsSinceReferenceDate: seconds, to: cursor) else {
                throw invalid("date \(seconds) s after 2001-01-01 is not in the years 1 to 9999", at: offset)
            }
            cursor += n
        case 0x4:
            let (count, payload) = try length(at: offset, low: low)
            try checkPayload(payload, count: count, unit: 1, at: offset)
            // {"base64":"…"}: 13 bytes around the encoding.
            try checkRoom(count / 3 * 4 + 17, at: offset)
            put("{\"base64\":\"")
            flush()
            output.appendBase64(UnsafeBufferPointer(start: base + payload, count: count))
            resync()
            put("\"}")
        case 0x5:
            try emitASCII(at: offset, low: low)
        case 0x6:
            try emitUTF16(at: offset, low: low)
        case 0x8:
            let size = low &+ 1
            try checkFixed(size, at: offset, "UID")
            let p = offset &+ 1
            if size > 8 {
                // Only values below 2^64 are UIDs (as in plistlib and CoreFoundation).
                guard readBigEndian(base, p, size &- 8) == 0 else { throw invalid("UID is 2^64 or more", at: offset) }
            }
            let value = size > 8 ? readBigEndian(base, p &+ size &- 8, 8) : readBigEndian(base, p, size)
            put("{\"CF$UID\":")
            ensure(PlistText.maxDecimalBytes &+ 1)
            cursor += PlistText.writeDecimal(value, to: cursor)
            cursor.pointee = UInt8(ascii: "}")
            cursor += 1
        case 0xA, 0xC:
            try open(Int(truncatingIfNeeded: reference), at: offset, low: low, isDictionary: false)
        case 0xD:
            try open(Int(truncatingIfNeeded: reference), at: offset, low: low, isDictionary: true)
        default:
            throw invalid("unsupported object marker 0x\(hex(marker))", at: offset)
        }
    }

    /// Opens an array, set or dictionary: checks depth, cycles and bounds, writes `[` or `{` and pushes a frame.
    mutating func open(_ object: Int, at offset: Int, low: Int, isDictionary: Bool) throws(RecordError) {
        guard depth < maxDepth else {
            throw RecordError(
                .limitExceeded, "binary property list: nesting deeper than \(maxDepth)",
                location: .init(offset: offset))
        }
        let bit: UInt64 = 1 &<< UInt64(object & 63)
        guard onPath[object >> 6] & bit == 0 else {
            throw invalid("object \(object) contains itself (reference cycle)", at: offset)
        }
        let (count, payload) = try length(at: offset, low: low)
        try checkPayload(payload, count: count, unit: isDictionary ? refSize &* 2 : refSize, at: offset)
        onPath[object >> 6] |= bit
        frames[depth] = Frame(
            object: object, offset: offset, next: payload, remaining: count,
            valueDistance: isDictionary ? count &* refSize : 0, isDictionary: isDictionary,
            isFirst: true)
        depth += 1
        put(isDictionary ? UInt8(ascii: "{") : UInt8(ascii: "["))
    }

    /// Writes an ASCII string object (every byte below 0x80, as Python's `plistlib` requires).
    mutating func emitASCII(at offset: Int, low: Int) throws(RecordError) {
        let (count, payload) = try length(at: offset, low: low)
        try checkPayload(payload, count: count, unit: 1, at: offset)
        try checkRoom(count &+ 2, at: offset)
        if count > Self.largeString {
            for i in 0..<count where base[payload + i] >= 0x80 {
                throw invalid("ASCII string contains a byte of 0x80 or more", at: offset)
            }
            flush()
            output.appendJSONString(utf8: UnsafeBufferPointer(start: base + payload, count: count), validate: false)
            resync()
            return
        }
        // Worst case every byte becomes a 6-byte `\u00XX`.
        ensure(count &* 6 &+ 2)
        guard let end = writeASCIIJSONString(base + payload, count: count, to: cursor) else {
            throw invalid("ASCII string contains a byte of 0x80 or more", at: offset)
        }
        cursor = end
    }

    /// Strings longer than this many units are written in segments (``OutputBuffer/appendJSONStringContent``)
    /// rather than with room reserved for six output bytes per unit at once.
    static let largeString = 1 << 20

    /// Writes a long UTF-16BE string as a JSON string, transcoding 64 Ki units at a time; `false` (output as it was)
    /// on an unpaired surrogate.
    func appendLargeUTF16(_ source: UnsafePointer<UInt8>, units: Int) -> Bool {
        let mark = output.mark
        output.append(UInt8(ascii: "\""))
        var utf8: [UInt8] = []
        utf8.reserveCapacity(3 << 16)
        var i = 0
        while i < units {
            utf8.removeAll(keepingCapacity: true)
            let stop = min(i + (1 << 16), units)
            while i < stop {
                let unit = UInt32(source[2 &* i]) &<< 8 | UInt32(source[2 &* i &+ 1])
                i += 1
                var scalar = unit
                if unit >= 0xD800 && unit < 0xDC00 {
                    guard i < units else {
                        output.rollback(to: mark)
                        return false
                    }
                    let low = UInt32(source[2 &* i]) &<< 8 | UInt32(source[2 &* i &+ 1])
                    guard low >= 0xDC00 && low < 0xE000 else {
                        output.rollback(to: mark)
                        return false
                    }
                    i += 1 // a pair may cross `stop`; it is finished here all the same
                    scalar = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                } else if unit >= 0xDC00 && unit < 0xE000 {
                    output.rollback(to: mark)
                    return false
                }
                utf8.append(contentsOf: UTF8.encode(Unicode.Scalar(scalar)!)!)
            }
            utf8.withUnsafeBufferPointer { _ = output.appendJSONStringContent(utf8: $0, validate: false) }
        }
        output.append(UInt8(ascii: "\""))
        return true
    }

    /// Writes a UTF-16BE string object as a UTF-8 JSON string.
    mutating func emitUTF16(at offset: Int, low: Int) throws(RecordError) {
        let (count, payload) = try length(at: offset, low: low)
        try checkPayload(payload, count: count, unit: 2, at: offset)
        try checkRoom(count &+ 2, at: offset)
        if count > Self.largeString {
            flush()
            guard appendLargeUTF16(base + payload, units: count) else {
                resync()
                throw invalid("UTF-16 string contains an unpaired surrogate", at: offset)
            }
            resync()
            return
        }
        // Worst case every unit becomes a 6-byte `\u00XX` (a surrogate pair is 4 bytes for 2 units).
        ensure(count &* 6 &+ 2)
        guard let end = writeUTF16JSONString(base + payload, units: count, to: cursor) else {
            throw invalid("UTF-16 string contains an unpaired surrogate", at: offset)
        }
        cursor = end
    }
}

/// Up to eight bytes of `text` from `start`, the first in the low byte (zeros past the end). Folds to a constant
/// for a literal.
@inline(__always) private func packed(_ text: StaticString, from start: Int) -> UInt64 {
    var word: UInt64 = 0
    var i = min(text.utf8CodeUnitCount, start + 8)
    while i > start {
        i -= 1
        word = word << 8 | UInt64(text.utf8Start[i])
    }
    return word
}

private func hex(_ byte: Int) -> String {
    let digits = String(byte, radix: 16, uppercase: true)
    return digits.count < 2 ? "0" + digits : digits
}

// MARK: - JSON strings

private let highBits: UInt64 = 0x8080_8080_8080_8080

/// Has the high bit of a byte set for every byte of `word` that is ≥ 0x80, < 0x20, `"` or `\` (and possibly for
/// bytes above one of those, through borrows, but never for a byte below the first real one). From the classic
/// "determine if a word has a byte less than n" bit trick: `(x - n·ones) & ~x` flags bytes below n.
@inline(__always) private func attentionBytes(_ word: UInt64) -> UInt64 {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let quote = word ^ (ones &* 0x22)
    let backslash = word ^ (ones &* 0x5C)
    return
        (word | ((word &- ones &* 0x20) & ~word) | ((quote &- ones) & ~quote)
        | ((backslash &- ones) & ~backslash)) & highBits
}

/// Printable ASCII that JSON strings carry as is: 0x20…0x7F except `"` and `\` (DEL is not escaped, as in
/// `OutputBuffer.appendJSONString(utf8:)`).
@inline(__always) private func isPlain(_ c: UInt8) -> Bool {
    c >= 0x20 && c < 0x80 && c != 0x22 && c != 0x5C
}

private let lowerHexDigits: StaticString = "0123456789abcdef"

/// Writes the escape for an ASCII byte that is not plain (`"`, `\` or a control character) and returns its length:
/// the short forms `\"`, `\\`, `\n`, `\r`, `\t`, `\b`, `\f`, else `\u00xx`, as `appendJSONString(utf8:)` writes them.
@inline(__always) private func writeEscape(_ c: UInt8, to out: UnsafeMutablePointer<UInt8>) -> Int {
    out[0] = UInt8(ascii: "\\")
    switch c {
    case 0x22: out[1] = 0x22
    case 0x5C: out[1] = 0x5C
    case 0x0A: out[1] = UInt8(ascii: "n")
    case 0x0D: out[1] = UInt8(ascii: "r")
    case 0x09: out[1] = UInt8(ascii: "t")
    case 0x08: out[1] = UInt8(ascii: "b")
    case 0x0C: out[1] = UInt8(ascii: "f")
    default:
        out[1] = UInt8(ascii: "u")
        out[2] = UInt8(ascii: "0")
        out[3] = UInt8(ascii: "0")
        out[4] = lowerHexDigits.utf8Start[Int(c >> 4)]
        out[5] = lowerHexDigits.utf8Start[Int(c & 0xF)]
        return 6
    }
    return 2
}

/// Writes `count` ASCII bytes as a quoted JSON string at `out` (room for `6 * count + 2` bytes) and returns the end,
/// or `nil` when a byte is 0x80 or more.
@inline(__always)
private func writeASCIIJSONString(
    _ source: UnsafePointer<UInt8>, count n: Int,
    to out: UnsafeMutablePointer<UInt8>
) -> UnsafeMutablePointer<UInt8>? {
    var o = out
    o.pointee = UInt8(ascii: "\"")
    o += 1
    let raw = UnsafeRawPointer(source)
    var i = 0
    while i < n {
        // Eight bytes at a time while none needs attention. The store is safe: eight more source bytes mean at
        // least 48 bytes of room left.
        while n &- i >= 8 {
            let word = raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
            UnsafeMutableRawPointer(o).storeBytes(of: word, as: UInt64.self)
            let attention = attentionBytes(word)
            guard attention == 0 else {
                let plain = attention.trailingZeroBitCount &>> 3
                o += plain
                i &+= plain
                break
            }
            o += 8
            i &+= 8
        }
        guard i < n else { break }
        let c = source[i]
        i &+= 1
        if isPlain(c) {
            o.pointee = c
            o += 1
        } else if c < 0x80 {
            o += writeEscape(c, to: o)
        } else {
            return nil
        }
    }
    o.pointee = UInt8(ascii: "\"")
    return o + 1
}

/// Writes `units` UTF-16 code units, stored big-endian at `source`, as a quoted UTF-8 JSON string at `out` (room for
/// `6 * units + 2` bytes) and returns the end, or `nil` when the text has an unpaired surrogate.
@inline(__always)
private func writeUTF16JSONString(
    _ source: UnsafePointer<UInt8>, units: Int,
    to out: UnsafeMutablePointer<UInt8>
) -> UnsafeMutablePointer<UInt8>? {
    var o = out
    o.pointee = UInt8(ascii: "\"")
    o += 1
    var i = 0
    while i < units {
        // Four units at a time while they are plain ASCII.
        while units &- i >= 4 {
            let word = UInt64(bigEndian: UnsafeRawPointer(source + 2 &* i).loadUnaligned(as: UInt64.self))
            guard word & 0xFF80_FF80_FF80_FF80 == 0 else { break }
            let b0 = UInt8(truncatingIfNeeded: word &>> 48)
            let b1 = UInt8(truncatingIfNeeded: word &>> 32)
            let b2 = UInt8(truncatingIfNeeded: word &>> 16)
            let b3 = UInt8(truncatingIfNeeded: word)
            guard isPlain(b0), isPlain(b1), isPlain(b2), isPlain(b3) else { break }
            o[0] = b0
            o[1] = b1
            o[2] = b2
            o[3] = b3
            o += 4
            i &+= 4
        }
        guard i < units else { break }
        let unit = UInt32(source[2 &* i]) &<< 8 | UInt32(source[2 &* i &+ 1])
        i &+= 1
        if unit < 0x80 {
            let c = UInt8(truncatingIfNeeded: unit)
            if isPlain(c) {
                o.pointee = c
                o += 1
            } else {
                o += writeEscape(c, to: o)
            }
        } else if unit < 0x800 {
            o[0] = UInt8(truncatingIfNeeded: 0xC0 | unit &>> 6)
            o[1] = UInt8(truncatingIfNeeded: 0x80 | unit & 0x3F)
            o += 2
        } else if unit & 0xF800 != 0xD800 {
            o[0] = UInt8(truncatingIfNeeded: 0xE0 | unit &>> 12)
            o[1] = UInt8(truncatingIfNeeded: 0x80 | unit &>> 6 & 0x3F)
            o[2] = UInt8(truncatingIfNeeded: 0x80 | unit & 0x3F)
            o += 3
        } else {
            // A surrogate: must be a high one followed by a low one.
            guard unit < 0xDC00, i < units else { return nil }
            let next = UInt32(source[2 &* i]) &<< 8 | UInt32(source[2 &* i &+ 1])
            guard next & 0xFC00 == 0xDC00 else { return nil }
            i &+= 1
            let scalar = 0x10000 &+ ((unit & 0x3FF) &<< 10 | next & 0x3FF)
            o[0] = UInt8(truncatingIfNeeded: 0xF0 | scalar &>> 18)
            o[1] = UInt8(truncatingIfNeeded: 0x80 | scalar &>> 12 & 0x3F)
            o[2] = UInt8(truncatingIfNeeded: 0x80 | scalar &>> 6 & 0x3F)
            o[3] = UInt8(truncatingIfNeeded: 0x80 | scalar & 0x3F)
            o += 4
        }
    }
    o.pointee = UInt8(ascii: "\"")
    return o + 1
}
