/*
 Streaming inflate of a gzip stream that may hold many members (RFC 1952 §2.2: "a gzip file consists of a series of
 members"), as `.warc.gz` files do: WARC 1.1 annex D writes one member per record, so a reader can seek to a record and
 one damaged member costs one record.

 The caller keeps the compressed input (a FramerInput: the stream runner's, read straight into) and pulls events,
 passing it to each call; the inflater consumes from it and keeps none of it between calls. The events: a member starts
 (at this compressed offset),
 inflated bytes, a member ends (its CRC-32 and length checked by zlib), a member is corrupt (zlib's message), the input
 ended inside a member. After a corrupt member, inflating resumes at the next member header (1F 8B 08) after the point
 where zlib gave up. A header found that way which fails again is reported again, even before it gives any output: it
 cannot be told from a real member that is damaged too (two bad members in a row must cost two items, never one
 silently), so a false hit inside the bad data costs at worst a spare error.

 Between members, bytes that do not start a member (1F 8B) are not gzip at all: they are passed through as they are
 (`plain`), up to the next 1F 8B, so plain WARC records, padding or garbage after gzip members reach the framer,
 which frames them (or reports them) like any plain input.

 Output is inflated only as the caller asks for it, into the caller's buffer: a small input that inflates to gigabytes
 costs what the caller lets it write, never memory here. The events do not depend on how the input was split: zlib
 gives the same output and detects an error at the same input byte however the input is fed to it.

 Speed: zlib inflates piece by piece, which the pipeline's reading thread pays for on every `.warc.gz` record. A member
 that is whole in the input buffer and inflates to at most `wholeCapacity` bytes (most WARC records) is inflated at
 once by libdeflate instead, 1.5 times as fast here (measured on the 25,001 members of bench/warc: 0.061 s against
 0.090 s). ISA-L's igzip was measured beside it (bench/inflate, on a crawl's 14,001 members) and is slower, 0.91 times
 libdeflate's speed, so it is not used. libdeflate checks the same CRC-32 and length. Any member it does not take
 whole -- cut by the end of the buffer, larger, corrupt, or with a header CRC (FHCRC, which zlib checks and libdeflate
 skips) -- goes through zlib from its first byte, so errors, their messages and where output stops are zlib's as
 before. After a member too large for the fast path, it is not tried again until zlib has seen a member that would
 have fitted, so a run of large members is not inflated twice. When the caller's output has room for `wholeCapacity`
 bytes (the WARC framer keeps that much free), libdeflate writes there and one event, `wholeMember`, reports the
 member's start, output and end; otherwise it writes to a scratch buffer delivered as the caller asks (copying it
 was about 1 % of issue 22's peers' job).

 A member cut by the end of the buffer (one in every read's worth of input, and the larger the member the likelier)
 failed libdeflate and went to zlib (perf, bench/crawl's peers' job with one job: zlib 6.9 % of the samples against
 libdeflate's 25 %). When the input is a regular file
 (``FramerInput/readsWithoutWaiting``: more input is there for the reading, nothing waits on a producer), such a
 member is left unread and more input asked for, and libdeflate tries it again once the input holds twice as much or
 has ended; a member still not inflated whole once the input holds more than `wholeCapacity` plus `cutSlack` bytes
 of it, at the end of the input, or after a stop (the framer's `decodeLast` clears the flag), goes to zlib as
 before. The input buffer therefore holds at most that much of a member, and one read. A member after whose start
 the input holds no member header is likely cut, and libdeflate inflates a cut member as far as it goes before it
 fails: so it is not tried until more is read (on bench/crawl's crawl that had been 9.5 % of the compressed bytes,
 and the peers' job took 4 % less CPU without it).
 From a pipe or a socket a cut member goes to zlib at once, so that no record waits for bytes that may be slow to
 come.
 */
internal import CDeflate
internal import CShims
internal import CZlib
import Glibc

/// Inflates a multi-member gzip stream piece by piece. See the file comment.
final class GzipMembers {
    /// The events of every compressed layer (CompressedMembers.swift).
    typealias Event = MemberEvent

    private enum Phase {
        /// A member header is expected at `inputPosition`.
        case betweenMembers
        /// Inflating the member that began at `start`; `produced`: it has given output.
        case inMember(start: Int64, produced: Bool)
        /// The member that began at `start` was inflated whole into `whole`; `delivered` of its `count` bytes are out.
        case wholeMember(start: Int64, count: Int, delivered: Int)
        /// After a corrupt member: looking for the next member header.
        case searching
        case ended
    }

    private let stream: UnsafeMutablePointer<z_stream>
    private let started: Bool
    /// The caller's compressed input, lent for one `next` call (swapped in and back); its offsets are compressed
    /// offsets. Unread: `input[inputPosition...]`.
    private var input = FramerInput()
    /// The input has ended (no more will be written to it).
    private var finished = false
    private var phase = Phase.betweenMembers
    /// An event found together with output, to report on the next call.
    private var deferred: Event?

    /// The most a member may inflate to and still be inflated whole (see the file comment).
    static let wholeCapacity = 512 * 1024
    private let wholeDecompressor: OpaquePointer?
    /// Allocated at the first member tried whole.
    private var whole: UnsafeMutableBufferPointer<UInt8>?
    /// Off after a member too large for `whole`, until zlib inflates one that fits.
    private var wholeEnabled = true
    /// Bytes a member may have in the input beyond `wholeCapacity` and still be waited for (see the file comment):
    /// deflate's stored blocks add 5 bytes to 64 KiB, and a header its name or comment.
    static let cutSlack = 64 * 1024
    /// How many input bytes from the member's start the input must hold before libdeflate tries a member again
    /// that it found cut (0: no member was found cut).
    private var retryAtAvailable = 0
    /// Members inflated whole by libdeflate so far (the tests watch it).
    private(set) var wholeMemberCount = 0
    /// Calls of libdeflate so far, whether they inflated a member or not (the tests watch it).
    private(set) var wholeAttemptCount = 0
    /// Bytes zlib has given for the member it is inflating.
    private var memberProduced = 0
    /// The input offset just past the bytes last searched for a member header (see ``headerFollows()``), and the
    /// offset of the last header found there (-1: none after where the search stopped).
    private var headerSearchEnd: Int64 = -1
    private var lastHeaderOffset: Int64 = -1

    init() {
        stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // 15 + 16: a gzip wrapper (not zlib, not raw), 32 KiB window; zlib checks the CRC-32 and length trailer.
        started = inflateInit2_(stream, 15 + 16, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK
        wholeDecompressor = libdeflate_alloc_decompressor()
    }

    deinit {
        if started { inflateEnd(stream) }
        if let wholeDecompressor { libdeflate_free_decompressor(wholeDecompressor) }
        whole?.deallocate()
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Whether the inflater waits for the next member's header, with nothing of the last member left to report.
    var isBetweenMembers: Bool {
        guard deferred == nil, case .betweenMembers = phase else { return false }
        return true
    }

    private var inputPosition: Int {
        get { input.readerIndex }
        set { input.readerIndex = newValue }
    }

    /// The compressed offset of the next byte to read.
    private var inputOffset: Int64 { input.readerOffset }

    /// The next event, reading compressed bytes from `compressed`; inflated bytes go to the start of `output`.
    /// - Parameters:
    ///   - compressed: the input; its offsets are the compressed offsets reported.
    ///   - ended: no more bytes will be written to `compressed`.
    ///   - output: where inflated bytes go (must not be empty).
    /// - Returns: what happened: a member's start or end, bytes inflated, plain bytes, a corrupt or truncated member,
    ///   or more input needed.
    func next(from compressed: inout FramerInput, ended: Bool, into output: UnsafeMutableBufferPointer<UInt8>) -> Event
    {
        finished = ended
        swap(&input, &compressed)
        defer { swap(&input, &compressed) }
        if let event = deferred {
            deferred = nil
            return event
        }
        while true {
            switch phase {
            case .ended:
                return .end
            case .betweenMembers:
                guard inputPosition < input.writerIndex else {
                    if finished {
                        phase = .ended
                        return .end
                    }
                    return .needInput
                }
                if input[inputPosition] != 0x1F || inputPosition + 1 == input.writerIndex
                    || input[inputPosition + 1] != 0x8B
                {
                    if input[inputPosition] == 0x1F && inputPosition + 1 == input.writerIndex {
                        // 1F: a member, or not, depending on the next byte; at the end, a member cut short.
                        guard finished else { return .needInput }
                        let start = inputOffset
                        inputPosition = input.writerIndex
                        phase = .ended
                        return .truncated(start)
                    }
                    return passThrough(into: output)
                }
                guard started, inflateReset(stream) == Z_OK else {
                    // zlib could not start (out of memory): every member is unreadable.
                    let start = inputOffset
                    inputPosition = input.writerIndex
                    return .corrupt(member: start, message: "zlib could not start")
                }
                let start = inputOffset
                switch inflateWhole(into: output) {
                case .inflated(let count):
                    phase = .wholeMember(start: start, count: count, delivered: 0)
                case .inflatedIntoOutput(let count):
                    retryAtAvailable = 0
                    return .wholeMember(start, count: count)
                case .cut:
                    return .needInput
                case .byZlib:
                    memberProduced = 0
                    phase = .inMember(start: start, produced: false)
                }
                retryAtAvailable = 0
                return .memberStart(start)
            case .wholeMember(let start, let count, let delivered):
                guard delivered < count, let whole else {
                    phase = .betweenMembers
                    return .memberEnd(start)
                }
                let n = min(count - delivered, output.count)
                _ = memcpy(output.baseAddress!, whole.baseAddress! + delivered, n)
                phase = .wholeMember(start: start, count: count, delivered: delivered + n)
                return .output(n)
            case .inMember(let start, let produced):
                if let event = inflateSome(start: start, produced: produced, into: output) { return event }
            case .searching:
                if let event = search() { return event }
            }
        }
    }

    /// One call of `inflate`; `nil` when it only consumed input (a header, say) and the caller should go on.
    private func inflateSome(start: Int64, produced: Bool, into output: UnsafeMutableBufferPointer<UInt8>) -> Event? {
        let available = input.writerIndex - inputPosition
        let (status, consumed, written) = input.withUnsafeBufferPointer { all -> (Int32, Int, Int) in
            let take = min(available, 1 << 30)
            // zlib does not write through next_in (it is `z_const` there).
            stream.pointee.next_in = take > 0 ? UnsafeMutablePointer(mutating: all.baseAddress! + inputPosition) : nil
            stream.pointee.avail_in = UInt32(take)
            let room = min(output.count, 1 << 30)
            stream.pointee.next_out = output.baseAddress
            stream.pointee.avail_out = UInt32(room)
            let status = inflate(stream, Z_NO_FLUSH)
            let consumed = take - Int(stream.pointee.avail_in)
            let written = room - Int(stream.pointee.avail_out)
            stream.pointee.next_in = nil
            stream.pointee.next_out = nil
            return (status, consumed, written)
        }
        inputPosition += consumed
        memberProduced += written
        if written > 0 { phase = .inMember(start: start, produced: true) }
        let event: Event?
        switch status {
        case Z_STREAM_END:
            if memberProduced <= Self.wholeCapacity { wholeEnabled = true }
            phase = .betweenMembers
            event = .memberEnd(start)
        case Z_OK:
            event = nil
        case Z_BUF_ERROR where inputPosition == input.writerIndex:
            // No progress without more input.
            if finished {
                phase = .ended
                event = .truncated(start)
            } else {
                event = written > 0 ? nil : .needInput
            }
        default:
            let message = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
            phase = .searching
            event = .corrupt(member: start, message: message)
        }
        if written > 0 {
            deferred = event
            return .output(written)
        }
        return event
    }

    /// What ``inflateWhole(into:)`` did with the member at `inputPosition`.
    private enum WholeOutcome {
        /// Inflated into `whole` (this many bytes), the input read past the member.
        case inflated(Int)
        /// Inflated straight into the caller's output (this many bytes), the input read past the member.
        case inflatedIntoOutput(Int)
        /// Maybe cut by the end of the input, which more of the file may complete: nothing read, more input wanted.
        case cut
        /// Nothing read: zlib inflates it.
        case byZlib
    }

    /// Inflates the member at `inputPosition` at once if it is all in the input, fits, and libdeflate finds it valid:
    /// straight into `output` when that has room for `wholeCapacity` bytes (the framer's spare capacity: no copy
    /// after), else into `whole`. Otherwise, when the input is a file that has not ended and may still complete the
    /// member, it waits for more (`.cut`); else it leaves the member to zlib. Either way at most `wholeCapacity` bytes
    /// are offered to libdeflate, so which members go to zlib does not depend on the output's size.
    private func inflateWhole(into output: UnsafeMutableBufferPointer<UInt8>) -> WholeOutcome {
        guard wholeEnabled, let wholeDecompressor else { return .byZlib }
        let available = input.writerIndex - inputPosition
        let mayWait = input.readsWithoutWaiting && !finished && available <= Self.wholeCapacity + Self.cutSlack
        // Tried at less than half of this already: not again before the input holds twice that (linear work however
        // the file's reads are cut).
        if mayWait && available < retryAtAvailable { return .cut }
        guard available >= 18 else { return mayWait ? .cut : .byZlib }
        // No member header after this member's start: it is most likely cut by the end of what was read, and
        // libdeflate would inflate all of it to find so. Wait for more (one in every read: 9.5 % of the compressed
        // bytes of bench/crawl's crawl were inflated twice so).
        if mayWait && !headerFollows() { return .cut }
        guard input[inputPosition + 3] & 0x02 == 0 else { return .byZlib }
        let direct = output.count >= Self.wholeCapacity
        if !direct && whole == nil { whole = .allocate(capacity: Self.wholeCapacity) }
        let destination = direct ? output.baseAddress! : whole!.baseAddress!
        var used = 0
        var produced = 0
        wholeAttemptCount += 1
        let result = input.withUnsafeBufferPointer { all in
            libdeflate_gzip_decompress_ex(
                wholeDecompressor, all.baseAddress! + inputPosition, all.count - inputPosition,
                destination, Self.wholeCapacity, &used, &produced)
        }
        switch result {
        case LIBDEFLATE_SUCCESS:
            inputPosition += used
            wholeMemberCount += 1
            return direct ? .inflatedIntoOutput(produced) : .inflated(produced)
        case LIBDEFLATE_INSUFFICIENT_SPACE:
            wholeEnabled = false
            return .byZlib
        default:
            guard mayWait else { return .byZlib }
            retryAtAvailable = 2 * available
            return .cut
        }
    }

    /// Whether a member header (``isMemberHeader(_:at:)``) is in the input after `inputPosition`. The search goes back
    /// from the end of the input once for each end (for the next read's bytes, at most the length of the member that
    /// they end in), so a file costs about one search of its last member per read.
    private func headerFollows() -> Bool {
        let end = input.offset(of: input.writerIndex)
        if end != headerSearchEnd {
            headerSearchEnd = end
            lastHeaderOffset = Self.lastMemberHeader(in: input).map { input.offset(of: $0) } ?? -1
        }
        return lastHeaderOffset > inputOffset
    }

    /// Whether the bytes at `index` look like a gzip member header: 1F 8B 08 and a flag byte whose reserved bits (5 to
    /// 7) are clear (RFC 1952 §2.3.1).
    static func isMemberHeader(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Bool {
        index + 3 < bytes.count && bytes[index] == 0x1F && bytes[index + 1] == 0x8B && bytes[index + 2] == 0x08
            && bytes[index + 3] & 0xE0 == 0
    }

    /// The index of the last member header in `buffer`'s unread bytes after the first, if any (a search for 1F from
    /// the end).
    static func lastMemberHeader(in buffer: FramerInput) -> Int? {
        buffer.withUnsafeBufferPointer { all -> Int? in
            guard let base = all.baseAddress else { return nil }
            let from = buffer.readerIndex + 1
            var end = buffer.writerIndex - 3 // a header needs 4 bytes
            while end > from, let hit = respdecode_memrchr(base + from, 0x1F, end - from) {
                let index = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                if isMemberHeader(all, at: index) { return index }
                end = index
            }
            return nil
        }
    }

    /// Copies the bytes at `inputPosition` (which do not start a member) up to the next member start (1F 8B), or as
    /// far as is known not to start one.
    private func passThrough(into output: UnsafeMutableBufferPointer<UInt8>) -> Event {
        let start = inputPosition
        let end: Int = input.withUnsafeBufferPointer { all in
            let base = all.baseAddress!
            // Up to where a member starts by the rule of `.betweenMembers` (1F 8B), or to a last 1F, which that rule
            // decides on (with more input, or as a member cut short): so the bytes after a plain run are read the same
            // way however the input was split (the fuzz target found a 1F 8B 02 read as plain when whole, as a
            // corrupt member when cut after its 1F).
            var from = start + 1
            while from < all.count, let hit = memchr(base + from, 0x1F, all.count - from) {
                let index = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                if index + 1 == all.count || all[index + 1] == 0x8B { return index }
                from = index + 1
            }
            return all.count
        }
        let count = min(end - start, output.count)
        input.withUnsafeBufferPointer { all in
            _ = memcpy(output.baseAddress!, all.baseAddress! + start, count)
        }
        inputPosition += count
        return .plain(at: input.offset(of: start), count: count)
    }

    /// Skips to the next member header (1F 8B 08) at or after `inputPosition`.
    private func search() -> Event? {
        let found: Int? = input.withUnsafeBufferPointer { all in
            guard let base = all.baseAddress else { return nil }
            var from = inputPosition
            while from < all.count, let hit = memchr(base + from, 0x1F, all.count - from) {
                let index = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                if index + 2 >= all.count {
                    // Too close to the end to tell: keep it for more input (or give it up at the end).
                    return finished ? nil : index
                }
                if all[index + 1] == 0x8B && all[index + 2] == 0x08 { return index }
                from = index + 1
            }
            return nil
        }
        if let found, found + 2 < input.writerIndex {
            inputPosition = found
            phase = .betweenMembers
            return nil
        }
        if finished {
            inputPosition = input.writerIndex
            phase = .ended
            return .end
        }
        inputPosition = found ?? input.writerIndex
        return .needInput
    }
}
