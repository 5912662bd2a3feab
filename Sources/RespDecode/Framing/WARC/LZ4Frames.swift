/*
 `.warc.lz4`: LZ4 frames (the LZ4 frame format), one per WARC record, as FastWARC writes them, decoded by liblz4's
 LZ4F_ API (docs/framings.md#warc). FrameMembers.swift reads the file frame by frame; this file is what is LZ4's:

 - a frame's units: its header (magic 04 22 4D 18, a flag byte that says which optional fields follow, the block
   descriptor, a header checksum), blocks (a 4-byte size, at most 4 MiB, the data, a 4-byte checksum when the flags
   say so), and the end mark (4 zero bytes) with the content checksum when the flags say so;
 - liblz4 decodes each unit and checks the header, block and content checksums and the content size, if stated.
 LZ4 files have no dictionary frame: skippable frames are all skipped.
 */
internal import CLZ4

/// The LZ4 frames of a `.warc.lz4`.
typealias LZ4Frames = FrameMembers<LZ4Codec>

/// liblz4's part of reading frames. See the file comment.
final class LZ4Codec: FrameCodec {
    static let noun = "LZ4 frame"
    static let magic: UInt32 = 0x184D_2204
    static let readsDictionaryFrame = false
    /// The frame's largest block, decoded (its block descriptor says: 64 KiB to 4 MiB).
    private(set) var unitOutputLimit = 64 * 1024

    private enum Stage { case header, block, done }

    private var context: OpaquePointer?
    private var stage = Stage.header
    private var blockChecksum = false
    private var contentChecksum = false

    init() {
        var created: OpaquePointer?
        if LZ4F_isError(LZ4F_createDecompressionContext(&created, UInt32(LZ4F_VERSION))) == 0 { context = created }
    }

    deinit { if let context { LZ4F_freeDecompressionContext(context) } }

    func startFrame() -> String? {
        guard let context else { return "liblz4 could not start" }
        LZ4F_resetDecompressionContext(context)
        stage = .header
        return nil
    }

    func nextUnit(_ bytes: UnsafePointer<UInt8>, available: Int) -> FrameUnit {
        switch stage {
        case .header:
            guard available >= 7 else { return .needs(7) }
            let flags = bytes[4]
            return .size(7 + (flags & 0x08 != 0 ? 8 : 0) + (flags & 0x01 != 0 ? 4 : 0))
        case .block:
            guard available >= 4 else { return .needs(4) }
            let word = Int(bytes[0]) | Int(bytes[1]) << 8 | Int(bytes[2]) << 16 | Int(bytes[3]) << 24
            if word == 0 { return .size(4 + (contentChecksum ? 4 : 0)) }
            let size = word & 0x7FFF_FFFF
            guard size <= 4 << 20 else { return .invalid("a block of \(size) bytes, over LZ4's maximum of 4 MiB") }
            return .size(4 + size + (blockChecksum ? 4 : 0))
        case .done:
            return .finished
        }
    }

    func decode(_ unit: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>)
        -> Result<(written: Int, frameEnded: Bool), FrameError>
    {
        var written = output.count
        var read = unit.count
        let result = LZ4F_decompress(context, output.baseAddress, &written, unit.baseAddress, &read, nil)
        if LZ4F_isError(result) != 0 {
            return .failure(FrameError(message: String(cString: LZ4F_getErrorName(result))))
        }
        guard read == unit.count else { return .failure(FrameError(message: "liblz4 did not read a whole unit")) }
        switch stage {
        case .header:
            let flags = unit[4]
            blockChecksum = flags & 0x10 != 0
            contentChecksum = flags & 0x04 != 0
            unitOutputLimit = 1 << (8 + 2 * min(7, max(4, Int(unit[5] >> 4) & 7)))
            stage = .block
        case .block:
            if unit[0] == 0 && unit[1] == 0 && unit[2] == 0 && unit[3] == 0 { stage = .done }
        case .done:
            break
        }
        if result == 0 { stage = .done }
        return .success((written, result == 0))
    }

    func decodeWhole(_ bytes: UnsafeBufferPointer<UInt8>, into output: UnsafeMutableBufferPointer<UInt8>) -> (Int, Int)?
    {
        nil
    }

    func loadDictionary(_ payload: [UInt8]) -> String? { nil }
}
