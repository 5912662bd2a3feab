internal import CDeflate

/// CRC-32 (ISO-HDLC, as PNG chunks and gzip members use it) through libdeflate.
///
/// Not zlib's `crc32`: zlib 1.2.13 reads a byte or a word at a time, and a header-only read of a 7 KB PNG checks the
/// CRCs of the chunks libpng did not read (the image data, docs/output.md#image): zlib's CRC was a fifth of the
/// instructions of a 64×64 image record (callgrind, bench/small/run). libdeflate's uses carry-less multiplication
/// where the processor has it, with the same result. Public for the png fuzz target, which sets chunks' CRCs.
public enum CRC32 {
    /// The CRC-32 of `data`.
    public static func checksum(_ data: UnsafeBufferPointer<UInt8>) -> UInt32 {
        guard let base = data.baseAddress, !data.isEmpty else { return 0 }
        return libdeflate_crc32(0, base, data.count)
    }
}
