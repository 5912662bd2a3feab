import CLZ4
import CZstd

/// Makes zstd and LZ4 frames at test time (`.warc.zst`, `.warc.lz4`), through libzstd and liblz4's frame API.
enum FrameFixtures {
    /// `bytes` as one zstd frame.
    static func zstdFrame(
        _ bytes: [UInt8], level: Int32 = 3, checksum: Bool = true, contentSize: Bool = true, windowLog: Int32? = nil
    ) -> [UInt8] {
        let context = ZSTD_createCCtx()
        defer { ZSTD_freeCCtx(context) }
        _ = ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level)
        _ = ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, checksum ? 1 : 0)
        _ = ZSTD_CCtx_setParameter(context, ZSTD_c_contentSizeFlag, contentSize ? 1 : 0)
        if let windowLog { _ = ZSTD_CCtx_setParameter(context, ZSTD_c_windowLog, windowLog) }
        var output = [UInt8](repeating: 0, count: ZSTD_compressBound(bytes.count) + 64)
        let written: Int
        if contentSize {
            written = ZSTD_compress2(context, &output, output.count, bytes, bytes.count)
        } else {
            // Streamed: the content size is not known when the header is written.
            written = bytes.withUnsafeBufferPointer { source in
                output.withUnsafeMutableBufferPointer { target in
                    var inBuffer = ZSTD_inBuffer(src: source.baseAddress, size: source.count, pos: 0)
                    var outBuffer = ZSTD_outBuffer(dst: target.baseAddress, size: target.count, pos: 0)
                    while ZSTD_compressStream2(context, &outBuffer, &inBuffer, ZSTD_e_end) != 0 {}
                    return outBuffer.pos
                }
            }
        }
        precondition(ZSTD_isError(written) == 0)
        return Array(output.prefix(written))
    }

    /// `bytes` as one LZ4 frame.
    static func lz4Frame(
        _ bytes: [UInt8], contentSize: Bool = true, checksum: Bool = true, blockChecksum: Bool = false,
        blockSize: LZ4F_blockSizeID_t = LZ4F_max64KB, linked: Bool = true
    ) -> [UInt8] {
        var preferences = LZ4F_preferences_t()
        preferences.frameInfo.blockSizeID = blockSize
        preferences.frameInfo.blockMode = linked ? LZ4F_blockLinked : LZ4F_blockIndependent
        preferences.frameInfo.contentChecksumFlag = checksum ? LZ4F_contentChecksumEnabled : LZ4F_noContentChecksum
        preferences.frameInfo.blockChecksumFlag = blockChecksum ? LZ4F_blockChecksumEnabled : LZ4F_noBlockChecksum
        preferences.frameInfo.contentSize = contentSize ? UInt64(bytes.count) : 0
        var output = [UInt8](repeating: 0, count: LZ4F_compressFrameBound(bytes.count, &preferences))
        let written = LZ4F_compressFrame(&output, output.count, bytes, bytes.count, &preferences)
        precondition(LZ4F_isError(written) == 0)
        return Array(output.prefix(written))
    }

    /// A skippable frame (magic 0x184D2A50 + `nibble`) holding `payload`.
    static func skippable(_ nibble: UInt8, _ payload: [UInt8]) -> [UInt8] {
        let n = UInt32(payload.count)
        return [
            0x50 | nibble, 0x2A, 0x4D, 0x18, UInt8(n & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n >> 16 & 0xFF),
            UInt8(n >> 24),
        ]
            + payload
    }

    /// Each record its own frame; also the frames' offsets.
    static func perRecord(_ records: [[UInt8]], _ frame: ([UInt8]) -> [UInt8]) -> (bytes: [UInt8], offsets: [Int64]) {
        var bytes: [UInt8] = []
        var offsets: [Int64] = []
        for record in records {
            offsets.append(Int64(bytes.count))
            bytes += frame(record)
        }
        return (bytes, offsets)
    }

    /// A zstd frame header declaring a window of 2^`windowLog` bytes and no content size, then one empty last raw block.
    static func zstdHugeWindow(windowLog: Int) -> [UInt8] {
        [0x28, 0xB5, 0x2F, 0xFD, 0x00, UInt8((windowLog - 10) << 3), 0x01, 0x00, 0x00]
    }
}
