/*
 The compressed layer under the WARC framer: a stream of gzip members (`.warc.gz`, GzipMembers.swift), zstd frames
 (`.warc.zst`, ZstdFrames.swift) or LZ4 frames (`.warc.lz4`, LZ4Frames.swift), one per record as their writers make
 them. Each is read through the same events (`MemberEvent`), so the framer handles offsets, errors and held records
 one way for all three (docs/framings.md#warc).

 The layer is an enum over the three concrete classes, not a protocol: the switch costs one branch per event, and the
 gzip path -- the hot one -- keeps its direct calls.
 */

/// What a compressed layer reports to the framer. A "member" is a gzip member or a zstd or LZ4 frame.
enum MemberEvent: Equatable {
    /// A member begins at this compressed offset; reported before any of its output.
    case memberStart(Int64)
    /// This many decompressed bytes were written at the start of the output buffer.
    case output(Int)
    /// The member that began at this offset ended; its checks (CRC-32 and length, or the frame's checksum) passed.
    case memberEnd(Int64)
    /// A member that begins at this offset was inflated whole at once: `count` bytes written at the start of the
    /// output buffer, its checks passed. `memberStart`, `output` and `memberEnd` in one.
    case wholeMember(Int64, count: Int)
    /// The member that began at `member` is not valid; `message` is the library's. Later output comes from the next
    /// member found after the point of failure.
    case corrupt(member: Int64, message: String)
    /// This many bytes that are not in any member (they do not start one) were copied, as they are, to the start of
    /// the output buffer; the first of them is at this compressed offset.
    case plain(at: Int64, count: Int)
    /// The input ended inside the member that began at this offset.
    case truncated(Int64)
    /// Nothing more can be done until more input is appended.
    case needInput
    /// The input is finished and all of it has been read.
    case end
}

/// The compressed layer of one input, picked by its first bytes (``detect(_:at:ended:)``).
enum MemberInflater {
    case gzip(GzipMembers)
    case zstd(ZstdFrames)
    case lz4(LZ4Frames)

    /// What the first bytes of an input say.
    enum Detected {
        case gzip, zstd, lz4
        /// Not compressed (or not a compression read here).
        case none
        /// A proper prefix of a magic number: more input decides.
        case undecided
    }

    /// The compression that the bytes at `index` of `input` start: gzip (1F 8B), zstd (28 B5 2F FD, or a skippable
    /// frame, 5? 2A 4D 18: a `.warc.zst` starts with its dictionary frame), LZ4 (04 22 4D 18).
    /// - Parameters:
    ///   - input: the input.
    ///   - index: where it starts.
    ///   - ended: no more bytes will be written to `input`.
    /// - Returns: the layer to use, `.none`, or `.undecided` when more bytes could decide.
    static func detect(_ input: FramerInput, at index: Int, ended: Bool) -> Detected {
        let available = input.writerIndex - index
        guard available > 0 else { return ended ? .none : .undecided }
        var head: UInt32 = 0
        for k in 0..<min(4, available) { head |= UInt32(input[index + k]) << (8 * UInt32(k)) }
        if available >= 2 && head & 0xFFFF == 0x8B1F { return .gzip }
        let candidates: [(magic: UInt32, mask: UInt32, kind: Detected)] = [
            (ZstdCodec.magic, 0xFFFF_FFFF, .zstd), (FrameMagic.skippable, 0xFFFF_FFF0, .zstd),
            (LZ4Codec.magic, 0xFFFF_FFFF, .lz4), (0x8B1F, 0xFFFF, .gzip),
        ]
        let known = available >= 4 ? 0xFFFF_FFFF : (UInt32(1) << (8 * UInt32(available))) - 1
        for candidate in candidates where (head ^ candidate.magic) & candidate.mask & known == 0 {
            if available >= 4 { return candidate.kind }
            if !ended { return .undecided }
        }
        return .none
    }

    /// A new layer of that kind (`nil` for `.none` and `.undecided`).
    init?(_ detected: Detected) {
        switch detected {
        case .gzip: self = .gzip(GzipMembers())
        case .zstd: self = .zstd(ZstdFrames(ZstdCodec()))
        case .lz4: self = .lz4(LZ4Frames(LZ4Codec()))
        case .none, .undecided: return nil
        }
    }

    /// gzip only: the inflater waits for the next member (``GzipMembers/isBetweenMembers``). zstd and LZ4 frames are
    /// never split among workers: a `.warc.zst` may start with a dictionary that every later frame needs.
    var isBetweenMembers: Bool {
        if case .gzip(let members) = self { return members.isBetweenMembers }
        return false
    }

    /// What the framer's messages call one member: "gzip member", "zstd frame", "LZ4 frame".
    var noun: String {
        switch self {
        case .gzip: "gzip member"
        case .zstd: ZstdCodec.noun
        case .lz4: LZ4Codec.noun
        }
    }

    /// The next event (see each layer's `next`).
    /// - Parameters:
    ///   - compressed: the input; its offsets are the compressed offsets reported.
    ///   - ended: no more bytes will be written to `compressed`.
    ///   - output: where decompressed bytes go (must not be empty).
    /// - Returns: what happened.
    @inline(__always)
    func next(from compressed: inout FramerInput, ended: Bool, into output: UnsafeMutableBufferPointer<UInt8>)
        -> MemberEvent
    {
        switch self {
        case .gzip(let members): members.next(from: &compressed, ended: ended, into: output)
        case .zstd(let frames): frames.next(from: &compressed, ended: ended, into: output)
        case .lz4(let frames): frames.next(from: &compressed, ended: ended, into: output)
        }
    }
}

/// RFC 8878's skippable frames, which zstd and LZ4 files share: magic 0x184D2A50 to 0x184D2A5F (little-endian), a
/// 4-byte little-endian size, that many bytes of data.
enum FrameMagic {
    static let skippable: UInt32 = 0x184D_2A50
    /// The skippable frame a `.warc.zst` may start with to hold its dictionary.
    static let dictionary: UInt32 = 0x184D_2A5D
}
