/*
 Reading a file of zstd or LZ4 frames (`.warc.zst`, `.warc.lz4`: one frame, or a few, per WARC record) through the
 events the WARC framer reads gzip members with (CompressedMembers.swift). What differs between the two formats -- a
 frame's magic number, its structure, the library that decodes it -- is a `FrameCodec` (ZstdFrames.swift,
 LZ4Frames.swift); this file is what they share.

 Frames are decoded unit by unit, a unit being a part of the frame whose length the format states before it: the frame
 header, a block with its header, the checksum at the end. A unit goes to the library only when all of it is in the
 input, and the library writes its output into a buffer here that holds a whole block's worth; the framer is then given
 that output in pieces as it asks. So the library sees the same calls however the input was split, and what a frame
 gives before an error (the blocks before the bad one), the error's message and where reading resumes are the same for
 every split. A frame that is whole in the input and small enough is decoded at once instead, when the codec can
 (zstd); if that fails, the frame is decoded unit by unit from its first byte, so its errors are those of that way.

 Between frames: RFC 8878 skippable frames (magic 0x184D2A50 to 0x184D2A5F) are skipped, except that a zstd file may
 start with its dictionary in one (0x184D2A5D), which the codec loads. Bytes that start no frame at all are passed
 through as they are (`plain`), up to the next frame magic, so plain WARC records or garbage between frames reach the
 framer, which frames them or reports them as it does for gzip input.

 After a corrupt frame, reading resumes at the next frame magic after the first byte of the unit that failed. A frame
 magic found that way inside damaged data gives a spare error at worst, never a silent loss.

 Memory: the unit being awaited stays in the caller's input (at most a block and its header: 128 KiB for zstd, 4 MiB
 for LZ4); the output buffer holds one unit's output, or one frame decoded whole (at most `wholeCapacity`).
 */
import Glibc

/// What a codec says the next unit of the frame being read is.
enum FrameUnit: Equatable {
    /// At least this many bytes (from the unit's start) are needed to tell.
    case needs(Int)
    /// The unit is this many bytes.
    case size(Int)
    /// The frame's structure is broken here; the message says how.
    case invalid(String)
    /// The frame has no more units.
    case finished
}

/// One compressed frame format. See the file comment.
protocol FrameCodec {
    /// "zstd frame", "LZ4 frame".
    static var noun: String { get }
    /// The frame magic number (little-endian).
    static var magic: UInt32 { get }
    /// The most output one unit can give (a block, decoded).
    var unitOutputLimit: Int { get }
    /// Starts a frame; `nil`, or the library's message when it cannot.
    mutating func startFrame() -> String?
    /// The next unit, given the bytes from its start (`available` of them, at least 1).
    func nextUnit(_ bytes: UnsafePointer<UInt8>, available: Int) -> FrameUnit
    /// Decodes one whole unit into `output` (at least `unitOutputLimit` bytes); notes the unit's structure.
    /// - Returns: the bytes written and whether the frame ended, or the library's message.
    mutating func decode(_ unit: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>)
        -> Result<(written: Int, frameEnded: Bool), FrameError>
    /// Decodes the whole frame at `bytes` into `output` when it is all there, fits and is valid: (bytes read, bytes
    /// written); `nil` otherwise, nothing changed.
    mutating func decodeWhole(_ bytes: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>) -> (
        Int, Int
    )?
    /// The payload of a dictionary frame at the start of the file; `nil`, or why it cannot be used.
    mutating func loadDictionary(_ payload: [UInt8]) -> String?
    /// Whether a dictionary frame at the start of the file is read (zstd) or skipped (LZ4).
    static var readsDictionaryFrame: Bool { get }
}

/// A library's error message.
struct FrameError: Error, Equatable {
    var message: String
}

/// Reads zstd or LZ4 frames piece by piece. See the file comment.
final class FrameMembers<Codec: FrameCodec> {
    private enum Phase {
        /// A frame (or a skippable frame, or plain bytes) is expected at `inputPosition`.
        case betweenFrames
        /// Skipping the data of a skippable frame that began at `start`; `dictionary`: it is kept, to be loaded.
        case skipping(start: Int64, remaining: Int, dictionary: Bool)
        /// Reading the frame that began at `start` unit by unit.
        case inFrame(start: Int64)
        /// Looking for the next frame magic.
        case searching
        case ended
    }

    /// The most a frame may decode to and still be decoded whole (see the file comment).
    static var wholeCapacity: Int { 512 * 1024 }
    /// The largest dictionary frame read: the WARC-zstd rules let readers refuse dictionaries over 8 MiB.
    static var maxDictionaryBytes: Int { 8 << 20 }

    private var codec: Codec
    /// The caller's compressed input, lent for one `next` call (swapped in and back).
    private var input = FramerInput()
    private var finished = false
    private var phase = Phase.betweenFrames
    /// Nothing has been read yet: a dictionary frame is read only here.
    private var atStart = true
    /// An event found together with output, to report on the next call.
    private var deferred: MemberEvent?
    /// Decoded bytes not yet given to the caller: `decoded[delivered..<decodedCount]`.
    private var decoded = UnsafeMutableBufferPointer<UInt8>(start: nil, count: 0)
    private var decodedCount = 0
    private var delivered = 0
    /// The frame's last output is in `decoded`: the frame ends when it is delivered.
    private var frameDone = false
    /// The dictionary frame's data, as it arrives.
    private var dictionary: [UInt8] = []
    /// Frames decoded whole so far (the tests watch it).
    private(set) var wholeFrameCount = 0

    init(_ codec: Codec) {
        self.codec = codec
    }

    deinit { decoded.deallocate() }

    private var inputPosition: Int {
        get { input.readerIndex }
        set { input.readerIndex = newValue }
    }

    /// The next event, reading compressed bytes from `compressed`; decoded bytes go to the start of `output`.
    /// - Parameters:
    ///   - compressed: the input; its offsets are the compressed offsets reported.
    ///   - ended: no more bytes will be written to `compressed`.
    ///   - output: where decoded bytes go (must not be empty).
    /// - Returns: what happened: a frame's start or end, bytes decoded, plain bytes, a corrupt or truncated frame, or
    ///   more input needed.
    func next(from compressed: inout FramerInput, ended: Bool, into output: UnsafeMutableBufferPointer<UInt8>)
        -> MemberEvent
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
            case .betweenFrames:
                if let event = betweenFrames(into: output) { return event }
            case .skipping(let start, let remaining, let keep):
                if let event = skip(start: start, remaining: remaining, keep: keep) { return event }
            case .inFrame(let start):
                if let event = readFrame(start: start, into: output) { return event }
            case .searching:
                if let event = search() { return event }
            }
        }
    }

    /// What the 4 bytes at `index` are: a frame magic, a skippable frame's, neither, or not known yet (`nil`: a proper
    /// prefix of a magic at the end of input that may grow).
    private enum Magic { case frame, skippable, none }

    private func magic(at index: Int) -> Magic? {
        let available = input.writerIndex - index
        var head: UInt32 = 0
        for k in 0..<min(4, available) { head |= UInt32(input[index + k]) << (8 * UInt32(k)) }
        if available >= 4 {
            if head == Codec.magic { return .frame }
            return head & 0xFFFF_FFF0 == FrameMagic.skippable ? .skippable : Magic.none
        }
        let known: UInt32 = (1 << (8 * UInt32(available))) - 1
        let prefix = (head ^ Codec.magic) & known == 0 || (head ^ FrameMagic.skippable) & known & 0xFFFF_FFF0 == 0
        return prefix && !finished ? nil : Magic.none
    }

    private func betweenFrames(into output: UnsafeMutableBufferPointer<UInt8>) -> MemberEvent? {
        guard inputPosition < input.writerIndex else {
            if finished {
                phase = .ended
                return .end
            }
            return .needInput
        }
        let first = atStart
        atStart = false
        guard let kind = magic(at: inputPosition) else {
            atStart = first
            return .needInput
        }
        let start = input.readerOffset
        switch kind {
        case .none:
            return passThrough(into: output)
        case .skippable:
            guard input.writerIndex - inputPosition >= 8 else {
                guard finished else {
                    atStart = first
                    return .needInput
                }
                inputPosition = input.writerIndex
                phase = .ended
                return .truncated(start)
            }
            var size = 0
            for k in 0..<4 { size |= Int(input[inputPosition + 4 + k]) << (8 * k) }
            let isDictionary = first && Codec.readsDictionaryFrame && input[inputPosition] == 0x5D
            inputPosition += 8
            if isDictionary && size > Self.maxDictionaryBytes {
                phase = .skipping(start: start, remaining: size, dictionary: false)
                return .corrupt(
                    member: start,
                    message: "its dictionary frame holds \(size) bytes, over the limit of \(Self.maxDictionaryBytes)")
            }
            phase = .skipping(start: start, remaining: size, dictionary: isDictionary)
            return nil
        case .frame:
            if let message = codec.startFrame() { return fail(start, message) }
            decodedCount = 0
            delivered = 0
            frameDone = false
            decodeWhole()
            phase = .inFrame(start: start)
            return .memberStart(start)
        }
    }

    private func skip(start: Int64, remaining: Int, keep: Bool) -> MemberEvent? {
        let n = min(remaining, input.writerIndex - inputPosition)
        if keep { input.copyBytes(in: inputPosition..<inputPosition + n, to: &dictionary) }
        inputPosition += n
        guard n == remaining else {
            phase = .skipping(start: start, remaining: remaining - n, dictionary: keep)
            guard finished else { return .needInput }
            phase = .ended
            return .truncated(start)
        }
        phase = .betweenFrames
        guard keep else { return nil }
        let message = codec.loadDictionary(dictionary)
        dictionary = []
        return message.map { .corrupt(member: start, message: $0) }
    }

    /// Makes sure `decoded` holds at least `count` bytes.
    private func reserve(_ count: Int) {
        guard decoded.count < count else { return }
        decoded.deallocate()
        decoded = .allocate(capacity: count)
    }

    /// Decodes the frame at `inputPosition` at once into `decoded`, if the codec can (see the file comment).
    private func decodeWhole() {
        reserve(Self.wholeCapacity)
        let whole = UnsafeMutableBufferPointer(rebasing: decoded[0..<Self.wholeCapacity])
        let result = input.withUnsafeBufferPointer { all in
            codec.decodeWhole(UnsafeBufferPointer(rebasing: all[inputPosition...]), into: whole)
        }
        guard let (read, written) = result else { return }
        inputPosition += read
        decodedCount = written
        frameDone = true
        wholeFrameCount += 1
    }

    private func readFrame(start: Int64, into output: UnsafeMutableBufferPointer<UInt8>) -> MemberEvent? {
        if delivered < decodedCount {
            let n = min(decodedCount - delivered, output.count)
            _ = memcpy(output.baseAddress!, decoded.baseAddress! + delivered, n)
            delivered += n
            return .output(n)
        }
        if frameDone {
            phase = .betweenFrames
            return .memberEnd(start)
        }
        let available = input.writerIndex - inputPosition
        let unit: FrameUnit =
            available == 0
            ? .needs(1)
            : input.withUnsafeBufferPointer { codec.nextUnit($0.baseAddress! + inputPosition, available: available) }
        let count: Int
        switch unit {
        case .needs(let needed):
            count = max(needed, available + 1)
        case .size(let size):
            count = size
        case .invalid(let message):
            return fail(start, message)
        case .finished:
            // The codec saw the frame's last unit and the library did not end it: cannot happen with a correct codec.
            return fail(start, "the frame did not end after its last block")
        }
        guard count <= available else {
            guard finished else { return .needInput }
            inputPosition = input.writerIndex
            phase = .ended
            return .truncated(start)
        }
        reserve(codec.unitOutputLimit)
        let result = input.withUnsafeBufferPointer { all in
            codec.decode(UnsafeBufferPointer(rebasing: all[inputPosition..<inputPosition + count]), into: decoded)
        }
        switch result {
        case .failure(let error):
            return fail(start, error.message)
        case .success(let (written, ended)):
            inputPosition += count
            decodedCount = written
            delivered = 0
            frameDone = ended
            return nil
        }
    }

    /// The frame that began at `start` is corrupt: reading resumes at the next frame magic after the first byte of the
    /// unit at `inputPosition`.
    private func fail(_ start: Int64, _ message: String) -> MemberEvent {
        inputPosition += 1
        phase = .searching
        return .corrupt(member: start, message: message)
    }

    /// Copies the bytes at `inputPosition` (which start no frame) up to where one may start.
    private func passThrough(into output: UnsafeMutableBufferPointer<UInt8>) -> MemberEvent {
        let start = inputPosition
        var end = start + 1
        while end < input.writerIndex && end - start < output.count {
            let byte = input[end]
            if byte == UInt8(truncatingIfNeeded: Codec.magic) || byte & 0xF0 == 0x50, magic(at: end) != Magic.none {
                break
            }
            end += 1
        }
        let count = end - start
        input.withBytes(in: start..<end) { _ = memcpy(output.baseAddress!, $0.baseAddress!, count) }
        inputPosition = end
        return .plain(at: input.offset(of: start), count: count)
    }

    /// Skips to the next frame magic at or after `inputPosition`.
    private func search() -> MemberEvent? {
        let first = UInt8(truncatingIfNeeded: Codec.magic)
        var from = inputPosition
        while let hit = input.firstIndex(of: first, from: from) {
            guard let kind = magic(at: hit) else {
                // A magic's first bytes at the end: kept for more input.
                inputPosition = hit
                return .needInput
            }
            if kind == .frame {
                inputPosition = hit
                phase = .betweenFrames
                return nil
            }
            from = hit + 1
        }
        inputPosition = input.writerIndex
        if finished {
            phase = .ended
            return .end
        }
        return .needInput
    }
}
