/*
 Frames a HAR 1.2 document (docs/framings.md#har): one record per `log.entries[]` item.

 A HAR file can be hundreds of MB, so the document is never held whole. The framer walks the top-level object as
 input arrives: it finds `log` (an object) and in it `entries` (an array); for each element it finds the end with an
 incremental, string-aware bracket scanner (its state kept across appends), parses just that element with JSONValue,
 makes the item and drops the element's bytes. Every other value (`version`, `creator`, `pages`, unknown keys, in any
 order, before or after `entries`) goes through the same scanner and is dropped as it is scanned. Memory: one entry
 plus the input not yet looked at.

 Entry → record:

     response.status ............ status (an integer 100–999); 0 (no response recorded: Chrome, mitmproxy) is a
                                  malformedRecord failure carrying the url, method and `_error` text; so is an
                                  `_error` entry whose response is missing or null
     response.headers ........... fields, in order, repeats kept: [{name, value}] (HAR 1.2) or [[name, value]] (Slack)
     content.mimeType ........... the Content-Type field, only when the headers have none
     content.text ............... the body as UTF-8 bytes; base64-decoded when content.encoding is "base64"
                                  (white space allowed); absent: an empty body, with a warning when content.size > 0
     request.url, request.method  url, method; a HEAD request's response has no body (a recorded text is ignored
                                  with a warning)
     (always) ................... contentDecoded: HAR bodies are already decoded, a Content-Encoding field is only
                                  how they travelled (docs/framings.md#har)

 Other statuses are kept with their recorded text, 304 included (the text is what the browser showed from its
 cache). An `_error` beside a real status becomes a warning. Unknown and `_`-prefixed fields are ignored.

 Failures — every one is a line, then framing goes on:
 - A bad entry (not an object, no response, a status that is not an integer, a header item without a string name and
   value, invalid base64, a body over maxBodyBytes, JSON that does not parse) → one failure for that entry (at its
   `{`, covering it; with its url and method when they could be read). The next entry follows.
 - An entry longer than 2 × maxBodyBytes + maxHeaderBytes (a base64 body is 4/3 of its bytes, plus escapes and the
   rest of the entry) → limitExceeded for it; it is scanned to its end without being kept. A text body with many
   escapes can hit this cap before its decoded bytes reach maxBodyBytes.
 - A document that is broken (not a JSON object, `log` not an object, `entries` not an array, a syntax error between
   entries, a bracket that does not match, content after the document) → records for the entries read so far, then
   ONE malformedRecord failure at the error (at the start of the entry it is in, if any; `location` gives the exact
   byte) covering the rest of the input. The input simply ending inside the document → truncatedRecord, from the end
   of the last entry read (or the start of the document, or of the unfinished entry).
 - A top-level object without `log` → one malformedRecord failure for the whole document; a `log` without `entries`
   → one malformedRecord failure covering it (HAR 1.2 requires both).
 Values other than entries are checked for balanced brackets, closed strings and JSON's bytes only, not against the
 whole grammar: an unused value that is wrong in a way that keeps its extent clear (`[1 2]`, `01`) does not cost the
 entries. Entries are parsed in full.

 Choices beyond HAR 1.2:
 - A UTF-8 BOM at the start is skipped; offsets still count it (a record's offset is its entry's `{` in the input).
 - Schema errors outside the entries (a numeric `version`, a bad `creator` or page date: har-validator's invalid-*
   fixtures) are not this reader's business: the document frames without a failure and its entries decode without a
   warning (har-validator's own note: reject only when validating the schema).
 - Keys are compared after unescaping; a duplicated `log` or `entries` is read each time it appears.
 - An empty input, or white space only, gives no items.
 - Nesting in an entry counts from the entry (maxDepth); too deep is limitExceeded for that entry.
 */

/// Frames HAR 1.2 documents entry by entry. See the file comment for the rules.
public struct HARFramer: RecordFramer, LentInputFramer {
    private let limits: Limits
    /// The largest entry kept for parsing, in bytes (see the file comment).
    let entryCap: Int
    /// A key longer than this is neither `log` nor `entries`, however it is escaped (`entries` with every letter as
    /// `\uXXXX` is 44 bytes with its quotes).
    private static let keyCap = 64

    /// The input lent by `decode` for the call (swapped in and back, which costs nothing), so that the steps read it
    /// directly; empty between calls. Unconsumed input: `input[position...]`. While a value is scanned, `cursor` is
    /// how far the scanner got (kept across calls as `cursorAhead`, its distance from `position`, since the owner may
    /// compact the input between calls); the bytes from `position` are kept while they may be needed.
    var input = FramerInput()
    private var cursor = 0
    private var cursorAhead = 0
    /// The input has ended (`decodeLast`).
    var finished = false

    var outbox = FramedItemQueue()

    private var phase = Phase.start
    private var scanner: ValueScanner
    /// Where the key or entry being scanned began, and whether its bytes are dropped (too long to keep).
    private var valueStart: Int64 = 0
    private var valueDropped = false
    private var entryIndex = 0
    private var sawLog = false
    private var logHasEntries = false

    // The input from `captureStart` not yet covered by an item: a failure found now starts there, and its excerpt is
    // the first `maxErrorBodyBytes` of it. Moved on to the start and the end of each entry, and to a document error.
    private var captureStart: Int64 = 0
    private var capture: [UInt8] = []

    /// The containers of the document that are walked rather than skipped.
    private enum Level {
        case top, log
    }

    /// What an object member is.
    private enum Member {
        case log, entries, other
    }

    private enum Phase {
        /// Before the document: a BOM, white space.
        case start
        /// In an object, where a key is expected (or its end, when `first`).
        case key(Level, first: Bool)
        /// Scanning a key.
        case keyString(Level)
        case colon(Level, Member)
        /// Where a member's value starts.
        case value(Level, Member)
        /// Scanning a value that is not used.
        case skip(Level)
        /// After a member's value: `,` or `}`.
        case next(Level)
        /// In `entries`, where an entry is expected (or the array's end, when `first`).
        case element(first: Bool)
        /// Scanning an entry.
        case entry
        /// After an entry: `,` or `]`.
        case elementNext
        /// After the document: white space only.
        case after
        /// Dropping the rest of the input into the pending failure.
        case failed(RecordError)
        case done
    }

    /// Creates a framer.
    /// - Parameter limits: `maxBodyBytes`, `maxHeaderBytes` (the entry cap), `maxDepth` (per entry) and
    ///   `maxErrorBodyBytes` apply.
    public init(limits: Limits = Limits()) {
        self.limits = limits
        self.entryCap = limits.maxRecordTextBytes
        self.scanner = ValueScanner(maxDepth: limits.maxDepth)
    }

    public mutating func decode(buffer: inout FramerInput) -> FramedItem? {
        next(lending: &buffer, ended: false)
    }

    public mutating func decodeLast(buffer: inout FramerInput, seenEOF: Bool) -> FramedItem? {
        next(lending: &buffer, ended: seenEOF)
    }

    mutating func inputLent() { cursor = position + cursorAhead }
    mutating func inputReturning() { cursorAhead = cursor - position }

    // MARK: - Input

    private func offset(of index: Int) -> Int64 { input.offset(of: index) }

    /// Consumes the input up to `index`, keeping what the capture still has room for.
    private mutating func consume(to index: Int) {
        let room = limits.maxErrorBodyBytes - capture.count
        if room > 0 && index > position {
            input.copyBytes(in: position..<position + min(room, index - position), to: &capture)
        }
        position = index
        if cursor < position { cursor = position }
    }

    /// Starts the capture (and so the next failure's coverage) at `position`.
    private mutating func restartCapture() {
        captureStart = offset(of: position)
        capture.removeAll(keepingCapacity: true)
    }

    /// Consumes white space; the next byte, or `nil` when the input has none yet.
    private mutating func nextSignificantByte() -> UInt8? {
        var index = position
        while index < input.writerIndex {
            let c = input[index]
            guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { break }
            index += 1
        }
        consume(to: index)
        return index < input.writerIndex ? input[index] : nil
    }

    // MARK: - Steps

    /// Advances once. Returns `false` when nothing can be done without more input (or the input is done).
    mutating func step() -> Bool {
        switch phase {
        case .start: return stepStart()
        case .key(let level, let first): return stepKey(level, first: first)
        case .keyString(let level): return stepKeyString(level)
        case .colon(let level, let member): return stepColon(level, member)
        case .value(let level, let member): return stepValue(level, member)
        case .skip(let level): return stepSkip(level)
        case .next(let level): return stepNext(level)
        case .element(let first): return stepElement(first: first)
        case .entry: return stepEntry()
        case .elementNext: return stepElementNext()
        case .after: return stepAfter()
        case .failed(let error): return stepFailed(error)
        case .done: return false
        }
    }

    private mutating func stepStart() -> Bool {
        if input.readerOffset == 0 {
            // A UTF-8 BOM, decided once three bytes (or the end) are there.
            let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
            let n = min(available, 3)
            if input.bytes(in: position..<position + n).elementsEqual(bom[0..<n]) {
                if n < 3 {
                    guard finished else { return false }
                } else {
                    position += 3
                    cursor = position
                }
            }
        }
        guard let c = nextSignificantByte() else {
            guard finished else { return false }
            phase = .done
            return false
        }
        guard c == UInt8(ascii: "{") else {
            return fail(
                .malformedRecord,
                "expected a HAR document (a JSON object with a 'log' member), found \(describe(position))",
                at: position)
        }
        restartCapture()
        consume(to: position + 1)
        phase = .key(.top, first: true)
        return true
    }

    private mutating func stepKey(_ level: Level, first: Bool) -> Bool {
        guard let c = nextSignificantByte() else { return waitOrTruncate() }
        if c == UInt8(ascii: "\"") {
            valueStart = offset(of: position)
            valueDropped = false
            _ = scanner.begin(c)
            cursor = position + 1
            phase = .keyString(level)
            return true
        }
        if first && c == UInt8(ascii: "}") {
            consume(to: position + 1)
            return closeObject(level)
        }
        let expected = first ? "a string key or '}'" : "a string key after ','"
        return fail(
            .malformedRecord, "expected \(expected) in \(name(of: level)), found \(describe(position))", at: position)
    }

    private mutating func stepKeyString(_ level: Level) -> Bool {
        let outcome = scan(keepingAtMost: Self.keyCap)
        switch outcome {
        case .needMore:
            return waitOrTruncate()
        case .invalid(let index, let message):
            return fail(.malformedRecord, message, at: index)
        case .complete(let end):
            var member = Member.other
            if !valueDropped {
                let key = input.withUnsafeBufferPointer { all in
                    try? JSONValue.parse(UnsafeBufferPointer(rebasing: all[position..<end]), maxDepth: 1)
                }
                guard case .string(let text) = key else {
                    return fail(.malformedRecord, "invalid key string in \(name(of: level))", at: position)
                }
                switch (level, text) {
                case (.top, "log"): member = .log
                case (.log, "entries"): member = .entries
                default: break
                }
            }
            consume(to: end)
            phase = .colon(level, member)
            return true
        }
    }

    private mutating func stepColon(_ level: Level, _ member: Member) -> Bool {
        guard let c = nextSignificantByte() else { return waitOrTruncate() }
        guard c == UInt8(ascii: ":") else {
            return fail(
                .malformedRecord, "expected ':' after a key in \(name(of: level)), found \(describe(position))",
                at: position)
        }
        consume(to: position + 1)
        phase = .value(level, member)
        return true
    }

    private mutating func stepValue(_ level: Level, _ member: Member) -> Bool {
        guard let c = nextSignificantByte() else { return waitOrTruncate() }
        switch member {
        case .log:
            guard c == UInt8(ascii: "{") else {
                return fail(.malformedRecord, "'log' is \(valueKind(c)), expected an object", at: position)
            }
            sawLog = true
            logHasEntries = false
            consume(to: position + 1)
            phase = .key(.log, first: true)
            return true
        case .entries:
            guard c == UInt8(ascii: "[") else {
                return fail(.malformedRecord, "'entries' is \(valueKind(c)), expected an array", at: position)
            }
            logHasEntries = true
            consume(to: position + 1)
            phase = .element(first: true)
            return true
        case .other:
            guard scanner.begin(c) else {
                return fail(
                    .malformedRecord, "expected a JSON value in \(name(of: level)), found \(describe(position))",
                    at: position)
            }
            consume(to: position + 1)
            phase = .skip(level)
            return true
        }
    }

    private mutating func stepSkip(_ level: Level) -> Bool {
        let outcome = scan()
        switch outcome {
        case .needMore:
            consume(to: cursor)
            return waitOrTruncate()
        case .invalid(let index, let message):
            return fail(.malformedRecord, message, at: index)
        case .complete(let end):
            consume(to: end)
            phase = .next(level)
            return true
        }
    }

    private mutating func stepNext(_ level: Level) -> Bool {
        guard let c = nextSignificantByte() else { return waitOrTruncate() }
        if c == UInt8(ascii: ",") {
            consume(to: position + 1)
            phase = .key(level, first: false)
            return true
        }
        if c == UInt8(ascii: "}") {
            consume(to: position + 1)
            return closeObject(level)
        }
        return fail(
            .malformedRecord, "expected ',' or '}' in \(name(of: level)), found \(describe(position))", at: position)
    }

    private mutating func closeObject(_ level: Level) -> Bool {
        switch level {
        case .top:
            guard sawLog else {
                phase = .failed(RecordError(.malformedRecord, "the document has no 'log' object: not a HAR document"))
                return true
            }
            phase = .after
        case .log:
            if !logHasEntries {
                emitFailure(
                    RecordError(.malformedRecord, "the 'log' object has no 'entries' array"), end: offset(of: position))
                restartCapture()
            }
            phase = .next(.top)
        }
        return true
    }

    private mutating func stepElement(first: Bool) -> Bool {
        guard let c = nextSignificantByte() else { return waitOrTruncate() }
        if first && c == UInt8(ascii: "]") {
            consume(to: position + 1)
            phase = .next(.log)
            return true
        }
        guard scanner.begin(c) else {
            let expected = first ? "an entry or ']'" : "an entry after ','"
            return fail(
                .malformedRecord, "expected \(expected) in 'entries', found \(describe(position))", at: position)
        }
        restartCapture()
        valueStart = offset(of: position)
        valueDropped = false
        cursor = position + 1
        phase = .entry
        return true
    }

    private mutating func stepEntry() -> Bool {
        let outcome = scan(keepingAtMost: entryCap)
        switch outcome {
        case .needMore:
            return waitOrTruncate()
        case .invalid(let index, let message):
            return fail(.malformedRecord, "entry \(entryIndex): \(message)", at: index, fromCaptureStart: true)
        case .complete(let end):
            let item: FramedItem
            let length = offset(of: end) - valueStart
            if valueDropped {
                consume(to: end)
                item = .failure(
                    FramingFailure(
                        offset: valueStart,
                        error: RecordError(
                            .limitExceeded,
                            "entry \(entryIndex) is \(length) bytes, longer than \(entryCap) (2 × maxBodyBytes + maxHeaderBytes)"
                        ),
                        excerpt: capture, bytes: length))
            } else {
                let parsed = input.withUnsafeBufferPointer { all in
                    Result { () throws(JSONValue.ParseError) in
                        try JSONValue.parse(
                            UnsafeBufferPointer(rebasing: all[position..<end]), maxDepth: limits.maxDepth)
                    }
                }
                consume(to: end)
                item = HAREntry.item(
                    parsed, index: entryIndex, offset: valueStart, length: length, excerpt: capture, limits: limits)
            }
            outbox.append(item)
            entryIndex += 1
            restartCapture()
            phase = .elementNext
            return true
        }
    }

    private mutating func stepElementNext() -> Bool {
        guard let c = nextSignificantByte() else { return waitOrTruncate() }
        if c == UInt8(ascii: ",") {
            consume(to: position + 1)
            phase = .element(first: false)
            return true
        }
        if c == UInt8(ascii: "]") {
            consume(to: position + 1)
            phase = .next(.log)
            return true
        }
        return fail(
            .malformedRecord, "expected ',' or ']' after entry \(entryIndex - 1), found \(describe(position))",
            at: position)
    }

    private mutating func stepAfter() -> Bool {
        guard nextSignificantByte() != nil else {
            guard finished else { return false }
            phase = .done
            return false
        }
        return fail(
            .malformedRecord, "unexpected content after the HAR document, found \(describe(position))", at: position)
    }

    private mutating func stepFailed(_ error: RecordError) -> Bool {
        consume(to: input.writerIndex)
        guard finished else { return false }
        emitFailure(error, end: offset(of: position))
        phase = .done
        return true
    }

    // MARK: - Failures

    /// A broken document: the pending failure starts at the error (or, with `fromCaptureStart`, where the capture
    /// began: the entry the error is in) and takes the rest of the input.
    private mutating func fail(
        _ code: RecordError.Code, _ message: String, at index: Int, fromCaptureStart: Bool = false
    ) -> Bool {
        let errorOffset = offset(of: index)
        if !fromCaptureStart {
            consume(to: max(position, min(index, input.writerIndex)))
            restartCapture()
        }
        phase = .failed(RecordError(code, message, location: .init(offset: errorOffset)))
        return true
    }

    /// Out of input: wait for more, or at the end of the input, report the unfinished document.
    private mutating func waitOrTruncate() -> Bool {
        guard finished else { return false }
        let message: String
        if case .entry = phase {
            message = "input ended inside entry \(entryIndex)"
        } else if !sawLog {
            message = "input ended inside the HAR document, before its 'log' object"
        } else {
            message = "input ended inside the HAR document, after \(entryIndex) entries"
        }
        phase = .failed(RecordError(.truncatedRecord, message))
        return true
    }

    /// A failure from `captureStart` to `end`.
    private mutating func emitFailure(_ error: RecordError, end: Int64) {
        outbox.append(
            .failure(FramingFailure(offset: captureStart, error: error, excerpt: capture, bytes: end - captureStart)))
    }

    // MARK: - Scanning

    private mutating func scan() -> ValueScanner.Outcome {
        input.withUnsafeBufferPointer { all in scanner.scan(all, from: &cursor, finished: finished) }
    }

    /// `scan()` of a value whose text is kept while it is at most `cap` bytes; past that it is dropped
    /// (`valueDropped`) and its bytes are consumed as they are scanned.
    private mutating func scan(keepingAtMost cap: Int) -> ValueScanner.Outcome {
        let outcome = scan()
        if !valueDropped && cursor - position > cap { valueDropped = true }
        if valueDropped { consume(to: cursor) }
        return outcome
    }

    private func name(of level: Level) -> String {
        switch level {
        case .top: "the top-level object"
        case .log: "'log'"
        }
    }

    private func describe(_ index: Int) -> String {
        guard index < input.writerIndex else { return "end of input" }
        return describeByte(input[index])
    }

    private func valueKind(_ first: UInt8) -> String {
        switch first {
        case UInt8(ascii: "{"): "an object"
        case UInt8(ascii: "["): "an array"
        case UInt8(ascii: "\""): "a string"
        case UInt8(ascii: "t"), UInt8(ascii: "f"): "a boolean"
        case UInt8(ascii: "n"): "null"
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): "a number"
        default: "not JSON (\(describeByte(first)))"
        }
    }
}

/// A byte for a message: itself when printable ASCII, else its hex value.
func describeByte(_ byte: UInt8) -> String {
    if byte >= 0x20 && byte < 0x7F { return "'\(Character(Unicode.Scalar(byte)))'" }
    let digits = Array("0123456789ABCDEF".utf8)
    return "byte 0x" + String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]], as: UTF8.self)
}

// MARK: - The scanner

/// Finds where one JSON value ends, across appends, without building it: strings (with their escapes) and bracket
/// nesting are followed, brackets must match, and outside strings only JSON's bytes may appear. It does not check the
/// rest of the grammar (commas, colons, number and literal spelling): whoever uses the value parses it.
struct ValueScanner {
    enum Outcome: Equatable {
        /// The value ends just before this index.
        case complete(Int)
        case needMore
        /// Not JSON at this index.
        case invalid(Int, String)
    }

    private var depth = 0
    /// Bit `d`: the container at depth `d` is an object. Kept for the first `maxDepth + 64` levels; deeper brackets
    /// are only counted (the parser of an entry refuses them anyway).
    private var kinds: [UInt64] = [0]
    private let trackedDepth: Int
    private var inString = false
    private var scalar = false

    init(maxDepth: Int) {
        trackedDepth = max(maxDepth, 0) + 64
    }

    /// Starts a value whose first byte is `c` (the scan goes on after it). False when no JSON value starts so.
    mutating func begin(_ c: UInt8) -> Bool {
        depth = 0
        inString = false
        scalar = false
        switch c {
        case UInt8(ascii: "{"), UInt8(ascii: "["): push(object: c == UInt8(ascii: "{"))
        case UInt8(ascii: "\""): inString = true
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "t"), UInt8(ascii: "f"),
            UInt8(ascii: "n"):
            scalar = true
        default: return false
        }
        return true
    }

    @inline(__always) private mutating func push(object: Bool) {
        if depth < trackedDepth {
            let word = depth >> 6
            if word == kinds.count { kinds.append(0) }
            let bit: UInt64 = 1 << UInt64(depth & 63)
            if object { kinds[word] |= bit } else { kinds[word] &= ~bit }
        }
        depth += 1
    }

    /// Whether `c` may appear in a number or literal.
    @inline(__always) private static func isScalarByte(_ c: UInt8) -> Bool {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
            UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "t"), UInt8(ascii: "r"), UInt8(ascii: "u"),
            UInt8(ascii: "f"), UInt8(ascii: "a"), UInt8(ascii: "l"), UInt8(ascii: "s"), UInt8(ascii: "n"):
            true
        default: false
        }
    }

    /// Scans `base[index..<count]`, moving `index` to where the next call must resume.
    mutating func scan(_ input: UnsafeBufferPointer<UInt8>, from index: inout Int, finished: Bool) -> Outcome {
        let count = input.count
        guard let base = input.baseAddress, index < count else {
            return scalar && finished ? .complete(index) : .needMore
        }
        var i = index
        defer { index = i }
        if scalar {
            while i < count && Self.isScalarByte(base[i]) { i += 1 }
            return i < count || finished ? .complete(i) : .needMore
        }
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        while true {
            if inString {
                // To the next '"' or '\\', 8 bytes at a time.
                while count - i >= 8 {
                    let word = UInt64(littleEndian: UnsafeRawPointer(base + i).loadUnaligned(as: UInt64.self))
                    let quotes = word ^ (ones &* 0x22)
                    let backslashes = word ^ (ones &* 0x5C)
                    let flagged = (((quotes &- ones) & ~quotes) | ((backslashes &- ones) & ~backslashes)) & highs
                    if flagged == 0 {
                        i += 8
                        continue
                    }
                    i += flagged.trailingZeroBitCount >> 3
                    break
                }
                while i < count && base[i] != UInt8(ascii: "\"") && base[i] != UInt8(ascii: "\\") { i += 1 }
                guard i < count else { return .needMore }
                if base[i] == UInt8(ascii: "\\") {
                    // The escaped byte must be there too; otherwise look at the backslash again with more input.
                    guard i + 1 < count else { return .needMore }
                    i += 2
                    continue
                }
                i += 1
                inString = false
                if depth == 0 { return .complete(i) }
                continue
            }
            guard i < count else { return .needMore }
            let c = base[i]
            switch c {
            case 0x20, 0x0A, 0x0D, 0x09, UInt8(ascii: ","), UInt8(ascii: ":"):
                i += 1
            case UInt8(ascii: "\""):
                inString = true
                i += 1
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                push(object: c == UInt8(ascii: "{"))
                i += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                depth -= 1
                if depth < trackedDepth {
                    let isObject = kinds[depth >> 6] >> UInt64(depth & 63) & 1 != 0
                    guard isObject == (c == UInt8(ascii: "}")) else {
                        depth += 1
                        return .invalid(
                            i, "expected \(isObject ? "',' or '}'" : "',' or ']'"), found \(describeByte(c))")
                    }
                }
                i += 1
                if depth == 0 { return .complete(i) }
            default:
                guard Self.isScalarByte(c) else { return .invalid(i, "expected JSON, found \(describeByte(c))") }
                i += 1
            }
        }
    }
}

// MARK: - Entries

/// Turns one parsed `log.entries[]` item into a record or a failure (see the file comment).
enum HAREntry {
    static func item(
        _ parsed: Result<JSONValue, JSONValue.ParseError>, index: Int, offset: Int64, length: Int64, excerpt: [UInt8],
        limits: Limits
    ) -> FramedItem {
        var url: String?
        var method: String?
        var status: Int?
        var headers: HeaderFields?

        func failure(_ code: RecordError.Code, _ message: String, location: Int64? = nil) -> FramedItem {
            .failure(
                FramingFailure(
                    offset: offset,
                    error: RecordError(
                        code, "entry \(index): \(message)", location: location.map { .init(offset: $0) }),
                    status: status, headers: headers, excerpt: excerpt, bytes: length, url: url, method: method))
        }

        let entry: JSONValue
        switch parsed {
        case .success(let value): entry = value
        case .failure(let error):
            return failure(
                error.kind == .tooDeep ? .limitExceeded : .malformedRecord,
                error.kind == .tooDeep
                    ? "\(error.message) (maxDepth)" : "not valid JSON: \(error.message)",
                location: offset + Int64(error.offset))
        }
        guard case .object = entry else { return failure(.malformedRecord, "is \(entry.typeName), expected an object") }

        if let request = entry["request"], case .object = request {
            url = request["url"]?.stringValue
            method = request["method"]?.stringValue
        }
        guard let response = entry["response"], case .object = response else {
            // A failed request (Chrome's and WebPageTest's `_error` entries, browsertime's): say what was recorded.
            if let recorded = entry["_error"]?.stringValue, entry["response"].map({ $0 == .null }) ?? true {
                return failure(.malformedRecord, "no response recorded: \(recorded)")
            }
            let found = entry["response"].map { "'response' is \($0.typeName)" } ?? "no 'response'"
            return failure(.malformedRecord, "\(found), expected an object")
        }
        let recordedError = response["_error"]?.stringValue ?? entry["_error"]?.stringValue
        guard let statusValue = response["status"] else {
            return failure(.malformedRecord, "the response has no 'status'")
        }
        guard let code = statusValue.integerValue else {
            let text = if case .number(let number) = statusValue { number } else { statusValue.typeName }
            return failure(.malformedRecord, "response.status is \(text), expected an integer")
        }
        if code == 0 {
            let reason = recordedError.map { ": \($0)" } ?? ""
            return failure(.malformedRecord, "no response recorded (status 0)\(reason)")
        }
        guard (100...999).contains(code) else {
            return failure(.malformedRecord, "response.status \(code) is not an HTTP status code (100-999)")
        }
        status = code

        var fields = HeaderFields()
        var headerNotes: [String] = []
        switch response["headers"] {
        case nil, .null?:
            break
        case .array(let items)?:
            for (position, item) in items.enumerated() {
                switch item {
                case .object:
                    guard let name = item["name"]?.stringValue else {
                        return failure(
                            .malformedRecord, "response.headers[\(position)] has no string 'name' and 'value'")
                    }
                    if name.hasPrefix(":") {
                        // An HTTP/2 or HTTP/3 pseudo-header (`:status`): the status is `status`, the rest is no field.
                        headerNotes.append("response.headers[\(position)]: pseudo-header '\(name)' dropped")
                        continue
                    }
                    if let value = item["value"]?.stringValue {
                        fields.append(name: name, value: value)
                    } else if case .array(let values)? = item["value"], let strings = stringElements(values) {
                        // Repeated fields as one list (Polly.js writes `set-cookie` so): one field per element.
                        for value in strings { fields.append(name: name, value: value) }
                        headerNotes.append(
                            "response.headers[\(position)]: '\(name)' has a list of \(strings.count) values, taken as "
                                + "as many fields")
                    } else {
                        return failure(
                            .malformedRecord, "response.headers[\(position)] has no string 'name' and 'value'")
                    }
                case .array(let pair):
                    guard pair.count == 2, let name = pair[0].stringValue, let value = pair[1].stringValue else {
                        return failure(
                            .malformedRecord, "response.headers[\(position)] is not a [name, value] pair of strings")
                    }
                    fields.append(name: name, value: value)
                default:
                    return failure(
                        .malformedRecord, "response.headers[\(position)] is \(item.typeName), expected {name, value}")
                }
            }
        case let other?:
            return failure(.malformedRecord, "response.headers is \(other.typeName), expected an array")
        }

        var warnings = headerNotes
        if let recordedError { warnings.append("the exporter recorded an error: \(recordedError)") }
        var body: [UInt8] = []
        switch response["content"] {
        case nil, .null?:
            headers = fields
        case let content?:
            guard case .object = content else {
                headers = fields
                return failure(.malformedRecord, "response.content is \(content.typeName), expected an object")
            }
            if fields.last("Content-Type") == nil, let mimeType = content["mimeType"]?.stringValue, !mimeType.isEmpty {
                fields.append(name: "Content-Type", value: mimeType)
            }
            headers = fields
            let text: String?
            switch content["text"] {
            case nil, .null?: text = nil
            case .string(let value)?: text = value
            case let other?:
                return failure(.malformedRecord, "response.content.text is \(other.typeName), expected a string")
            }
            var base64 = false
            switch content["encoding"] {
            case nil, .null?: break
            case .string(let encoding)?:
                if asciiCaseInsensitiveEquals(encoding, "base64") {
                    base64 = true
                } else if !encoding.isEmpty {
                    warnings.append("unknown content.encoding '\(encoding)': the text is taken as it is")
                }
            case let other?:
                return failure(.malformedRecord, "response.content.encoding is \(other.typeName), expected a string")
            }
            if method == "HEAD" {
                if let text, !text.isEmpty {
                    warnings.append("a response to HEAD has no body: the recorded text is ignored")
                }
            } else if let text {
                if base64 {
                    // Refused before decoding: a body over the limit is not made only to be dropped.
                    guard text.utf8.count / 4 * 3 <= limits.maxBodyBytes else {
                        return failure(
                            .limitExceeded,
                            "base64 body of about \(text.utf8.count / 4 * 3) bytes exceeds \(limits.maxBodyBytes) (maxBodyBytes)"
                        )
                    }
                    guard let decoded = BaseDecoding.base64(text, ignoringWhitespace: true) else {
                        return failure(.malformedRecord, "response.content.text is not valid base64")
                    }
                    body = decoded
                } else {
                    guard text.utf8.count <= limits.maxBodyBytes else {
                        return failure(
                            .limitExceeded,
                            "body of \(text.utf8.count) bytes exceeds \(limits.maxBodyBytes) (maxBodyBytes)")
                    }
                    body = Array(text.utf8)
                }
            } else if let size = content["size"]?.integerValue, size > 0 {
                warnings.append("no body recorded (content.size \(size))")
            }
        }
        if body.count > limits.maxBodyBytes {
            return failure(.limitExceeded, "body of \(body.count) bytes exceeds \(limits.maxBodyBytes) (maxBodyBytes)")
        }
        return .record(
            ResponseRecord(
                offset: offset, status: code, headers: fields, body: body, url: url, method: method,
                contentDecoded: true, warnings: warnings))
    }
}

/// The elements of a JSON array when every one is a string.
private func stringElements(_ values: [JSONValue]) -> [String]? {
    var result: [String] = []
    for value in values {
        guard let text = value.stringValue else { return nil }
        result.append(text)
    }
    return result
}
