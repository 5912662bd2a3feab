import CZlib
import Foundation
import Testing

/// Hostile images (docs/reliability.md#png-images and docs/reliability.md#jpeg-images) through the real binary, under
/// the same 256 MB / 1 s
/// harness as the hostile documents: one line each, nothing on stderr. Nested in the documents' suite so the two run
/// one test at a time between them too (the 1 s budgets assume the machine is not busy with the other).
extension HostileDocumentTests {
    @Suite("Hostile images")
    struct HostileImageTests {
        // MARK: PNG, built here

        static func chunk(_ type: String, _ data: Data) -> Data {
            var out = Data()
            let typeBytes = Data(type.utf8)
            withUnsafeBytes(of: UInt32(data.count).bigEndian) { out.append(contentsOf: $0) }
            out.append(typeBytes)
            out.append(data)
            var crc = crc32(0, nil, 0)
            (typeBytes + data).withUnsafeBytes {
                crc = crc32(crc, $0.bindMemory(to: UInt8.self).baseAddress, UInt32($0.count))
            }
            withUnsafeBytes(of: UInt32(crc).bigEndian) { out.append(contentsOf: $0) }
            return out
        }

        static func ihdr(width: UInt32, height: UInt32, bitDepth: UInt8 = 8, colorType: UInt8 = 0) -> Data {
            var data = Data()
            withUnsafeBytes(of: width.bigEndian) { data.append(contentsOf: $0) }
            withUnsafeBytes(of: height.bigEndian) { data.append(contentsOf: $0) }
            data.append(contentsOf: [bitDepth, colorType, 0, 0, 0])
            return chunk("IHDR", data)
        }

        static func png(_ chunks: [Data]) -> Data {
            var out = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
            for chunk in chunks { out.append(chunk) }
            return out
        }

        /// A zlib stream of `count` copies of `byte`, compressed in slices (never holding the whole input).
        static func deflated(repeating byte: UInt8, count: Int) -> Data {
            var stream = z_stream()
            _ = deflateInit_(&stream, 9, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
            defer { deflateEnd(&stream) }
            let slice = [UInt8](repeating: byte, count: 1 << 20)
            var output = [UInt8](repeating: 0, count: 1 << 20)
            var result = Data()
            var left = count
            repeat {
                let take = min(left, slice.count)
                left -= take
                let flush = left == 0 ? Z_FINISH : Z_NO_FLUSH
                slice.withUnsafeBufferPointer { input in
                    stream.next_in = UnsafeMutablePointer(mutating: input.baseAddress)
                    stream.avail_in = UInt32(take)
                    repeat {
                        output.withUnsafeMutableBufferPointer { out in
                            stream.next_out = out.baseAddress
                            stream.avail_out = UInt32(out.count)
                            _ = deflate(&stream, flush)
                            result.append(out.baseAddress!, count: out.count - Int(stream.avail_out))
                        }
                    } while stream.avail_out == 0
                }
            } while left > 0
            return result
        }

        /// A valid 8×8 gray PNG.
        static let small = png([
            ihdr(width: 8, height: 8), chunk("IDAT", deflated(repeating: 0, count: 8 * 9)),
            chunk("IEND", Data()),
        ])

        static func run(_ body: Data, type: String, _ name: String, inflate: Bool) throws -> [String: Any] {
            try HostileDocumentTests.runLimited(body, type: type, name: name, arguments: inflate ? ["--inflate"] : [])
        }

        static func errorCode(_ line: [String: Any]) -> String? {
            (line["error"] as? [String: Any])?["code"] as? String
        }

        @Test func hugeDimensionsAreRejectedBeforeAllocating() throws {
            // 10^6 × 10^6 gray with a one-row IDAT: PNG_IMAGE_SIZE would overflow 32 bits; the budget is 64-bit.
            let body = Self.png([
                Self.ihdr(width: 1_000_000, height: 1_000_000),
                Self.chunk("IDAT", Self.deflated(repeating: 0, count: 1_000_001)), Self.chunk("IEND", Data()),
            ])
            let inflated = try Self.run(body, type: "image/png", "huge_dims.png", inflate: true)
            #expect(Self.errorCode(inflated) == "limitExceeded")
            // Without --inflate nothing is allocated for pixels: the header is reported as it is.
            let header = try Self.run(body, type: "image/png", "huge_dims.png", inflate: false)
            let value = try #require(header["value"] as? [String: Any])
            #expect(value["width"] as? Int == 1_000_000)
        }

        @Test func imageDataBombIsRejectedByThePixelBudget() throws {
            // 20000² gray zeros: ~400 KB that inflate to 400 MB.
            let body = Self.png([
                Self.ihdr(width: 20_000, height: 20_000),
                Self.chunk("IDAT", Self.deflated(repeating: 0, count: 20_001 * 20_000)), Self.chunk("IEND", Data()),
            ])
            #expect(body.count < 1_000_000)
            let line = try Self.run(body, type: "image/png", "idat_bomb.png", inflate: true)
            #expect(Self.errorCode(line) == "limitExceeded")
            let message = try #require((line["error"] as? [String: Any])?["message"] as? String)
            #expect(message.contains("400000000") || message.contains("20000 x 20000"), "\(message)")
        }

        @Test func textBombIsAnErrorInBothModes() throws {
            // 100 MB of 'A' in a zTXt chunk (~100 KB compressed).
            var text = Data("Comment".utf8) + Data([0, 0])
            text += Self.deflated(repeating: UInt8(ascii: "A"), count: 100_000_000)
            let body = Self.png([
                Self.ihdr(width: 8, height: 8), Self.chunk("zTXt", text),
                Self.chunk("IDAT", Self.deflated(repeating: 0, count: 72)), Self.chunk("IEND", Data()),
            ])
            for inflate in [false, true] {
                let line = try Self.run(body, type: "image/png", "ztxt_bomb.png", inflate: inflate)
                #expect(Self.errorCode(line) == "limitExceeded", "inflate: \(inflate)")
            }
            // Many chunks, each under the limit, share one budget.
            var chunks = [Self.ihdr(width: 8, height: 8)]
            let piece = Data("k".utf8) + Data([0, 0]) + Self.deflated(repeating: UInt8(ascii: "B"), count: 7_000_000)
            for _ in 0..<200 { chunks.append(Self.chunk("zTXt", piece)) }
            chunks += [Self.chunk("IDAT", Self.deflated(repeating: 0, count: 72)), Self.chunk("IEND", Data())]
            let many = try Self.run(Self.png(chunks), type: "image/png", "ztxt_many.png", inflate: false)
            #expect(Self.errorCode(many) == "limitExceeded")
        }

        @Test func manyTextChunksAreListedUpToTheCap() throws {
            var chunks = [Self.ihdr(width: 8, height: 8)]
            for i in 0..<100_000 { chunks.append(Self.chunk("tEXt", Data("k\(i)".utf8) + Data([0]) + Data("v".utf8))) }
            chunks += [Self.chunk("IDAT", Self.deflated(repeating: 0, count: 72)), Self.chunk("IEND", Data())]
            let line = try Self.run(Self.png(chunks), type: "image/png", "many_chunks.png", inflate: true)
            let value = try #require(line["value"] as? [String: Any])
            #expect((value["textKeys"] as? [String])?.count == 64)
            #expect((line["warnings"] as? [String])?.contains { $0.contains("99936 more text chunks") } == true)
        }

        @Test func truncatedAndCorruptPNGsAreErrors() throws {
            #expect(try Self.run(Self.small, type: "image/png", "small.png", inflate: true)["ok"] as? Bool == true)
            for cut in [20, 40, Self.small.count - 12, Self.small.count - 1] {
                for inflate in [false, true] {
                    let line = try Self.run(Self.small.prefix(cut), type: "image/png", "trunc.png", inflate: inflate)
                    #expect(Self.errorCode(line) == "invalidImage", "cut at \(cut), inflate \(inflate)")
                }
            }
            var badCRC = Self.small
            badCRC[badCRC.count - 20] ^= 0xFF // inside IDAT's CRC
            for inflate in [false, true] {
                let line = try Self.run(badCRC, type: "image/png", "crc.png", inflate: inflate)
                #expect(Self.errorCode(line) == "invalidImage", "inflate \(inflate)")
            }
        }

        @Test func aWrongAdler32DecodesWhileTheCRCsStillCatchCorruptImageData() throws {
            // The image data's Adler-32 is not checked (docs/output.md): the image decodes as an intact one does.
            var stream = Self.deflated(repeating: 0, count: 8 * 9)
            stream[stream.count - 1] ^= 0x01
            let badAdler = Self.png([
                Self.ihdr(width: 8, height: 8), Self.chunk("IDAT", stream), Self.chunk("IEND", Data()),
            ])
            let intact = try Self.run(Self.small, type: "image/png", "small.png", inflate: true)
            let line = try Self.run(badAdler, type: "image/png", "adler.png", inflate: true)
            #expect(line["ok"] as? Bool == true, "\(line)")
            let decoded = try #require((line["value"] as? [String: Any])?["decoded"] as? [String: Any])
            let expected = try #require((intact["value"] as? [String: Any])?["decoded"] as? [String: Any])
            #expect(decoded["meanColor"] as? [Int] == expected["meanColor"] as? [Int])
            #expect(decoded["dhash"] as? String == expected["dhash"] as? String)
            // The same bit flipped inside the stream with the chunk's CRC left as it was: the CRC catches it.
            var corrupt = Self.small
            let idatData = 8 + 25 + 8 // signature, IHDR chunk, IDAT's length and type
            corrupt[idatData + stream.count - 1] ^= 0x01
            for inflate in [false, true] {
                let flipped = try Self.run(corrupt, type: "image/png", "flipped.png", inflate: inflate)
                #expect(Self.errorCode(flipped) == "invalidImage", "inflate \(inflate)")
            }
        }

        @Test func millionsOfBadChunksGiveOneShortLine() throws {
            // 200,000 text chunks without a keyword (a review found one warning each made a 100 MB line and, at
            // 2,000,000, an abort under the memory limit).
            var chunks = [Self.ihdr(width: 1, height: 1)]
            for _ in 0..<200_000 { chunks.append(Self.chunk("tEXt", Data([0]))) }
            chunks += [Self.chunk("IDAT", Self.deflated(repeating: 0, count: 2)), Self.chunk("IEND", Data())]
            for inflate in [false, true] {
                let line = try Self.run(Self.png(chunks), type: "image/png", "bad_text.png", inflate: inflate)
                let warnings = try #require(line["warnings"] as? [String])
                #expect(warnings.count <= 20, "\(warnings.count) warnings")
                #expect(warnings.contains { $0.contains("more warnings like these") })
            }
        }

        @Test func wideAndTallImagesAreValid() throws {
            // Past libpng's default 1,000,000-pixel side limit, within the pixel budget.
            func image(_ width: Int, _ height: Int) -> Data {
                Self.png([
                    Self.ihdr(width: UInt32(width), height: UInt32(height)),
                    Self.chunk("IDAT", Self.deflated(repeating: 0, count: (width + 1) * height)),
                    Self.chunk("IEND", Data()),
                ])
            }
            let wide = try #require(
                try Self.run(image(1_000_001, 1), type: "image/png", "wide", inflate: true)["value"]
                    as? [String: Any])
            #expect(wide["width"] as? Int == 1_000_001)
            #expect((wide["decoded"] as? [String: Any])?["bytes"] as? Int == 4_000_004)
            let tall = try #require(
                try Self.run(image(1, 2_000_000), type: "image/png", "tall", inflate: false)["value"]
                    as? [String: Any])
            #expect(tall["height"] as? Int == 2_000_000)
            // Decoding is budgeted with each row counted as at least 64 pixels: 100,000,000 one-pixel rows are
            // refused at once rather than taking half a minute of per-row calls.
            let line = try Self.run(image(1, 100_000_000), type: "image/png", "1x1e8", inflate: true)
            #expect(Self.errorCode(line) == "limitExceeded")
        }

        @Test func gammaAndRenderingIntentComeFromTheirChunks() throws {
            let idat = Self.chunk("IDAT", Self.deflated(repeating: 0, count: 8 * 9))
            // sRGB alone: libpng would infer a gamma of 0.45455; the file states none.
            let srgbOnly = Self.png([
                Self.ihdr(width: 8, height: 8), Self.chunk("sRGB", Data([0])), idat,
                Self.chunk("IEND", Data()),
            ])
            let value = try #require(
                try Self.run(srgbOnly, type: "image/png", "srgb.png", inflate: false)["value"]
                    as? [String: Any])
            #expect(value["srgb"] as? String == "perceptual")
            #expect(value["gamma"] == nil)
            var gamma = Data()
            withUnsafeBytes(of: UInt32(100_000).bigEndian) { gamma.append(contentsOf: $0) }
            let both = Self.png([
                Self.ihdr(width: 8, height: 8), Self.chunk("gAMA", gamma),
                Self.chunk("sRGB", Data([1])), idat, Self.chunk("IEND", Data()),
            ])
            let stated = try #require(
                try Self.run(both, type: "image/png", "gama.png", inflate: false)["value"]
                    as? [String: Any])
            #expect(stated["gamma"] as? Int == 1)
            #expect(stated["srgb"] as? String == "relative")
        }

        @Test func unknownCriticalChunksAreErrorsAnywhere() throws {
            let idat = Self.chunk("IDAT", Self.deflated(repeating: 0, count: 8 * 9))
            for chunks in [
                [Self.ihdr(width: 8, height: 8), Self.chunk("XXXX", Data([1])), idat],
                [Self.ihdr(width: 8, height: 8), idat, Self.chunk("XXXX", Data([1]))],
            ] {
                for inflate in [false, true] {
                    let line = try Self.run(
                        Self.png(chunks + [Self.chunk("IEND", Data())]), type: "image/png",
                        "critical.png", inflate: inflate)
                    #expect(Self.errorCode(line) == "invalidImage", "inflate \(inflate)")
                }
            }
        }

        // MARK: JPEG, from a progressive file of the corpora

        static let progressive = "jpeg/libjpeg-turbo/testimgp.jpg"

        /// Byte ranges of each scan (SOS marker to the next marker that is not a restart or stuffed byte).
        static func scans(_ jpeg: [UInt8]) -> [Range<Int>] {
            var result: [Range<Int>] = []
            var i = 2
            while i + 4 <= jpeg.count {
                guard jpeg[i] == 0xFF else {
                    i += 1
                    continue
                }
                let marker = jpeg[i + 1]
                if marker == 0xD9 { break }
                let length = Int(jpeg[i + 2]) << 8 | Int(jpeg[i + 3])
                if marker != 0xDA {
                    i += 2 + length
                    continue
                }
                var end = i + 2 + length
                while end + 1 < jpeg.count
                    && !(jpeg[end] == 0xFF && jpeg[end + 1] != 0 && !(0xD0...0xD7).contains(jpeg[end + 1]))
                {
                    end += 1
                }
                result.append(i..<end)
                i = end
            }
            return result
        }

        @Test(.enabled(if: HostileDocumentTests.corporaAvailable, "../shared/corpora is absent"))
        func scanBombIsRejectedQuickly() throws {
            let jpeg = [UInt8](
                try Data(contentsOf: HostileDocumentTests.corpora.appendingPathComponent(Self.progressive)))
            let scans = Self.scans(jpeg)
            #expect(scans.count >= 5)
            let last = try #require(scans.last)
            let smallest = try #require(scans.min { $0.count < $1.count })
            var bomb = Data(jpeg[..<last.upperBound])
            for _ in 0..<20_000 { bomb += Data(jpeg[smallest]) }
            bomb += Data([0xFF, 0xD9])
            // libjpeg sees the repeated scans as a bogus progression: a warning, fatal when inflating. Without that
            // check the default 41.9 s decode would blow the 1 s budget of the harness.
            let line = try Self.run(bomb, type: "image/jpeg", "scanbomb.jpg", inflate: true)
            #expect(line["ok"] as? Bool == false)
            #expect(Self.errorCode(line) == "invalidImage")
            // Header only reads no scans at all.
            #expect(try Self.run(bomb, type: "image/jpeg", "scanbomb.jpg", inflate: false)["ok"] as? Bool == true)
        }

        /// The scan cap itself (for scan floods that warn about nothing): a legitimate progressive file over a low cap.
        @Test(.enabled(if: HostileDocumentTests.corporaAvailable, "../shared/corpora is absent"))
        func scanCapStopsProgressiveDecoding() throws {
            let jpeg = try Data(contentsOf: HostileDocumentTests.corpora.appendingPathComponent(Self.progressive))
            let capped = try HostileDocumentTests.runLimited(
                jpeg, type: "image/jpeg", name: "capped", arguments: ["--inflate", "--max-jpeg-scans", "3"])
            #expect(Self.errorCode(capped) == "limitExceeded")
            let message = try #require((capped["error"] as? [String: Any])?["message"] as? String)
            #expect(message.contains("more than 3 scans"), "\(message)")
            #expect(try Self.run(jpeg, type: "image/jpeg", "uncapped", inflate: true)["ok"] as? Bool == true)
        }

        /// The scan-pixel cap (scans × pixels), which stops valid scan scripts of hundreds of scans over huge images:
        /// the 227×149 progressive file has 10 scans; a cap of 100,000 scan pixels allows 2.
        @Test(.enabled(if: HostileDocumentTests.corporaAvailable, "../shared/corpora is absent"))
        func scanPixelCapStopsLongScanScripts() throws {
            let jpeg = try Data(contentsOf: HostileDocumentTests.corpora.appendingPathComponent(Self.progressive))
            let capped = try HostileDocumentTests.runLimited(
                jpeg, type: "image/jpeg", name: "scan pixels",
                arguments: ["--inflate", "--max-jpeg-scan-pixels", "100000"])
            #expect(Self.errorCode(capped) == "limitExceeded")
            let message = try #require((capped["error"] as? [String: Any])?["message"] as? String)
            #expect(message.contains("--max-jpeg-scan-pixels"), "\(message)")
        }

        @Test(.enabled(if: HostileDocumentTests.corporaAvailable, "../shared/corpora is absent"))
        func hugeFrameHeadersAreRejectedBeforeAllocating() throws {
            var jpeg = [UInt8](
                try Data(contentsOf: HostileDocumentTests.corpora.appendingPathComponent(Self.progressive)))
            // SOF2: FF C2, length, precision, height, width.
            let sof = try #require((0..<jpeg.count - 1).first { jpeg[$0] == 0xFF && jpeg[$0 + 1] == 0xC2 })
            jpeg[sof + 5] = 0xEA
            jpeg[sof + 6] = 0x60 // 60000
            jpeg[sof + 7] = 0xEA
            jpeg[sof + 8] = 0x60
            let line = try Self.run(Data(jpeg), type: "image/jpeg", "hugeprog.jpg", inflate: true)
            #expect(Self.errorCode(line) == "limitExceeded")
            let header = try Self.run(Data(jpeg), type: "image/jpeg", "hugeprog.jpg", inflate: false)
            #expect((header["value"] as? [String: Any])?["width"] as? Int == 60000)
        }

        @Test(.enabled(if: HostileDocumentTests.corporaAvailable, "../shared/corpora is absent"))
        func truncatedJPEGIsAnErrorWhenInflating() throws {
            let jpeg = try Data(contentsOf: HostileDocumentTests.corpora.appendingPathComponent(Self.progressive))
            let half = jpeg.prefix(jpeg.count / 2)
            let line = try Self.run(half, type: "image/jpeg", "trunc.jpg", inflate: true)
            #expect(Self.errorCode(line) == "invalidImage")
            let message = try #require((line["error"] as? [String: Any])?["message"] as? String)
            #expect(message.contains("Premature end"), "\(message)")
            // Header only: the metadata, with a warning that the end is missing.
            let header = try Self.run(half, type: "image/jpeg", "trunc.jpg", inflate: false)
            #expect(header["ok"] as? Bool == true)
            #expect((header["warnings"] as? [String])?.contains { $0.contains("no EOI") } == true)
        }

        @Test func garbageUnderImageTypesIsAnError() throws {
            for (body, type) in [
                (Data("<html>not an image</html>".utf8), "image/png"),
                (Data([0xFF, 0xD8, 0xFF, 0xE0, 0x00]), "image/jpeg"), (Data([0x89, 0x50, 0x4E, 0x47]), "image/png"),
            ] {
                for inflate in [false, true] {
                    let line = try Self.run(body, type: type, "garbage", inflate: inflate)
                    #expect(Self.errorCode(line) == "invalidImage", "\(body as NSData)")
                }
            }
        }
    }
}
