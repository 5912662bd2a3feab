/*
 `.warc.zst`: zstd frames (RFC 8878), one or more per WARC record, as the IIPC's WARC-zstd rules write them, decoded by
 libzstd (docs/framings.md#warc). FrameMembers.swift reads the file frame by frame; this file is what is zstd's:

 - a frame's units: its header (4-byte magic, a descriptor byte that says how long the header is), blocks (a 3-byte
   header giving the block's type and size, at most 128 KiB), and an XXH64 checksum when the descriptor says so;
 - libzstd's streaming context decodes each unit and checks the checksum; a frame that is whole in the input, states
   its content size and decodes to at most `FrameMembers.wholeCapacity` is decoded in one call instead;
 - a window larger than 2^`maxWindowLog` bytes is refused before anything is allocated for it, in both ways;
 - the dictionary: a file may start with a skippable frame of magic 0x184D2A5D holding a zstd dictionary (starting
   37 A4 30 EC) or one zstd frame that decodes to one (at most 8 MiB); it is then used for every frame.
 */
internal import CZstd

/// The zstd frames of a `.warc.zst`.
typealias ZstdFrames = FrameMembers<ZstdCodec>

/// zstd's part of reading frames. See the file comment.
final class ZstdCodec: FrameCodec {
    static let noun = "zstd frame"
    static let magic: UInt32 = 0xFD2F_B528
    static let readsDictionaryFrame = true
    /// The largest window a frame may ask for, as a power of two: 2^27 bytes (128 MiB), what `zstd -d` accepts by
    /// default; the WARC-zstd rules ask readers for 2^23 at least. A frame over it is a corrupt one
    /// (docs/framings.md#warc).
    static let maxWindowLog = 27
    /// zstd's largest block, decoded.
    var unitOutputLimit: Int { 128 * 1024 }

    private enum Stage { case header, block, checksum, done }

    private let context: OpaquePointer?
    private var stage = Stage.header
    private var checksum = false

    init() {
        context = ZSTD_createDCtx()
        if let context {
            _ = ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, Int32(Self.maxWindowLog))
        }
    }

    deinit { ZSTD_freeDCtx(context) }

    private static func message(_ code: Int) -> String { String(cString: ZSTD_getErrorName(code)) }

    /// What a unit decoded piece by piece says when it fails. The room given is always a whole block's, so libzstd's
    /// "Destination buffer is too small" means a block decodes past the frame's own declared size into its internal
    /// buffer, whose size depends on the frames it decoded before (it keeps a larger buffer for a while): the same
    /// corrupt frame said that after one history and "Data corruption detected" after another (found by the `zst`
    /// fuzz target, which reads every input whole and in pieces). Both are the frame's corruption, said one way.
    private static func streamMessage(_ code: Int) -> String {
        let text = message(code)
        return text == "Destination buffer is too small" ? "Data corruption detected" : text
    }

    func startFrame() -> String? {
        guard let context else { return "libzstd could not start" }
        let reset = ZSTD_DCtx_reset(context, ZSTD_reset_session_only)
        if ZSTD_isError(reset) != 0 { return Self.message(reset) }
        stage = .header
        return nil
    }

    func nextUnit(_ bytes: UnsafePointer<UInt8>, available: Int) -> FrameUnit {
        switch stage {
        case .header:
            guard available >= 5 else { return .needs(5) }
            let descriptor = bytes[4]
            let singleSegment = descriptor & 0x20 != 0
            let dictionaryID = [0, 1, 2, 4][Int(descriptor & 3)]
            let contentSize = [singleSegment ? 1 : 0, 2, 4, 8][Int(descriptor >> 6)]
            return .size(5 + (singleSegment ? 0 : 1) + dictionaryID + contentSize)
        case .block:
            guard available >= 3 else { return .needs(3) }
            let header = Int(bytes[0]) | Int(bytes[1]) << 8 | Int(bytes[2]) << 16
            let size = header >> 3
            switch (header >> 1) & 3 {
            case 1: return .size(3 + 1)
            case 3: return .invalid("a block of the reserved type 3")
            default:
                guard size <= unitOutputLimit else {
                    return .invalid("a block of \(size) bytes, over zstd's maximum of \(unitOutputLimit)")
                }
                return .size(3 + size)
            }
        case .checksum:
            return .size(4)
        case .done:
            return .finished
        }
    }

    func decode(_ unit: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>)
        -> Result<(written: Int, frameEnded: Bool), FrameError>
    {
        var source = ZSTD_inBuffer(src: unit.baseAddress, size: unit.count, pos: 0)
        var target = ZSTD_outBuffer(dst: output.baseAddress, size: output.count, pos: 0)
        let result = ZSTD_decompressStream(context, &target, &source)
        if ZSTD_isError(result) != 0 { return .failure(FrameError(message: Self.streamMessage(result))) }
        guard source.pos == unit.count else {
            return .failure(FrameError(message: "libzstd did not read a whole unit"))
        }
        switch stage {
        case .header:
            checksum = unit[4] & 0x04 != 0
            stage = .block
        case .block:
            if unit[0] & 1 != 0 { stage = checksum ? .checksum : .done }
        case .checksum, .done:
            stage = .done
        }
        if result == 0 { stage = .done }
        return .success((target.pos, result == 0))
    }

    func decodeWhole(_ bytes: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>) -> (Int, Int)?
    {
        guard let context, bytes.count >= 6 else { return nil }
        let size = ZSTD_findFrameCompressedSize(bytes.baseAddress, bytes.count)
        guard ZSTD_isError(size) == 0, size <= bytes.count else { return nil }
        let content = ZSTD_getFrameContentSize(bytes.baseAddress, size)
        // (ZSTD_CONTENTSIZE_UNKNOWN and ZSTD_CONTENTSIZE_ERROR are the two largest values.)
        guard content < UInt64.max - 1, content <= UInt64(output.count) else { return nil }
        // The window limit, as the streaming context applies it (the one-call decoder needs no window).
        let descriptor = bytes[4]
        if descriptor & 0x20 == 0 {
            let windowLog = 10 + Int(bytes[5] >> 3)
            guard windowLog < Self.maxWindowLog || (windowLog == Self.maxWindowLog && bytes[5] & 7 == 0) else {
                return nil
            }
        }
        let written = ZSTD_decompressDCtx(context, output.baseAddress, output.count, bytes.baseAddress, size)
        guard ZSTD_isError(written) == 0, written == Int(content) else {
            _ = ZSTD_DCtx_reset(context, ZSTD_reset_session_only)
            return nil
        }
        return (size, written)
    }

    func loadDictionary(_ payload: [UInt8]) -> String? {
        guard let context else { return "libzstd could not start" }
        let dictionaryMagic: [UInt8] = [0x37, 0xA4, 0x30, 0xEC]
        let frameMagic: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]
        var dictionary = payload
        if payload.starts(with: frameMagic) {
            let content = ZSTD_getFrameContentSize(payload, payload.count)
            guard content < UInt64.max - 1 else {
                return "its dictionary frame holds a zstd frame that does not state its content size"
            }
            guard content <= UInt64(FrameMembers<ZstdCodec>.maxDictionaryBytes) else {
                return "its dictionary frame holds a zstd frame of \(content) bytes, over the limit of "
                    + "\(FrameMembers<ZstdCodec>.maxDictionaryBytes)"
            }
            dictionary = [UInt8](repeating: 0, count: Int(content))
            let written = ZSTD_decompress(&dictionary, dictionary.count, payload, payload.count)
            if ZSTD_isError(written) != 0 {
                return "its dictionary frame holds a zstd frame that does not decode: \(Self.message(written))"
            }
            dictionary.removeSubrange(written...)
        }
        guard dictionary.starts(with: dictionaryMagic) else {
            return "its dictionary frame holds neither a zstd dictionary (37 A4 30 EC) nor a zstd frame"
        }
        let loaded = ZSTD_DCtx_loadDictionary(context, dictionary, dictionary.count)
        if ZSTD_isError(loaded) != 0 { return "its dictionary cannot be used: \(Self.message(loaded))" }
        return nil
    }
}
