/// The lanes of `word` (8 string bytes, loaded little-endian) that end a plain run inside a JSON string -- '"', '\\',
/// a control character or a non-ASCII byte -- as the high bit of each flagged byte; zero when all 8 are plain. Each
/// test flags its first hit correctly (borrows only travel towards later bytes), so the lowest flagged byte
/// (`trailingZeroBitCount >> 3`) is a real stop. Shared by the transcoder and the JSONValue reader.
@inline(__always)
func jsonStringStops(_ word: UInt64) -> UInt64 {
    let ones: UInt64 = 0x0101_0101_0101_0101
    let quotes = word ^ (ones &* 0x22)
    let backslashes = word ^ (ones &* 0x5C)
    let stops =
        ((quotes &- ones) & ~quotes) | ((backslashes &- ones) & ~backslashes)
        | ((word &- ones &* 0x20) & ~word) | word
    return stops & 0x8080_8080_8080_8080
}
