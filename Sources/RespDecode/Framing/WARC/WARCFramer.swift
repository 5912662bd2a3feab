/*
 Frames WARC files (WARC/1.0 and 1.1; 0.17 and 0.18 are read as warcio reads them): plain, gzip per record
 (`.warc.gz`, WARC 1.1 annex D) or gzip as a whole, read as a stream (docs/framings.md#warc).

 A record is a version line, header fields, an empty line, a block of exactly `Content-Length` bytes, then CRLF CRLF:

     WARC/1.1␍␊WARC-Type: response␍␊…␍␊Content-Length: 75␍␊␍␊
     HTTP/1.1 200 OK␍␊Content-Type: application/json␍␊Content-Length: 13␍␊␍␊{"foo":"bar"}   (75 bytes)
     ␍␊␍␊

 Records of the chosen types (`response` and `resource` by default) become responses (WARCHTTPBlock.swift says how);
 others are counted in `skippedRecords` and give nothing. A record that cannot be framed is always a failure item,
 whatever its type:

     Content-Length missing, invalid, negative or overflowing ... malformedRecord, then the next line that starts with
                                                                  `WARC/`
     header section over maxHeaderBytes ......................... limitExceeded, then the next `WARC/` line
     block over maxBodyBytes + maxHeaderBytes ................... limitExceeded; the block is skipped, never buffered,
                                                                  but read as it passes (OverLimitBlock.swift): its
                                                                  line has the status, fields, digest, body size and
                                                                  sniffed type
                                                                  (docs/output.md#records-over-the-body-limit);
                                                                  in gzip input a member inside it whose data starts
                                                                  with `WARC/` ends it (malformedRecord for a type not
                                                                  chosen), so a wrong length cannot swallow the file
     block followed by two line ends, not both CRLF (LF LF) ..... read, with a warning
     block followed by another short run of CR and LF (none, one  read, with a warning naming the run ("record end
     CRLF, CR CR LF CR CR LF…), then `WARC/` or the end of input  repaired: …"; a Content-Length that counts the
                                                                  separator ends the block in line ends: the warning
                                                                  says it may); the block is as Content-Length says
     block followed by anything else ............................ malformedRecord (the Content-Length is wrong), then
                                                                  the next `WARC/` line after the header: a length
                                                                  too long must not swallow the records it overlaps
     input ends inside a record (or inside its gzip member) ..... truncatedRecord (then the same search, so records
                                                                  inside a block whose length overshoots are kept)

 Header lines ending CR CR LF (a CRLF file converted once more) are read as CRLF, with a warning. In gzip input, a
 record in its own member whose Content-Length runs 1 to 4 bytes (a separator counted, not written) past the member's
 end, where a member starting with `WARC/` or the end of the input follows, ends with its member, with a warning.
 Bare LF line ends are accepted in the header and after the block; blank lines between records are filler, and so
 are NUL bytes and white space at the end of the input (padding, up to 64 KiB; elsewhere they are a failure, and a
 record right after them is kept). In gzip input a member whose data starts with `WARC/` is also a place where the
 search for the next record stops.

 Plain input skipping an oversize block only counts bytes: a `WARC/` line inside a block is legitimate data (a WARC
 archived in a WARC), and plain records are not cut into members that would say where a record may start. So an
 oversize length beyond the input is one truncatedRecord whose `bytes` cover the rest of the input (records inside
 it are not framed: known limit, not silent).

 Mixed input is read whole: bytes between gzip members that do not start with 1F 8B are framed as plain data (their
 records' offsets are input offsets), and plain input that has a gzip member header (1F 8B 08) where a record would
 start is read as gzip members from there. Limit: after a switch to gzip, a 1F 8B 08 inside a later plain record (a
 gzip-encoded body) is taken for a member; that record then fails, and framing resumes at the next `WARC/` line.

 ARC files (IA ARC v1 and v2, plain or `.arc.gz`) are a second record grammar of the same framer, as warcio reads
 them: a `filedesc://` record where a record starts makes the input ARC, and from then on a record is an ARC header
 line, its Archive-length bytes and a line feed; the grammar is in Framing/ARC/ARCRecord.swift and its steps at the
 end of this file. The `filedesc://` record is counted in `skippedRecords`, never yielded.

 Compressed input is recognised by its first bytes (1F 8B) and inflated member by member (GzipMembers.swift beside this
 file); zstd and LZ4 frames (`.warc.zst`, `.warc.lz4`) likewise, a frame standing for a member (CompressedMembers.swift).
 A record's `offset` is then the compressed offset of the gzip member it starts in. A member that holds more than
 one record (gzip as a whole, which warcio refuses) is read all the same; a record that does not start its member
 gets its offset in the decompressed stream, and a warning saying so. A corrupt member is one malformedRecord item
 naming the member and zlib's message, and reading resumes at the next member header, so one bad member costs the
 record it holds. A record that ends where the inflated data ends, inside a member not finished yet, is held until
 zlib has checked that member: if the member turns out corrupt or cut short, the record becomes that failure (a
 `.warc.gz` cut anywhere gives an error item, never a silent end).

 A failure's `bytes` counts the bytes it stands for in the stream framed: inflated bytes, for gzip input.

 `length` (docs/output.md#record-extents): plain input, a record's version line (an ARC record's header line) to the
 end of its block (not the separator, as warcio and cdxj-indexer count it), a failure's `bytes`. Compressed input: for
 an item that starts its own gzip member (or zstd/LZ4 frame), from that member's start to the end of the member it
 ends in, when only line ends follow it there (the item is held until that member ends); no length otherwise (gzip as
 a whole, plain runs between members).

 Memory: the framer holds the record being framed (bounded by the limits); unparsed input stays in the caller's
 FramerInput. Compressed input is inflated only as the framer asks for it, into the framer's own buffer of the
 inflated stream (at most a record and 32 KiB more). A framer holds a reference to its gzip state: do not copy one
 mid-stream.
 */
import Glibc

/// Frames WARC records. See the file comment for the rules.
public struct WARCFramer: RecordFramer {
    /// The record types that give responses unless told otherwise.
    public static let defaultTypes: Set<String> = ["response", "resource"]

    private let limits: Limits
    /// Lower-cased; `nil`: every type.
    private let types: Set<String>?
    private let verifyDigests: Bool

    /// Records read and not yielded, by (lower-cased) WARC-Type.
    public private(set) var skippedRecords: [String: Int] = [:]

    /// `gzip`: compressed input, gzip members or zstd or LZ4 frames (`inflater` says which).
    private enum Mode { case undecided, plain, gzip }
    private var mode = Mode.undecided
    private var inflater: MemberInflater?
    /// Resynchronising: the last call stopped at `position` for more input, so the byte there is yet to be checked.
    private var resyncResumed = false

    /// The stream framed; unparsed: `input[position...]`, its offsets stream offsets. Plain input: the caller's input,
    /// lent for each step (swapped in and back, which costs nothing), empty between calls. gzip: the framer's own
    /// buffer of inflated bytes, filled from the caller's compressed input (`pump`).
    private var input = FramerInput()
    /// The caller's input has ended (`decodeLast`).
    private var inputFinished = false
    /// No more bytes will come into `input`.
    private var dataEnded = false

    private var state = State.start
    private var outbox = FramedItemQueue()

    /// The record being framed.
    private var current: Current?
    /// Bytes past `position` already searched for the end of the header section.
    private var scanned = 0
    /// While skipping or resynchronising: the failure the skipped bytes belong to, and its stream offset.
    private var failure: FramingFailure?
    private var failureStart: Int64 = 0
    /// A selected record's block over the limits, read as it is skipped (OverLimitBlock.swift): what its
    /// limitExceeded line says of it.
    private var overLimit: OverLimitBlock?

    // gzip: where members start in the inflated stream; whether one is being inflated; a finished item that waits for
    // its member's end; the member the input ended in.
    // A boundary with `plain` starts a run of bytes between members that are not gzip (passed through as they are):
    // `member` is then the input offset of its first byte.
    private var boundaries: [(start: Int64, member: Int64, plain: Bool)] = []
    private var memberOpen = false
    private var held: Held?
    private var truncatedMember: Int64?
    /// Stream offset where the last item ended: a record starts its member only if the member starts after this.
    private var lastItemEnd: Int64 = 0
    /// The item being framed starts its own gzip member: its `length` is then its member's (or members').
    private var itemStartsMember = false
    /// Where recent gzip members ended: (stream offset, compressed offset), oldest first; for items' `length`.
    private var memberEnds: [(stream: Int64, end: Int64)] = []
    /// The held item waits for the end of its member to learn its `length`.
    private var heldForLength = false

    /// ARC input (the ARC grammar, Framing/ARC/ARCRecord.swift; the steps at the end of this file): the version of
    /// the file's `filedesc://` record, once one started; `nil` for WARC.
    private var arcVersion: ARCVersion?
    /// ARC: whether the file's first record was followed by its line feed; if it was, a record not followed by one
    /// has a wrong length (a header line right after it is not believed); `nil` until known.
    private var arcSeparated: Bool?

    private enum State {
        case start
        case header
        /// The whole record (header, block, the CRLF CRLF after it) is awaited at `position`.
        case block(headerLength: Int, blockLength: Int)
        /// The block is skipped as it arrives (over the limit, or of a type not chosen); the header is consumed.
        case skip(remaining: Int)
        /// After a skipped block: the CRLF CRLF.
        case trailer
        /// Skipping to the next line that starts with `WARC/` (with `checkHere`, one may start at `position`).
        case resync(checkHere: Bool)
    }

    private struct Current {
        /// Stream offset of the version line.
        var start: Int64
        /// The offset reported: `start`, or the compressed offset of the gzip member it starts.
        var offset: Int64
        var warnings: [String]
        var header: WARCHeader?
        /// The header's bytes, up to the error-body cap, once they are consumed.
        var headExcerpt: [UInt8] = []
        var selected = false
        /// An ARC record (Framing/ARC), and its header line once read.
        var isARC = false
        var arc: ARCHeader?
    }

    /// A finished item waiting for the end of its gzip member.
    private enum Held {
        case item(FramedItem, bytes: Int64)
        case skip(type: String, failure: FramingFailure)
    }

    /// Creates a framer.
    /// - Parameters:
    ///   - limits: `maxHeaderBytes`, `maxBodyBytes` and `maxErrorBodyBytes` apply.
    ///   - types: the WARC-Types that give responses (case-insensitive); `nil` for every type.
    ///   - verifyDigests: parse `WARC-Payload-Digest` and leave it on the record as `pendingDigest`, for the worker
    ///   that writes the line to check (``FramedItem/checkingPayloadDigest()``); `false` does no digest work at all.
    public init(limits: Limits = Limits(), types: Set<String>? = WARCFramer.defaultTypes, verifyDigests: Bool = true) {
        self.limits = limits
        self.types = types.map { Set($0.map { $0.lowercased() }) }
        self.verifyDigests = verifyDigests
    }

    // MARK: - Member spans (Runtime/MemberSpans.swift)

    /// Records reported at an offset in the decompressed stream (they do not start their gzip member): such offsets
    /// depend on everything inflated before, which a framer started in the middle of a file cannot know.
    private(set) var decompressedOffsetsReported = 0
    /// Added to an offset in the decompressed stream when one is reported (``decompressedOffsetsReported``): a framer
    /// started at a member boundary in the middle of a file is told how far the decompressed stream had come there.
    var decompressedOffsetCorrection: Int64 = 0
    /// The input turned out to be ARC (its `filedesc://` record was read).
    var isARC: Bool { arcVersion != nil }
    /// Where the decompressed stream framed so far ends (compressed input), before ``decompressedOffsetCorrection``.
    var streamEnd: Int64 { input.offset(of: input.writerIndex) }

    /// Compressed input only: whether the framer stands between records at the end of a gzip member, with every
    /// inflated byte framed and nothing held, in the state a new framer starts in (not ARC). A new framer given the
    /// rest of the input from here frames it as this one would, offsets in the decompressed stream aside
    /// (docs/framings.md#parallel-inflate). The caller checks that its compressed input is used up too.
    var isAtMemberBoundary: Bool {
        guard mode == .gzip, case .start = state, let inflater, inflater.isBetweenMembers else { return false }
        return current == nil && failure == nil && held == nil && !heldForLength && outbox.isEmpty && available == 0
            && !memberOpen && truncatedMember == nil && arcVersion == nil && !dataEnded && overLimit == nil
    }

    public mutating func decode(buffer: inout FramerInput) -> FramedItem? {
        while true {
            if let item = outbox.pop() { return item }
            switch mode {
            case .undecided:
                guard decideMode(buffer) else { return nil }
            case .plain:
                swap(&input, &buffer)
                let progressed = step()
                swap(&input, &buffer)
                if mode == .gzip {
                    // `switchToGzip`: the rest of the caller's input is gzip members, inflated into a stream of our
                    // own whose offsets go on from here.
                    input = FramerInput(startingAt: buffer.readerOffset)
                }
                if !progressed { return nil }
            case .gzip:
                if step() || pump(&buffer) { continue }
                return nil
            }
        }
    }

    public mutating func decodeLast(buffer: inout FramerInput, seenEOF: Bool) -> FramedItem? {
        if seenEOF {
            inputFinished = true
            if mode == .plain { dataEnded = true }
        }
        // No more input is coming for a cut gzip member to wait for (after a stop, too, where the input has not
        // ended): it goes to zlib, so what is whole behind it still gets its lines.
        buffer.readsWithoutWaiting = false
        return decode(buffer: &buffer)
    }

    /// The input is read as gzip members from its first byte, whatever that byte is (``assumeGzipMembers()``).
    private var gzipAssumed = false

    /// Reads the input as gzip members (and plain runs between them) from its first byte: for a framer that takes
    /// over a `.warc.gz` at a member boundary, where one framer reading the whole file would still be reading gzip
    /// members, also when plain bytes follow (Runtime/MemberSpans.swift).
    mutating func assumeGzipMembers() { gzipAssumed = true }

    /// Plain, gzip, zstd or LZ4, from the first bytes' magic number (fewer at the end of input: plain).
    private mutating func decideMode(_ buffer: FramerInput) -> Bool {
        let detected =
            gzipAssumed ? .gzip : MemberInflater.detect(buffer, at: buffer.readerIndex, ended: inputFinished)
        if detected == .undecided { return false }
        if let layer = MemberInflater(detected) {
            mode = .gzip
            inflater = layer
            input = FramerInput(startingAt: buffer.readerOffset)
        } else {
            mode = .plain
            dataEnded = inputFinished
        }
        return true
    }

    // MARK: - Input

    private var position: Int {
        get { input.readerIndex }
        set { input.readerIndex = newValue }
    }
    private var available: Int { input.readableBytes }

    /// Bytes held in the inflated stream (gzip input): what tests watch to see that a block is skipped, not buffered.
    var bufferedByteCount: Int { input.writerIndex }
    private var currentOffset: Int64 { input.readerOffset }

    private mutating func consume(_ n: Int) { position += n }

    /// Index of the first `byte` in `input[from...]`.
    private func find(_ byte: UInt8, from: Int) -> Int? { input.firstIndex(of: byte, from: from) }

    /// A location in the input, for error messages: only where the stream is the input (plain files).
    private func location(_ offset: Int64) -> RecordError.Location? {
        mode == .plain ? RecordError.Location(offset: offset) : nil
    }

    /// `message`, naming the gzip member (or zstd or LZ4 frame) the input ended in, if it did.
    private func endMessage(_ message: String) -> String {
        guard let member = truncatedMember else { return message }
        return message + " (the input ends inside the \(memberNoun) at \(member))"
    }

    /// What a member of the compressed input is called in messages.
    private var memberNoun: String { inflater?.noun ?? "gzip member" }

    /// The most padding bytes taken as filler at the end of the input; more is a failure (so it is not buffered).
    private static let maxPadding = 64 * 1024

    private func isPadding(_ byte: UInt8) -> Bool {
        byte == 0 || byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A
    }

    /// Plain input reached a gzip member header where a record would start: the rest of the input is read as gzip
    /// members (and plain runs between them); stream offsets go on from here.
    /// (The caller's input is lent to this step: `decode` gives the inflated stream its own buffer when the step
    /// returns.)
    private mutating func switchToGzip() {
        inflater = .gzip(GzipMembers())
        mode = .gzip
        dataEnded = false
    }

    // MARK: - Steps

    /// Advances the state machine once. Returns `false` when nothing can be done without more data.
    private mutating func step() -> Bool {
        switch state {
        case .start: return stepStart()
        case .header: return stepHeader()
        case .block(let headerLength, let blockLength):
            return stepBlock(headerLength: headerLength, blockLength: blockLength)
        case .skip(let remaining): return stepSkip(remaining)
        case .trailer: return stepTrailer()
        case .resync(let checkHere): return stepResync(checkHere: checkHere)
        }
    }

    private mutating func stepStart() -> Bool {
        while position < input.writerIndex && (input[position] == 0x0D || input[position] == 0x0A) { position += 1 }
        guard available > 0 else { return false }
        // More than line ends after the held item, in its member: that member is not the item's alone.
        if heldForLength { releaseHeld() }
        if mode == .plain && input[position] == 0x1F {
            // gzip members after plain records: inflated from here on.
            if available < 3 && !dataEnded { return false }
            if available >= 3 && input[position + 1] == 0x8B && input[position + 2] == 0x08 {
                switchToGzip()
                return true
            }
        }
        // NUL bytes and white space: filler when nothing else follows them (padding at the end of a file).
        var padding = 0
        if isPadding(input[position]) {
            var end = position
            while end < input.writerIndex && end - position <= Self.maxPadding && isPadding(input[end]) { end += 1 }
            if end == input.writerIndex && end - position <= Self.maxPadding {
                guard dataEnded else { return false }
                consume(end - position)
                return false
            }
            padding = end - position
        }
        if input.starts(with: "WARC/", at: position) {
            let start = currentOffset
            let (offset, warning) = reportedOffset(at: start)
            itemStartsMember = startsOwnMember(at: start)
            current = Current(start: start, offset: offset, warnings: warning.map { [$0] } ?? [])
            scanned = 0
            state = .header
            return true
        }
        if input.isPrefix(of: "WARC/", at: position) {
            guard dataEnded else { return false }
            beginFailure(
                RecordError(.truncatedRecord, endMessage("input ended inside a version line")), at: currentOffset)
            state = .resync(checkHere: false)
            return true
        }
        // ARC: a `filedesc://` record starts an ARC file (however the input arrives: cut after "file", it is still
        // one); after it, every record is an ARC header line.
        if input.isPrefix(of: "filedesc://", at: position) && !dataEnded { return false }
        if arcVersion != nil || input.starts(with: "filedesc://", at: position)
            || input.isPrefix(of: "filedesc://", at: position)
        {
            startARCRecord()
            return true
        }
        let message =
            "expected a version line starting with 'WARC/', found \(quotedMismatch(input, at: position, expecting: "WARC/"))"
        beginFailure(RecordError(.malformedRecord, message, location: location(currentOffset)), at: currentOffset)
        if padding > 0 {
            // A record right after the padding is kept.
            skipIntoFailure(padding)
            state = .resync(checkHere: true)
        } else {
            state = .resync(checkHere: false)
        }
        return true
    }

    private mutating func stepHeader() -> Bool {
        if current?.isARC == true { return stepARCHeader() }
        let found = findHeaderEnd()
        if (found ?? position) - position > limits.maxHeaderBytes || (found == nil && available > limits.maxHeaderBytes)
        {
            beginFailure(
                fromCurrent(
                    .limitExceeded, "WARC header section longer than \(limits.maxHeaderBytes) bytes (maxHeaderBytes)"))
            state = .resync(checkHere: false)
            return true
        }
        guard let end = found else {
            guard dataEnded else { return false }
            beginFailure(fromCurrent(.truncatedRecord, endMessage("input ended inside the WARC header")))
            state = .resync(checkHere: false)
            return true
        }
        let parsed = input.withUnsafeBufferPointer {
            WARCHeader.parse(UnsafeBufferPointer(rebasing: $0[position..<end]))
        }
        let header: WARCHeader
        switch parsed {
        case .failure(let problem):
            beginFailure(
                fromCurrent(
                    .malformedRecord, "WARC header: \(problem.message)", at: currentOffset + Int64(problem.offset)))
            state = .resync(checkHere: false)
            return true
        case .success(let value):
            header = value
        }
        current?.header = header
        let headerLength = end - position
        let blockLength: Int
        switch header.contentLength {
        case .failure(let problem):
            // The block cannot be found: the failure runs to the next version line after the header.
            beginFailure(fromCurrent(problem.code, problem.message, at: currentOffset))
            skipIntoFailure(headerLength)
            state = .resync(checkHere: true)
            return true
        case .success(let length):
            blockLength = length
        }
        let type = header.type.map { $0.lowercased() }
        current?.selected = type.map { types?.contains($0) ?? true } ?? true
        enterBlock(headerLength: headerLength, blockLength: blockLength, noun: "block")
        return true
    }

    /// The header is read (`headerLength` bytes at `position`): awaits the block, or skips it unbuffered when it is
    /// over the limits (a limitExceeded failure for a record that would give a line; `noun` names it there).
    private mutating func enterBlock(headerLength: Int, blockLength: Int, noun: String) {
        let cap = limits.maxBodyBytes.addingReportingOverflow(limits.maxHeaderBytes)
        guard !cap.overflow && blockLength > cap.partialValue else {
            state = .block(headerLength: headerLength, blockLength: blockLength)
            return
        }
        let headExcerpt = excerpt(from: position, count: headerLength)
        current?.headExcerpt = headExcerpt
        overLimit = nil
        if current?.selected == true {
            // The block streams through the digest and sniffing as it is skipped: the line says what a record's
            // line says, but for the decoded value (docs/reliability.md#limits).
            if let record = current, let header = record.header {
                overLimit = OverLimitBlock(
                    header: header, warnings: record.warnings, limits: limits, verifyDigests: verifyDigests)
            } else if let record = current, let arc = record.arc {
                overLimit = OverLimitBlock(arc: arc, warnings: record.warnings, limits: limits)
            }
            beginFailure(
                fromCurrent(
                    .limitExceeded,
                    "\(noun) of \(blockLength) bytes exceeds \(limits.maxBodyBytes) + \(limits.maxHeaderBytes) bytes (maxBodyBytes + maxHeaderBytes): skipped, the body not decoded"
                ))
            skipIntoFailure(headerLength)
        } else {
            consume(headerLength)
        }
        state = .skip(remaining: blockLength)
    }

    private mutating func stepBlock(headerLength: Int, blockLength: Int) -> Bool {
        if current?.isARC == true { return stepARCBlock(headerLength: headerLength, blockLength: blockLength) }
        let blockStart = position + headerLength
        let blockEnd = blockStart + blockLength
        // Member starts inside the header cannot start a record; inside the block they can, if its length is wrong.
        // Many tiny members inside a block are only kept up to a bound.
        let pruneTo = boundaries.count > 1024 ? blockEnd : blockStart
        pruneBoundaries(upTo: input.offset(of: pruneTo))
        // A record in its own gzip member whose Content-Length runs a separator's length (at most 4 bytes) past the
        // member's end, where the next member starts a record: the block ends with its member (warcio reads it so).
        if itemStartsMember, let boundary = boundaries.first(where: { $0.start > input.offset(of: blockStart) }) {
            let memberEnd = Int(boundary.start - input.baseOffset)
            if !boundary.plain && memberEnd < blockEnd && blockEnd - memberEnd <= 4 && memberEnd < input.writerIndex {
                if input.starts(with: "WARC/", at: memberEnd) {
                    current?.warnings.append(
                        "Content-Length (\(blockLength)) runs \(blockEnd - memberEnd) bytes past the end of the record's gzip member: the block ends with the member"
                    )
                    state = .block(headerLength: headerLength, blockLength: memberEnd - blockStart)
                    return true
                }
                if input.isPrefix(of: "WARC/", at: memberEnd) && !dataEnded { return false }
            }
        }
        guard blockEnd <= input.writerIndex else {
            guard dataEnded else { return false }
            let missing = blockEnd - input.writerIndex
            if itemStartsMember && missing <= 4 && truncatedMember == nil && !(boundaries.last?.plain ?? true) {
                // The same at the end of the input, after the last member.
                current?.warnings.append(
                    "Content-Length (\(blockLength)) runs \(missing) bytes past the end of the record's gzip member: the block ends with the member"
                )
                state = .block(headerLength: headerLength, blockLength: blockLength - missing)
                return true
            }
            beginFailure(
                fromCurrent(
                    .truncatedRecord,
                    endMessage(
                        "input ended \(missing) bytes before the end of the block (Content-Length \(blockLength))")))
            skipIntoFailure(headerLength)
            state = .resync(checkHere: true)
            return true
        }
        switch trailer(at: blockEnd) {
        case .needMore:
            guard dataEnded else { return false }
            // The block is whole: its length is believed, and the rest of the input is this failure.
            beginFailure(
                fromCurrent(.truncatedRecord, endMessage("input ended before the CRLF CRLF that ends the record")))
            skipIntoFailure(available)
            finishFailure()
            return true
        case .bad:
            beginFailure(
                fromCurrent(
                    .malformedRecord,
                    "the block is not followed by CRLF CRLF: its Content-Length (\(blockLength)) is probably wrong",
                    at: input.offset(of: blockEnd)))
            skipIntoFailure(headerLength)
            state = .resync(checkHere: true)
            return true
        case .ok(let trailerLength, let warning):
            if let warning { current?.warnings.append(warning) }
            let total = headerLength + blockLength + trailerLength
            completeRecord(blockStart: blockStart, blockEnd: blockEnd, total: total)
            return true
        }
    }

    /// A whole record with its CRLF CRLF is at `position`: its item (or its count), then the next record.
    private mutating func completeRecord(blockStart: Int, blockEnd: Int, total: Int) {
        guard let record = current, let header = record.header else { return }
        // Plain input: the record's extent is its header and block, without the separator (as warcio and
        // cdxj-indexer count it); a failure's, the bytes it stands for.
        var extent = Int64(blockEnd - position)
        let result: Held
        if let type = header.type, !record.selected {
            result = .skip(type: type.lowercased(), failure: fromCurrent(.malformedRecord, ""))
        } else {
            let built: Result<ResponseRecord, WARCBlock.Problem>
            if header.type == nil {
                built = .failure(WARCBlock.Problem(.malformedRecord, "the WARC header has no WARC-Type"))
            } else {
                // Plain input: the body is lent by the caller's buffer, not copied. (Not by the inflated stream's
                // buffer: each member's body would hold a block of its own, counted whole by the in-flight budget;
                // bench/crawl's peers' job took 1.66x the wall time.)
                let lender = mode == .plain ? input : nil
                built = input.withUnsafeBufferPointer { all in
                    WARCBlock.response(
                        header: header, block: UnsafeBufferPointer(rebasing: all[blockStart..<blockEnd]),
                        offset: record.offset, warnings: record.warnings, limits: limits, verifyDigests: verifyDigests,
                        lend: lender.map { lender in
                            { lender.lend(blockStart + $0.lowerBound..<blockStart + $0.upperBound) }
                        })
                }
            }
            switch built {
            case .success(let response):
                result = .item(.record(response), bytes: Int64(total))
            case .failure(let problem):
                var failure = fromCurrent(
                    problem.code, problem.message, status: problem.status, headers: problem.headers)
                failure.excerpt = excerpt(from: position, count: total)
                failure.bytes = Int64(total)
                if problem.code == .limitExceeded {
                    let reader = OverLimitBlock(
                        header: header, warnings: record.warnings, limits: limits, verifyDigests: verifyDigests)
                    describeHeldOverLimit(&failure, reader: reader, blockStart: blockStart, blockEnd: blockEnd)
                }
                extent = Int64(total)
                result = .item(.failure(failure), bytes: Int64(total))
            }
        }
        consume(total)
        endItem()
        emitOrHold(result, plainLength: extent)
    }

    private mutating func stepSkip(_ remaining: Int) -> Bool {
        pruneBoundaries(upTo: currentOffset)
        if remaining == 0 {
            state = .trailer
            return true
        }
        guard available > 0 else {
            guard dataEnded else { return false }
            let message = endMessage("input ended \(remaining) bytes before the end of the block")
            if let pending = failure {
                // Over the limit and cut short: the truncation is the failure.
                failure?.error = RecordError(.truncatedRecord, message + "; " + pending.error.message)
                applyOverLimit(complete: false)
            } else {
                beginFailure(fromCurrent(.truncatedRecord, message), excerpt: current?.headExcerpt ?? [])
            }
            finishFailure()
            return true
        }
        var n = min(available, remaining)
        // gzip: a member inside the block whose data starts with `WARC/` is the next record (an oversize length must
        // not swallow the records after it, one member each). Not for plain input (see the file comment).
        // (The header is consumed: a member at `position` starts after the record.)
        for boundary in boundaries where boundary.start >= currentOffset {
            let index = Int(boundary.start - input.baseOffset)
            guard index < position + n else { break }
            if input.starts(with: "WARC/", at: index) || arcRecordStart(at: index) == .yes {
                skipIntoFailure(index - position)
                let message =
                    "the block is cut short by a new record at \(boundary.member)\(boundary.plain ? "" : " (a \(memberNoun))"): "
                    + "its Content-Length is probably wrong"
                if failure != nil {
                    failure!.error.message += "; " + message
                    applyOverLimit(complete: false)
                } else {
                    beginFailure(fromCurrent(.malformedRecord, message), excerpt: current?.headExcerpt ?? [])
                }
                finishFailure()
                return true
            }
            if !dataEnded && (input.isPrefix(of: "WARC/", at: index) || arcRecordStart(at: index) == .undecided) {
                // Undecided until more of the member is inflated.
                n = index - position
                break
            }
        }
        guard n > 0 else { return false }
        if let overLimit {
            input.withUnsafeBufferPointer { overLimit.feed(UnsafeBufferPointer(rebasing: $0[position..<position + n])) }
        }
        skipIntoFailure(n)
        state = .skip(remaining: remaining - n)
        return true
    }

    private mutating func stepTrailer() -> Bool {
        if current?.isARC == true { return stepARCTrailer() }
        switch trailer(at: position) {
        case .ok(let length, _):
            skipIntoFailure(length)
            if failure != nil {
                applyOverLimit(complete: true)
                finishFailure()
            } else if let record = current, let type = record.header?.type {
                let template = fromCurrent(.malformedRecord, "")
                endItem()
                emitOrHold(.skip(type: type.lowercased(), failure: template))
            } else {
                endItem()
            }
            return true
        case .bad:
            if failure == nil {
                beginFailure(
                    fromCurrent(
                        .malformedRecord,
                        "the block is not followed by CRLF CRLF: its Content-Length is probably wrong",
                        at: currentOffset),
                    excerpt: current?.headExcerpt ?? [])
            }
            applyOverLimit(complete: false)
            state = .resync(checkHere: true)
            return true
        case .needMore:
            guard dataEnded else { return false }
            if failure == nil {
                beginFailure(
                    fromCurrent(.truncatedRecord, endMessage("input ended before the CRLF CRLF that ends the record")),
                    excerpt: current?.headExcerpt ?? [])
            }
            applyOverLimit(complete: false)
            skipIntoFailure(available)
            finishFailure()
            return true
        }
    }

    private enum Trailer {
        /// The separator's length, and a warning when it was repaired.
        case ok(Int, warning: String?)
        case bad, needMore
    }

    /// The longest run of line-end bytes taken for a repaired separator.
    private static let maxSeparator = 16

    /// The separator after a block that ends at `index`: two line ends (CRLF, or bare LF: with a warning unless both
    /// are CRLF); or, repaired with a warning, any other short run of CR and LF bytes (none at all, one CRLF, CR CR
    /// LF…) followed by the next record's version line or by the end of the input.
    private func trailer(at index: Int) -> Trailer {
        var i = index
        var lineEnds = 0
        var allCRLF = true
        while lineEnds < 2 && i < input.writerIndex {
            if input[i] == 0x0A {
                i += 1
                allCRLF = false
            } else if input[i] == 0x0D && i + 1 < input.writerIndex && input[i + 1] == 0x0A {
                i += 2
            } else {
                break
            }
            lineEnds += 1
        }
        if lineEnds == 2 {
            return .ok(i - index, warning: allCRLF ? nil : Self.separatorWarning(input, from: index, to: i, then: nil))
        }
        // Repairs: a run of CR and LF, then the next record or the end of the input.
        var end = index
        while end < input.writerIndex && end - index < Self.maxSeparator && (input[end] == 0x0D || input[end] == 0x0A) {
            end += 1
        }
        if end == input.writerIndex {
            // (Not where a gzip member is cut short: that is a truncated record.)
            guard dataEnded && truncatedMember == nil else { return .needMore }
            return .ok(
                end - index, warning: Self.separatorWarning(input, from: index, to: end, then: "the end of the input"))
        }
        if input.starts(with: "WARC/", at: end) {
            return .ok(
                end - index, warning: Self.separatorWarning(input, from: index, to: end, then: "the next record"))
        }
        if input.isPrefix(of: "WARC/", at: end) && !dataEnded { return .needMore }
        return .bad
    }

    /// The warning for the separator `buffer[from..<to]` after a block (then `then`), when it is not CRLF CRLF.
    static func separatorWarning(_ buffer: FramerInput, from: Int, to: Int, then: String?) -> String {
        var names: [String] = []
        var k = from
        while k < to {
            if buffer[k] == 0x0D && k + 1 < to && buffer[k + 1] == 0x0A {
                names.append("CRLF")
                k += 2
            } else {
                names.append(buffer[k] == 0x0D ? "CR" : "LF")
                k += 1
            }
        }
        var text =
            "record end repaired: the block is followed by \(names.isEmpty ? "nothing" : names.joined(separator: " "))"
        if let then { text += " then \(then)" }
        text += ", not CRLF CRLF"
        if names.count < 2 && from > 0 && (buffer[from - 1] == 0x0A || buffer[from - 1] == 0x0D) {
            text += " (its Content-Length may count line ends that end the block)"
        }
        return text
    }

    // MARK: - Items

    /// The current record (or the bytes at `position`) as a failure with what its header said.
    private func fromCurrent(
        _ code: RecordError.Code, _ message: String, at errorOffset: Int64? = nil, status: Int? = nil,
        headers: HeaderFields? = nil
    ) -> FramingFailure {
        if let arc = current?.arc {
            return FramingFailure(
                offset: current?.offset ?? currentOffset,
                error: RecordError(code, message, location: errorOffset.flatMap(location)), status: status,
                headers: headers,
                url: WARCHeader.escapingSpaces(arc.url),
                arc: ARCBlock.info(arc))
        }
        var warnings: [String] = []
        let header = current?.header
        let info = header.flatMap { header in
            header.type.map {
                WARCRecordInfo(
                    type: $0, recordId: header.fields.last("WARC-Record-ID"), date: header.fields.last("WARC-Date"),
                    truncated: header.fields.last("WARC-Truncated"))
            }
        }
        return FramingFailure(
            offset: current?.offset ?? currentOffset,
            error: RecordError(code, message, location: errorOffset.flatMap(location)), status: status,
            headers: headers,
            url: header?.targetURI(warnings: &warnings), warc: info)
    }

    /// The pending failure of a block skipped for its size gets what was read of it as it passed (status, fields,
    /// digest, body size, sniffed type: OverLimitBlock.swift). `complete`: the whole block passed.
    private mutating func applyOverLimit(complete: Bool) {
        guard let block = overLimit else { return }
        overLimit = nil
        guard failure != nil else { return }
        let outcome = block.finish(complete: complete)
        failure!.status = outcome.status
        failure!.headers = outcome.headers
        failure!.bodyBytes = outcome.bodyBytes
        failure!.warc?.digest = outcome.digest
        failure!.warnings = outcome.warnings
    }

    /// A block held whole (within maxBodyBytes + maxHeaderBytes) whose body is over maxBodyBytes: its line says what
    /// the line of a longer block says (digest, body size, sniffed type), read the same way.
    private func describeHeldOverLimit(
        _ failure: inout FramingFailure, reader: OverLimitBlock, blockStart: Int, blockEnd: Int
    ) {
        input.withUnsafeBufferPointer { reader.feed(UnsafeBufferPointer(rebasing: $0[blockStart..<blockEnd])) }
        let outcome = reader.finish(complete: true)
        // (Only the body's size: an HTTP head too long is the failure itself, said by its message.)
        guard let size = outcome.bodyBytes, size > Int64(limits.maxBodyBytes) else { return }
        failure.status = outcome.status
        failure.headers = outcome.headers
        failure.bodyBytes = outcome.bodyBytes
        failure.warc?.digest = outcome.digest
        failure.warnings = outcome.warnings
    }

    /// Up to the error-body cap of the `count` bytes at `index`.
    private func excerpt(from index: Int, count: Int) -> [UInt8] {
        input.bytes(in: index..<index + min(count, limits.maxErrorBodyBytes, input.writerIndex - index))
    }

    /// Starts a failure for the current record at its start (or, without one, at `offset`); the bytes skipped from
    /// here are added to it.
    private mutating func beginFailure(_ pending: FramingFailure, excerpt: [UInt8] = []) {
        var pending = pending
        pending.excerpt = excerpt
        failure = pending
        resyncResumed = false
        failureStart = current?.start ?? currentOffset
    }

    private mutating func beginFailure(_ error: RecordError, at offset: Int64) {
        let (reported, _) = reportedOffset(at: offset)
        itemStartsMember = startsOwnMember(at: offset)
        current = nil
        failure = FramingFailure(offset: reported, error: error)
        resyncResumed = false
        failureStart = offset
    }

    private mutating func skipIntoFailure(_ n: Int) {
        guard n > 0 else { return }
        if failure != nil {
            let room = limits.maxErrorBodyBytes - failure!.excerpt.count
            if room > 0 { input.copyBytes(in: position..<position + min(room, n), to: &failure!.excerpt) }
        }
        consume(n)
    }

    private mutating func finishFailure() {
        guard var pending = failure else { return }
        failure = nil
        pending.bytes = currentOffset - failureStart
        endItem()
        emitOrHold(.item(.failure(pending), bytes: pending.bytes), plainLength: pending.bytes)
    }

    /// The end of an item: framing starts over at `position`.
    private mutating func endItem() {
        current = nil
        state = .start
        lastItemEnd = currentOffset
    }

    /// Emits a finished item, or holds it while the gzip member it ends in is still open and nothing follows it yet,
    /// or while it waits for that member's end to learn its `length` (docs/output.md#record-extents). Plain input:
    /// the item's length is `plainLength`.
    private mutating func emitOrHold(_ item: Held, plainLength: Int64? = nil) {
        releaseHeld()
        var item = item
        var waitForLength = false
        if case .item(let framed, let bytes) = item {
            switch mode {
            case .plain:
                item = .item(framed.withLength(plainLength), bytes: bytes)
            case .gzip where itemStartsMember:
                switch memberEnd(after: currentOffset) {
                case .ended(let end): item = .item(framed.withLength(end.map { $0 - framed.offset }), bytes: bytes)
                case .open: waitForLength = memberOpen && !dataEnded
                }
            default:
                break
            }
        }
        itemStartsMember = false
        if mode == .gzip && memberOpen && !dataEnded && (available == 0 || waitForLength) {
            held = item
            heldForLength = waitForLength
        } else {
            release(item)
        }
    }

    private enum MemberEnd {
        /// The member ended at this compressed offset; `nil`: something other than line ends follows the item in it.
        case ended(Int64?)
        /// It has not ended yet.
        case open
    }

    /// Where the gzip member that holds the stream byte before `end` ended (`end`: where the last item ended, at
    /// `position`).
    private mutating func memberEnd(after end: Int64) -> MemberEnd {
        var k = 0
        while k < memberEnds.count && memberEnds[k].stream < end { k += 1 }
        if k > 0 { memberEnds.removeFirst(k) }
        guard let last = memberEnds.first else { return .open }
        let stop = Int(last.stream - input.baseOffset)
        var i = position
        while i < stop {
            guard input[i] == 0x0D || input[i] == 0x0A else { return .ended(nil) }
            i += 1
        }
        return .ended(last.end)
    }

    private mutating func release(_ item: Held) {
        switch item {
        case .item(let item, _): outbox.append(item)
        case .skip(let type, _): skippedRecords[type, default: 0] += 1
        }
    }

    private mutating func releaseHeld() {
        // (Also when a failed or cut member took the held item: the flag belongs to the item.)
        heldForLength = false
        guard let item = held else { return }
        held = nil
        release(item)
    }

    // MARK: - Resynchronisation

    /// Skips to the next line that starts with `WARC/` (or, with `checkHere`, to one at `position`; in gzip input also
    /// to a member whose data starts with `WARC/`), adding the skipped bytes to the pending failure.
    private mutating func stepResync(checkHere: Bool) -> Bool {
        if arcVersion != nil { return stepARCResync(checkHere: checkHere) }
        pruneBoundaries(upTo: currentOffset)
        if checkHere {
            if input.starts(with: "WARC/", at: position) {
                finishFailure()
                return true
            }
            if input.isPrefix(of: "WARC/", at: position) && !dataEnded { return false }
            state = .resync(checkHere: false)
        }
        let pattern: StaticString = "\nWARC/"
        // Where the next record starts: after a line end, or (gzip) at the start of a member.
        var hit: Int?
        // How far the skipping may go while nothing is found: not past what could still become a match.
        // (9: a version line, "WARC/1.1\r\n", cut one byte short.)
        var skipLimit = dataEnded ? input.writerIndex : max(position, input.writerIndex - 9)
        var from = position
        while let newline = find(0x0A, from: from), newline + 1 < input.writerIndex {
            if input.starts(with: pattern, at: newline) {
                hit = newline + 1
                break
            }
            if input.isPrefix(of: pattern, at: newline) { break }
            from = newline + 1
        }
        // A whole version line also counts where no line ends before it: garbage written between two records ends
        // anywhere, and each record after it must still be read (issue 7: one line per intact record).
        // (Not at the failure's own first byte, which may be a version line whose record failed; but at a byte the
        // last call stopped before, which is new.)
        let first = resyncResumed ? position : position + 1
        if let line = Self.versionLine(in: input, from: first, to: hit ?? input.writerIndex) { hit = line }
        for boundary in boundaries where boundary.start > currentOffset {
            let index = Int(boundary.start - input.baseOffset)
            guard index < input.writerIndex && index < (hit ?? input.writerIndex) else { break }
            if input.starts(with: "WARC/", at: index) {
                hit = index
                break
            }
            if !dataEnded && input.isPrefix(of: "WARC/", at: index) { skipLimit = min(skipLimit, index) }
        }
        resyncResumed = false
        if let hit {
            skipIntoFailure(hit - position)
            finishFailure()
            return true
        }
        skipIntoFailure(max(0, skipLimit - position))
        if dataEnded {
            finishFailure()
            return true
        }
        resyncResumed = true
        return false
    }

    /// The first `WARC/1.0` or `WARC/1.1` followed by a line end in `buffer[from..<to]`.
    static func versionLine(in buffer: FramerInput, from: Int, to: Int) -> Int? {
        buffer.withUnsafeBufferPointer { all in
            var k = from
            while let w = WARCBlock.find(UInt8(ascii: "W"), in: all, from: k, to: to) {
                if w + 9 < all.count, all[w + 1] == UInt8(ascii: "A"), all[w + 2] == UInt8(ascii: "R"),
                    all[w + 3] == UInt8(ascii: "C"), all[w + 4] == UInt8(ascii: "/"), all[w + 5] == UInt8(ascii: "1"),
                    all[w + 6] == UInt8(ascii: "."), all[w + 7] == UInt8(ascii: "0") || all[w + 7] == UInt8(ascii: "1"),
                    all[w + 8] == 0x0A || (all[w + 8] == 0x0D && all[w + 9] == 0x0A)
                {
                    return w
                }
                k = w + 1
            }
            return nil
        }
    }

    // MARK: - Header section

    /// The index just past the empty line that ends the header section at `position`, searching incrementally
    /// across calls and no further than the header limit allows.
    private mutating func findHeaderEnd() -> Int? {
        let limit =
            limits.maxHeaderBytes >= available
            ? input.writerIndex : position + min(available, limits.maxHeaderBytes + 2)
        var from = position + scanned
        let found: Int? = input.withUnsafeBufferPointer { all in
            while let newline = WARCBlock.find(0x0A, in: all, from: from, to: limit) {
                let next = newline + 1
                if next < all.count && all[next] == 0x0A { return next + 1 }
                if next + 1 < all.count && all[next] == 0x0D && all[next + 1] == 0x0A { return next + 2 }
                // CR CR LF line ends (a CRLF file converted once more): repaired by the header parser.
                if next + 2 < all.count && all[next] == 0x0D && all[next + 1] == 0x0D && all[next + 2] == 0x0A {
                    return next + 3
                }
                if next >= all.count || (all[next] == 0x0D && next + 1 >= all.count)
                    || (all[next] == 0x0D && all[next + 1] == 0x0D && next + 2 >= all.count)
                {
                    // Undecided until more input arrives: look at this line end again then.
                    from = newline
                    return nil
                }
                from = next
            }
            from = max(position, limit - 1)
            return nil
        }
        if found == nil { scanned = from - position }
        return found
    }

    // MARK: - gzip

    /// The offset to report for a record starting at stream offset `start`, and a warning when it is not its gzip
    /// member's.
    private mutating func reportedOffset(at start: Int64) -> (Int64, String?) {
        guard mode == .gzip else { return (start, nil) }
        pruneBoundaries(upTo: start)
        guard let boundary = boundaries.first, boundary.start <= start else { return (start, nil) }
        if boundary.plain { return (boundary.member + (start - boundary.start), nil) }
        if boundary.start >= lastItemEnd { return (boundary.member, nil) }
        decompressedOffsetsReported += 1
        return (
            start + decompressedOffsetCorrection,
            "offset is in the decompressed stream: the \(memberNoun) at \(boundary.member) holds more than one record"
        )
    }

    /// Whether an item starting at stream offset `start` starts its own gzip member (after `reportedOffset(at:)`).
    private func startsOwnMember(at start: Int64) -> Bool {
        guard mode == .gzip, let boundary = boundaries.first, boundary.start <= start, !boundary.plain else {
            return false
        }
        return boundary.start >= lastItemEnd
    }

    /// Forgets member starts before the last one at or before `offset`: no record can start before it any more.
    private mutating func pruneBoundaries(upTo offset: Int64) {
        var k = 0
        while k + 1 < boundaries.count && boundaries[k + 1].start <= offset { k += 1 }
        if k > 0 { boundaries.removeFirst(k) }
    }

    /// Inflates more of the caller's compressed `raw` input (straight into the stream's spare capacity), or handles
    /// what the inflater reports. Returns `false` when nothing happened.
    private mutating func pump(_ raw: inout FramerInput) -> Bool {
        guard mode == .gzip, let inflater, !dataEnded else { return false }
        var event = MemberEvent.needInput
        let ended = inputFinished
        // Room for a whole member (``GzipMembers/wholeCapacity``): libdeflate inflates it straight into this input.
        input.writeWithUnsafeMutableBytes(minimumWritableBytes: GzipMembers.wholeCapacity) { spare in
            event = inflater.next(from: &raw, ended: ended, into: spare.bindMemory(to: UInt8.self))
            switch event {
            case .output(let count), .plain(_, let count), .wholeMember(_, let count): return count
            default: return 0
            }
        }
        switch event {
        case .memberStart(let member):
            memberStarted(member, at: input.offset(of: input.writerIndex))
        case .wholeMember(let member, let count):
            // What `.memberStart`, `.output` (for a member that gave bytes) and `.memberEnd` would have done, in order.
            memberStarted(member, at: input.offset(of: input.writerIndex - count))
            if count > 0 && !heldForLength { releaseHeld() }
            memberEnded(after: raw.readerOffset)
        case .plain(let at, let count):
            releaseHeld()
            let start = input.offset(of: input.writerIndex - count)
            if let last = boundaries.last, last.plain, start - last.start == at - last.member {
                // The same run, delivered in pieces.
            } else {
                boundaries.append((start, at, true))
            }
        case .output:
            // (An item waiting for its length stays held through line ends: `stepStart` lets it go at anything else.)
            if !heldForLength { releaseHeld() }
        case .memberEnd:
            memberEnded(after: raw.readerOffset)
        case .corrupt(let member, let message):
            memberOpen = false
            memberFailed(.malformedRecord, "the \(memberNoun) at \(member) is corrupt: \(message)", member: member)
        case .truncated(let member):
            memberOpen = false
            truncatedMember = member
            dataEnded = true
            memberCutShort(member)
        case .needInput:
            return false
        case .end:
            dataEnded = true
            releaseHeld()
        }
        return true
    }

    /// A member starts at compressed offset `member`, its output at stream offset `start`.
    private mutating func memberStarted(_ member: Int64, at start: Int64) {
        if let last = boundaries.last, last.start == start { boundaries.removeLast() }
        boundaries.append((start, member, false))
        memberOpen = true
    }

    /// The open member ended, its output at the end of the stream so far; `end`: the compressed offset after it.
    private mutating func memberEnded(after end: Int64) {
        memberOpen = false
        memberEnds.append((input.offset(of: input.writerIndex), end))
        // Trimmed in batches: a stream of tiny members must not pay a shift of the whole table for each.
        if memberEnds.count > 2048 { memberEnds.removeFirst(memberEnds.count - 1024) }
        if heldForLength, case .item(let item, let bytes) = held {
            held = .item(item.withLength(end - item.offset), bytes: bytes)
        }
        releaseHeld()
    }

    /// A member turned out corrupt after the framer read all it gave: what it was framing is that failure.
    private mutating func memberFailed(_ code: RecordError.Code, _ message: String, member: Int64) {
        if let item = held {
            held = nil
            outbox.append(.failure(converted(item, code, message)))
        } else if failure != nil {
            failure!.error.message += "; " + message
            skipIntoFailure(available)
            finishFailure()
        } else if current != nil {
            var headExcerpt: [UInt8] = []
            if case .skip = state { headExcerpt = current?.headExcerpt ?? [] }
            if case .trailer = state { headExcerpt = current?.headExcerpt ?? [] }
            beginFailure(fromCurrent(code, message), excerpt: headExcerpt)
            skipIntoFailure(available)
            finishFailure()
        } else if available > 0 {
            beginFailure(RecordError(code, message), at: currentOffset)
            skipIntoFailure(available)
            finishFailure()
        } else {
            outbox.append(.failure(FramingFailure(offset: member, error: RecordError(code, message))))
            endItem()
        }
        state = .start
        current = nil
    }

    /// The input ended inside a member. An item held for it becomes the failure; anything being framed fails at the
    /// end of the data, naming the member; with nothing at all, the member itself is the failure.
    private mutating func memberCutShort(_ member: Int64) {
        let message = "input ended inside the \(memberNoun) at \(member), before its end"
        if let item = held {
            held = nil
            outbox.append(.failure(converted(item, .truncatedRecord, message)))
        } else if case .start = state, available == 0, failure == nil {
            outbox.append(.failure(FramingFailure(offset: member, error: RecordError(.truncatedRecord, message))))
            endItem()
        }
    }

    /// A held item as the failure of its member.
    private func converted(_ item: Held, _ code: RecordError.Code, _ message: String) -> FramingFailure {
        switch item {
        case .item(.failure(var failure), _):
            failure.error.message += "; " + message
            return failure
        case .item(.record(var record), let bytes):
            // (Rare: the member the record ended in turned out bad. Its digest is checked here, as the record's
            // information goes with the failure.)
            record.checkPayloadDigest()
            return FramingFailure(
                offset: record.offset, error: RecordError(code, message), status: record.status,
                headers: record.headers,
                excerpt: Array(record.body.prefix(limits.maxErrorBodyBytes)), bytes: bytes, url: record.url,
                warc: record.warc, arc: record.arc)
        case .skip(_, var failure):
            failure.error = RecordError(code, message)
            return failure
        }
    }
}

// MARK: - ARC

// The ARC record grammar's steps (the grammar itself: Framing/ARC/ARCRecord.swift). The stream, its gzip members,
// failures, resynchronisation and held items are the framer's, as for WARC records; here are the header line, the
// block and its line feed, and the search for the next header line.
extension WARCFramer {
    private enum ARCSeparator {
        /// The separator's length (0 or 1), and a warning when it is missing.
        case ok(Int, warning: String?)
        case bad, needMore
        /// The input ended inside the gzip member the record is in.
        case truncated
    }

    /// An ARC record starts at `position`: its header line is read next.
    private mutating func startARCRecord() {
        let start = currentOffset
        let (offset, warning) = reportedOffset(at: start)
        current = Current(start: start, offset: offset, warnings: warning.map { [$0] } ?? [])
        current?.isARC = true
        itemStartsMember = startsOwnMember(at: start)
        if arcVersion == nil { arcVersion = .v1 }
        scanned = 0
        state = .header
    }

    private mutating func stepARCHeader() -> Bool {
        let searchEnd =
            limits.maxHeaderBytes >= available ? input.writerIndex : position + limits.maxHeaderBytes + 1
        guard let newline = input.firstIndex(of: 0x0A, from: min(position + scanned, searchEnd), to: searchEnd) else {
            if available > limits.maxHeaderBytes {
                beginFailure(
                    fromCurrent(
                        .limitExceeded, "ARC header line longer than \(limits.maxHeaderBytes) bytes (maxHeaderBytes)"))
                state = .resync(checkHere: false)
                return true
            }
            guard dataEnded else {
                scanned = available
                return false
            }
            beginFailure(fromCurrent(.truncatedRecord, endMessage("input ended inside the ARC header line")))
            state = .resync(checkHere: false)
            return true
        }
        let headerLength = newline + 1 - position
        let parsed = input.withUnsafeBufferPointer {
            ARCHeader.parse(UnsafeBufferPointer(rebasing: $0[position..<newline]), version: arcVersion ?? .v1)
        }
        let header: ARCHeader
        switch parsed {
        case .failure(let problem):
            beginFailure(fromCurrent(problem.code, problem.message, at: currentOffset))
            state = .resync(checkHere: false)
            return true
        case .success(let value):
            header = value
        }
        current?.arc = header
        // The `filedesc://` record is counted, not yielded.
        current?.selected = !header.isFiledesc
        enterBlock(headerLength: headerLength, blockLength: header.length, noun: "ARC record")
        return true
    }

    private mutating func stepARCBlock(headerLength: Int, blockLength: Int) -> Bool {
        let blockStart = position + headerLength
        let blockEnd = blockStart + blockLength
        let pruneTo = boundaries.count > 1024 ? blockEnd : blockStart
        pruneBoundaries(upTo: input.offset(of: pruneTo))
        guard blockEnd <= input.writerIndex else {
            guard dataEnded else { return false }
            beginFailure(
                fromCurrent(
                    .truncatedRecord,
                    endMessage(
                        "input ended \(blockEnd - input.writerIndex) bytes before the end of the ARC record (Archive-length \(blockLength))"
                    )))
            skipIntoFailure(headerLength)
            state = .resync(checkHere: true)
            return true
        }
        switch arcSeparator(at: blockEnd) {
        case .needMore:
            return false
        case .truncated:
            beginFailure(fromCurrent(.truncatedRecord, endMessage("input ended after the ARC record's block")))
            skipIntoFailure(available)
            finishFailure()
            return true
        case .bad:
            beginFailure(
                fromCurrent(
                    .malformedRecord,
                    "the ARC record is followed by neither a line feed nor a header line: its Archive-length (\(blockLength)) is probably wrong",
                    at: input.offset(of: blockEnd)))
            skipIntoFailure(headerLength)
            state = .resync(checkHere: true)
            return true
        case .ok(let separator, let warning):
            if arcSeparated == nil && (separator == 1 || warning != nil) { arcSeparated = separator == 1 }
            completeARCRecord(
                blockStart: blockStart, blockEnd: blockEnd, total: headerLength + blockLength + separator,
                warning: warning)
            return true
        }
    }

    /// What follows an ARC record's block at `index`: its line feed; or, without one, the end of a gzip member or
    /// the next record's header line (read, with a warning); anything else says the length is wrong.
    private func arcSeparator(at index: Int) -> ARCSeparator {
        if index < input.writerIndex && input[index] == 0x0A { return .ok(1, warning: nil) }
        // The member ends with the record: it is delimited (webarchive-discovery's .arc.gz have no separators).
        if mode == .gzip && boundaries.contains(where: { $0.start == input.offset(of: index) }) {
            return .ok(0, warning: nil)
        }
        let missing = "the ARC record is not followed by a line feed"
        if index == input.writerIndex {
            guard dataEnded else { return .needMore }
            if truncatedMember != nil { return .truncated }
            return .ok(0, warning: mode == .gzip ? nil : missing + " (the input ends)")
        }
        if input.starts(with: "WARC/", at: index) { return .ok(0, warning: missing) }
        // A file that separates its records: a header line right after the block is a length that lies (by a byte or
        // two, it could even look like one: `ns:…`).
        if arcSeparated == true { return .bad }
        switch arcRecordStart(at: index) {
        case .yes: return .ok(0, warning: missing + ": the next header line follows its Archive-length bytes")
        case .undecided: return .needMore
        case .no: return .bad
        }
    }

    /// A whole ARC record with its separator is at `position`: its item (or, `filedesc://`, its count).
    private mutating func completeARCRecord(blockStart: Int, blockEnd: Int, total: Int, warning: String?) {
        guard let record = current, let header = record.arc else { return }
        let result: Held
        if header.isFiledesc {
            let declared = input.withUnsafeBufferPointer {
                ARCHeader.version(ofVersionBlock: UnsafeBufferPointer(rebasing: $0[blockStart..<blockEnd]))
            }
            arcVersion = declared ?? arcVersion ?? .v1
            result = .skip(type: "filedesc", failure: fromCurrent(.malformedRecord, ""))
        } else {
            var warnings = record.warnings
            if let warning { warnings.append(warning) }
            let built = input.withUnsafeBufferPointer { all in
                ARCBlock.response(
                    header: header, block: UnsafeBufferPointer(rebasing: all[blockStart..<blockEnd]),
                    offset: record.offset, warnings: warnings, limits: limits)
            }
            switch built {
            case .success(let response):
                result = .item(.record(response), bytes: Int64(total))
            case .failure(let problem):
                var failure = fromCurrent(
                    problem.code, problem.message, status: problem.status, headers: problem.headers)
                failure.excerpt = excerpt(from: position, count: total)
                failure.bytes = Int64(total)
                if problem.code == .limitExceeded {
                    let reader = OverLimitBlock(arc: header, warnings: record.warnings, limits: limits)
                    describeHeldOverLimit(&failure, reader: reader, blockStart: blockStart, blockEnd: blockEnd)
                }
                result = .item(.failure(failure), bytes: Int64(total))
            }
        }
        // Plain input: the header line and the block, without the line feed after it, as warcio's index gives it; a
        // failure covers the bytes it stands for, as a WARC record's does.
        let extent: Int64
        if case .item(.failure, _) = result {
            extent = Int64(total)
        } else {
            extent = input.offset(of: blockEnd) - record.start
        }
        consume(total)
        endItem()
        emitOrHold(result, plainLength: extent)
    }

    /// After an ARC block skipped for its size: its separator.
    private mutating func stepARCTrailer() -> Bool {
        switch arcSeparator(at: position) {
        case .ok(let separator, let warning):
            // As after a block that was read: the file's first record decides whether records are separated.
            if arcSeparated == nil && (separator == 1 || warning != nil) { arcSeparated = separator == 1 }
            skipIntoFailure(separator)
            if failure != nil {
                applyOverLimit(complete: true)
                finishFailure()
            } else if current?.arc?.isFiledesc == true {
                let template = fromCurrent(.malformedRecord, "")
                endItem()
                emitOrHold(.skip(type: "filedesc", failure: template))
            } else {
                endItem()
            }
            return true
        case .bad:
            if failure == nil {
                beginFailure(
                    fromCurrent(
                        .malformedRecord,
                        "the ARC record is followed by neither a line feed nor a header line: its Archive-length is probably wrong",
                        at: currentOffset),
                    excerpt: current?.headExcerpt ?? [])
            }
            applyOverLimit(complete: false)
            state = .resync(checkHere: true)
            return true
        case .needMore:
            return false
        case .truncated:
            if failure == nil {
                beginFailure(
                    fromCurrent(.truncatedRecord, endMessage("input ended after the ARC record's block")),
                    excerpt: current?.headExcerpt ?? [])
            }
            applyOverLimit(complete: false)
            skipIntoFailure(available)
            finishFailure()
            return true
        }
    }

    /// Whether a record starts at `index` of ARC input: a header line (strictly: ARCHeader.recognise) or a `WARC/`
    /// line; `.no` for WARC input.
    func arcRecordStart(at index: Int) -> ARCHeader.Recognition {
        guard let version = arcVersion else { return .no }
        if input.starts(with: "WARC/", at: index) { return .yes }
        return ARCHeader.recognise(input, at: index, version: version, cap: ARCHeader.recogniseCap, ended: dataEnded)
    }

    /// Skips to the next ARC header line (or, with `checkHere`, to one at `position`): at the start of a line, or of
    /// a gzip member. The skipped bytes go to the pending failure.
    private mutating func stepARCResync(checkHere: Bool) -> Bool {
        pruneBoundaries(upTo: currentOffset)
        var candidate: Int? = checkHere || resyncResumed ? position : nextARCCandidate(after: position)
        resyncResumed = false
        state = .resync(checkHere: false)
        while let index = candidate {
            let found: ARCHeader.Recognition =
                index == input.writerIndex ? (dataEnded ? .no : .undecided) : arcRecordStart(at: index)
            switch found {
            case .yes:
                skipIntoFailure(index - position)
                finishFailure()
                return true
            case .undecided:
                skipIntoFailure(index - position)
                resyncResumed = true
                return false
            case .no:
                candidate = nextARCCandidate(after: index)
            }
        }
        skipIntoFailure(available)
        guard dataEnded else { return false }
        finishFailure()
        return true
    }

    /// The next place after `index` where a record may start: after a line feed, or where a gzip member starts.
    private func nextARCCandidate(after index: Int) -> Int? {
        var next = find(0x0A, from: index).map { $0 + 1 }
        for boundary in boundaries {
            let start = Int(boundary.start - input.baseOffset)
            guard start <= index else {
                if start < (next ?? Int.max) && start <= input.writerIndex { next = start }
                break
            }
        }
        return next
    }
}

extension FramedItem {
    /// The item with `length` as its extent.
    fileprivate func withLength(_ length: Int64?) -> FramedItem {
        switch self {
        case .record(var record):
            record.length = length
            return .record(record)
        case .failure(var failure):
            failure.length = length
            return .failure(failure)
        }
    }
}
