import Foundation
import RespDecodeTestSupport
import Testing

@testable import RespDecode

@Suite("Base64, base32 and hex decoding")
struct BaseDecodingTests {
    /// Foundation's encoder is the reference; every length (so every tail) and both alphabets.
    @Test func base64RoundTripsEveryLength() {
        var generator = SplitMix64(seed: 64)
        for length in 0..<300 {
            let bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let standard = Data(bytes).base64EncodedString()
            #expect(BaseDecoding.base64(standard) == bytes, "length \(length)")
            let unpadded = standard.replacing("=", with: "")
            #expect(BaseDecoding.base64(unpadded) == bytes, "unpadded, length \(length)")
            let url = standard.replacing("+", with: "-").replacing("/", with: "_")
            #expect(BaseDecoding.base64(url, urlSafe: true) == bytes, "URL alphabet, length \(length)")
            if url != standard { #expect(BaseDecoding.base64(url) == nil, "URL alphabet refused by default") }
            let wrapped = Data(bytes).base64EncodedString(options: [.lineLength76Characters])
            #expect(BaseDecoding.base64(wrapped, ignoringWhitespace: true) == bytes, "wrapped, length \(length)")
        }
    }

    @Test(arguments: ["A", "AB=C", "QQ==QUFB", "QQ===", "QUFB!", "QR==", "QUI=x", "QUJ=", " QUFB", "QUFB\n"])
    func base64Rejects(_ text: String) {
        #expect(BaseDecoding.base64(text) == nil, "\(text.debugDescription)")
    }

    @Test func base64Examples() {
        #expect(BaseDecoding.base64("") == [])
        #expect(BaseDecoding.base64("QUJD") == Array("ABC".utf8))
        #expect(BaseDecoding.base64("QUI=") == Array("AB".utf8))
        #expect(BaseDecoding.base64("QQ==") == Array("A".utf8))
        #expect(BaseDecoding.base64(" QU\tJD\r\n", ignoringWhitespace: true) == Array("ABC".utf8))
    }

    /// The two spellings of the SHA-1 of nothing that WARC writers use (RFC 4648 §10 vectors besides).
    @Test func base32AndHex() {
        #expect(
            BaseDecoding.base32("3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ")
                == BaseDecoding.hex("da39a3ee5e6b4b0d3255bfef95601890afd80709"))
        #expect(BaseDecoding.base32("MZXW6YTBOI======") == Array("foobar".utf8))
        #expect(BaseDecoding.base32("mzxw6ytboi") == Array("foobar".utf8))
        #expect(BaseDecoding.base32("MZXW6YTBO1") == nil)
        #expect(BaseDecoding.base32("MZXW6YTBOJ") == nil, "leftover bits must be zero")
        #expect(BaseDecoding.hex("0aFf") == [0x0A, 0xFF])
        #expect(BaseDecoding.hex("abc") == nil)
        #expect(BaseDecoding.hex("zz") == nil)
    }
}
