/*
 The zstd Content-Encoding (RFC 8878, RFC 9659) through libzstd's streaming decoder; the only Swift file that calls
 libzstd.

 Frames one after another (and skippable frames between them) are one body, as `zstd -d` takes them. Windows are
 held to 8 MiB (`ZSTD_d_windowLogMax` 23, RFC 9659 §3: HTTP decoders need not support more), so a frame made with
 `--long=27` is refused before its window is allocated. A frame's declared content size is never used to size the
 output: the output grows as ``BoundedOutput`` allows, and stops at its limit.
 */
internal import CZstd

/// libzstd's streaming decoder, bounded.
enum Zstd {
    /// Largest window a frame may ask for: 2^23 = 8 MiB (RFC 9659).
    static let windowLogMax: Int32 = 23

    /// Whether `data` starts with a zstd frame magic (28 B5 2F FD) or a skippable-frame magic (5? 2A 4D 18).
    static func hasFrameMagic(_ data: UnsafeBufferPointer<UInt8>) -> Bool {
        guard data.count >= 4 else { return false }
        if data[0] == 0x28 && data[1] == 0xB5 && data[2] == 0x2F && data[3] == 0xFD { return true }
        return data[0] & 0xF0 == 0x50 && data[1] == 0x2A && data[2] == 0x4D && data[3] == 0x18
    }

    /// Decompresses `data`, every frame of it, into `output`.
    ///
    /// Ends with `.finished` after the last frame, counting input bytes after it that start no frame; `.failed` with
    /// libzstd's message and the input offset it had reached, including for a frame that ends early.
    static func decompress(_ data: UnsafeBufferPointer<UInt8>, into output: inout BoundedOutput) -> CodecResult {
        guard let context = ZSTD_createDCtx() else { return .failed("zstd could not start", offset: nil) }
        defer { ZSTD_freeDCtx(context) }
        let set = ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, windowLogMax)
        guard ZSTD_isError(set) == 0 else { return .failed(errorName(set), offset: nil) }

        var input = ZSTD_inBuffer(src: data.baseAddress, size: data.count, pos: 0)
        return output.fill { free -> (written: Int, result: CodecResult?) in
            var out = ZSTD_outBuffer(dst: free.baseAddress, size: free.count, pos: 0)
            while out.pos < out.size {
                let before = (input.pos, out.pos)
                let hint = ZSTD_decompressStream(context, &out, &input)
                if ZSTD_isError(hint) != 0 { return (out.pos, .failed(errorName(hint), offset: input.pos)) }
                if hint == 0 {
                    // A frame is decoded and flushed; the next one, if any, starts at input.pos.
                    let rest = UnsafeBufferPointer(rebasing: data[input.pos...])
                    if rest.isEmpty || !hasFrameMagic(rest) { return (out.pos, .finished(trailing: rest.count)) }
                    continue
                }
                if input.pos == input.size && out.pos < out.size {
                    return (out.pos, .failed("the compressed data ends early (truncated)", offset: input.pos))
                }
                if (input.pos, out.pos) == before {
                    return (out.pos, .failed("zstd made no progress", offset: input.pos))
                }
            }
            return (out.pos, nil)
        }
    }

    private static func errorName(_ code: Int) -> String {
        ZSTD_getErrorName(code).map { String(cString: $0) } ?? "zstd error \(code)"
    }
}
