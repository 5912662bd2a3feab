/*
 Streaming inflate of a gzip stream that may hold many members (RFC 1952 §2.2: "a gzip file consists of a series of
 members"), as `.warc.gz` files do: WARC 1.1 annex D writes one member per record, so a reader can seek to a record and
 one damaged member costs one record.

 The caller appends compressed input as it arrives and pulls events: a member starts (at this compressed offset),
 inflated bytes, a member ends (its CRC-32 and length checked by zlib), a member is corrupt (zlib's message), the input
 ended inside a member. After a corrupt member, inflating resumes at the next member header (1F 8B 08) after the point
 where zlib gave up. A header found that way which fails again is reported again, even before it gives any output: it
 cannot be told from a real member that is damaged too (two bad members in a row must cost two items, never one
 silently), so a false hit inside the bad data costs at worst a spare error.

 Between members, bytes that do not start a member (1F 8B) are not gzip at all: they are passed through as they are
 (`plain`), up to the next 1F 8B 08, so plain WARC records, padding or garbage after gzip members reach the framer,
 which frames them (or reports them) like any plain input.

 Output is inflated only as the caller asks for it, into the caller's buffer: a small input that inflates to gigabytes
 costs what the caller lets it write, never memory here. The events do not depend on how the input was split: zlib
 gives the same output and detects an error at the same input byte however the input is fed to it.
 */
internal import CZlib
import Glibc

/// Inflates a multi-member gzip stream piece by piece. See the file comment.
final class GzipMembers {
    enum Event: Equatable {
        /// A member begins at this compressed offset; reported before any of its output.
        case memberStart(Int64)
        /// This many inflated bytes were written at the start of the output buffer.
        case output(Int)
        /// The member that began at this offset ended; zlib checked its CRC-32 and length.
        case memberEnd(Int64)
        /// The member that began at `member` is not valid gzip data; `message` is zlib's. Later output comes from the
        /// next member header found after the point of failure.
        case corrupt(member: Int64, message: String)
        /// This many bytes that are not in any member (they do not start with 1F 8B) were copied, as they are, to the
        /// start of the output buffer; the first of them is at this compressed offset.
        case plain(at: Int64, count: Int)
        /// The input ended inside the member that began at this offset.
        case truncated(Int64)
        /// Nothing more can be done until more input is appended.
        case needInput
        /// The input is finished and all of it has been read.
        case end
    }

    private enum Phase {
        /// A member header is expected at `inputPosition`.
        case betweenMembers
        /// Inflating the member that began at `start`; `produced`: it has given output.
        case inMember(start: Int64, produced: Bool)
        /// After a corrupt member: looking for the next member header.
        case searching
        case ended
    }

    private let stream: UnsafeMutablePointer<z_stream>
    private let started: Bool
    private var input: [UInt8] = []
    private var inputPosition = 0
    /// Compressed offset of `input[0]`.
    private var inputBase: Int64 = 0
    private var finished = false
    private var phase = Phase.betweenMembers
    /// An event found together with output, to report on the next call.
    private var deferred: Event?

    /// - Parameter base: the offset of the first byte appended in the whole input (where gzip data starts after plain).
    init(base: Int64 = 0) {
        inputBase = base
        stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // 15 + 16: a gzip wrapper (not zlib, not raw), 32 KiB window; zlib checks the CRC-32 and length trailer.
        started = inflateInit2_(stream, 15 + 16, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK
    }

    deinit {
        if started { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Compressed bytes appended and not read yet.
    var pendingInputCount: Int { input.count - inputPosition }

    /// The compressed offset of the next byte to read.
    var inputOffset: Int64 { inputBase + Int64(inputPosition) }

    func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        precondition(!finished, "append after finish")
        compact()
        input.append(contentsOf: bytes)
    }

    func finish() { finished = true }

    private func compact() {
        guard inputPosition > 0 else { return }
        if inputPosition == input.count {
            input.removeAll(keepingCapacity: true)
        } else if inputPosition >= 64 * 1024 && inputPosition * 2 >= input.count {
            input.removeSubrange(0..<inputPosition)
        } else {
            return
        }
        inputBase += Int64(inputPosition)
        inputPosition = 0
    }

    /// The next event; inflated bytes go to the start of `output` (which must not be empty).
    func next(into output: UnsafeMutableBufferPointer<UInt8>) -> Event {
        if let event = deferred {
            deferred = nil
            return event
        }
        while true {
            switch phase {
            case .ended:
                return .end
            case .betweenMembers:
                guard inputPosition < input.count else {
                    if finished {
                        phase = .ended
                        return .end
                    }
                    return .needInput
                }
                if input[inputPosition] != 0x1F || inputPosition + 1 == input.count || input[inputPosition + 1] != 0x8B {
                    if input[inputPosition] == 0x1F && inputPosition + 1 == input.count {
                        // 1F: a member, or not, depending on the next byte; at the end, a member cut short.
                        guard finished else { return .needInput }
                        let start = inputOffset
                        inputPosition = input.count
                        phase = .ended
                        return .truncated(start)
                    }
                    return passThrough(into: output)
                }
                guard started, inflateReset(stream) == Z_OK else {
                    // zlib could not start (out of memory): every member is unreadable.
                    let start = inputOffset
                    inputPosition = input.count
                    return .corrupt(member: start, message: "zlib could not start")
                }
                let start = inputOffset
                phase = .inMember(start: start, produced: false)
                return .memberStart(start)
            case .inMember(let start, let produced):
                if let event = inflateSome(start: start, produced: produced, into: output) { return event }
            case .searching:
                if let event = search() { return event }
            }
        }
    }

    /// One call of `inflate`; `nil` when it only consumed input (a header, say) and the caller should go on.
    private func inflateSome(start: Int64, produced: Bool, into output: UnsafeMutableBufferPointer<UInt8>) -> Event? {
        let available = input.count - inputPosition
        let (status, consumed, written) = input.withUnsafeMutableBufferPointer { all -> (Int32, Int, Int) in
            let take = min(available, 1 << 30)
            stream.pointee.next_in = take > 0 ? all.baseAddress! + inputPosition : nil
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
        if written > 0 { phase = .inMember(start: start, produced: true) }
        let event: Event?
        switch status {
        case Z_STREAM_END:
            phase = .betweenMembers
            event = .memberEnd(start)
        case Z_OK:
            event = nil
        case Z_BUF_ERROR where inputPosition == input.count:
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

    /// Copies the bytes at `inputPosition` (which do not start a member) up to the next member header 1F 8B 08, or as
    /// far as is known not to start one.
    private func passThrough(into output: UnsafeMutableBufferPointer<UInt8>) -> Event {
        let start = inputPosition
        let end: Int = input.withUnsafeBufferPointer { all in
            let base = all.baseAddress!
            var from = start + 1
            while from < all.count, let hit = memchr(base + from, 0x1F, all.count - from) {
                let index = base.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                if index + 2 >= all.count {
                    if finished { return all.count }
                    // Too close to the end to tell: pass it once more input says what it is.
                    if index + 1 == all.count || all[index + 1] == 0x8B { return index }
                    from = index + 1
                    continue
                }
                if all[index + 1] == 0x8B && all[index + 2] == 0x08 { return index }
                from = index + 1
            }
            return all.count
        }
        let count = min(end - start, output.count)
        input.withUnsafeBufferPointer { all in
            _ = memcpy(output.baseAddress!, all.baseAddress! + start, count)
        }
        inputPosition += count
        return .plain(at: inputBase + Int64(start), count: count)
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
        if let found, found + 2 < input.count {
            inputPosition = found
            phase = .betweenMembers
            return nil
        }
        if finished {
            inputPosition = input.count
            phase = .ended
            return .end
        }
        inputPosition = found ?? input.count
        return .needInput
    }
}
