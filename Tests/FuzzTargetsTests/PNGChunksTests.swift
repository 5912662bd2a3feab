import RespDecodeTestSupport
import Testing

@testable import FuzzTargets

/// The png fuzz target's second variant: each chunk's CRC made right, so that mutations behind the CRCs reach the
/// image data inflated whole (CShims/png.c).
@Suite struct PNGChunksTests {
    @Test func crc32IsPNGs() {
        // The CRC-32 check value of ISO 3309 / ITU-T V.42, and an IEND chunk's CRC as every PNG ends with it.
        #expect(PNGChunks.crc32(ArraySlice(Array("123456789".utf8))) == 0xCBF4_3926)
        #expect(PNGChunks.crc32(ArraySlice(Array("IEND".utf8))) == 0xAE42_6082)
    }

    @Test func wrongCRCsAreMadeRightAndTheRestIsKept() throws {
        let signature: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        let text: [UInt8] = [0, 0, 0, 3] + Array("tEXt".utf8) + [0x61, 0, 0x62]
        let iend: [UInt8] = [0, 0, 0, 0] + Array("IEND".utf8) + [0xAE, 0x42, 0x60, 0x82]
        let right = signature + text + [0xDC, 0x49, 0xA2, 0x3B] + iend + [1, 2, 3]
        #expect(PNGChunks.crc32(ArraySlice(text[4...])) == 0xDC49_A23B) // zlib.crc32(b"tEXta\x00b")
        var wrong = right
        wrong[signature.count + text.count] ^= 0xFF // the tEXt chunk's CRC
        wrong[wrong.count - 4] ^= 0x01 // IEND's
        #expect(PNGChunks.withCRCsMadeRight(wrong) == right)
        // A chunk cut short is left as it is; no whole chunk at all gives nil.
        #expect(PNGChunks.withCRCsMadeRight(Array(right.prefix(signature.count + 10))) == nil)
        let cut = Array(right.prefix(signature.count + text.count + 4 + 6))
        #expect(
            PNGChunks.withCRCsMadeRight(cut) == Array(right.prefix(signature.count + text.count + 4)) + cut.suffix(6))
    }
}
