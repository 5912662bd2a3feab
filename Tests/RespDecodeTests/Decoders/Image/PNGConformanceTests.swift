import Foundation
import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// PngSuite (../shared/corpora/png/PngSuite): every `x*` file rejected; every other file decoded, with the header
/// fields its name encodes; with `--inflate`, pixels equal to Pillow's (PngSuiteReference.tsv, made by
/// pngsuite-reference.py from Pillow's decode, compared through the byte count, mean colour and dHash).
@Suite(.enabled(if: Corpora.available, Corpora.skipComment))
struct PNGConformanceTests {
    static let suite = "png/PngSuite"
    static let header = ImageOptions(inflate: false)
    static let inflate = ImageOptions(inflate: true)

    static func read(_ bytes: [UInt8], _ options: ImageOptions) -> Result<ImageInfo, RecordError> {
        var warnings: [String] = []
        return bytes.withUnsafeBufferPointer { body in
            Result { () throws(RecordError) -> ImageInfo in
                try PNGImage.read(body, options: options, warnings: &warnings)
            }
        }
    }

    static func names() throws -> [String] {
        try Corpora.files(in: suite, suffix: ".png").map(\.lastPathComponent)
    }

    @Test func corruptedFilesAreRejectedInBothModes() throws {
        let corrupted = try Self.names().filter { $0.hasPrefix("x") }
        #expect(corrupted.count == 14)
        for name in corrupted {
            let bytes = try Corpora.bytes("\(Self.suite)/\(name)")
            for options in [Self.header, Self.inflate] {
                guard case .failure(let error) = Self.read(bytes, options) else {
                    Issue.record("\(name) was accepted (inflate: \(options.inflate))")
                    continue
                }
                #expect(error.code == .invalidImage, "\(name): \(error)")
            }
        }
    }

    /// `<feature><param><n|i><colour type digit><g|c|p|a><bit depth>.png`; `sNN…` files are NN×NN, the pHYs files
    /// `cdf`/`cdh`/`cds` 8×32, 32×8 and 8×8, everything else 32×32 (PngSuite's documentation).
    @Test func everyOtherFileDecodesWithTheFieldsItsNameEncodes() throws {
        let good = try Self.names().filter { !$0.hasPrefix("x") && $0 != "PngSuite.png" }
        #expect(good.count >= 160)
        for name in good {
            // Read from the end: `exif2c08` (added to the suite later) has no interlace letter.
            let code = Array(name.utf8.dropLast(4)).map { Character(Unicode.Scalar($0)) }
            let n = code.count
            let interlaced = code[n - 5] == "i"
            let colorTypeDigit = Int(String(code[n - 4]))!
            let bitDepth = Int(String(code[(n - 2)...]))!
            let expectedColorType = [0: "gray", 2: "rgb", 3: "palette", 4: "gray-alpha", 6: "rgba"][colorTypeDigit]
            var size = (32, 32)
            if code[0] == "s", let n = Int(String(code[1...2])) { size = (n, n) }
            if name.hasPrefix("cdf") { size = (8, 32) }
            if name.hasPrefix("cdh") { size = (32, 8) }
            if name.hasPrefix("cds") { size = (8, 8) }
            let bytes = try Corpora.bytes("\(Self.suite)/\(name)")
            for options in [Self.header, Self.inflate] {
                switch Self.read(bytes, options) {
                case .failure(let error):
                    Issue.record("\(name) rejected (inflate: \(options.inflate)): \(error)")
                case .success(let info):
                    #expect(info.width == size.0 && info.height == size.1, "\(name)")
                    #expect(info.bitDepth == bitDepth, "\(name)")
                    #expect(info.colorType == expectedColorType, "\(name)")
                    #expect(info.interlaced == interlaced, "\(name)")
                    #expect((info.decoded != nil) == options.inflate, "\(name)")
                }
            }
        }
    }

    struct Reference {
        var width: Int, height: Int, bytes: Int, meanColor: [Int], dhash: UInt64
    }

    static func references() throws -> (rows: [String: Reference], skipped: [String]) {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("PngSuiteReference.tsv")
        var rows: [String: Reference] = [:]
        var skipped: [String] = []
        for line in try String(contentsOf: url, encoding: .utf8).split(separator: "\n") {
            if line.hasPrefix("# skipped ") {
                skipped.append(String(line.dropFirst(10).prefix { $0 != ":" }))
                continue
            }
            if line.hasPrefix("#") { continue }
            let f = line.split(separator: "\t").map(String.init)
            rows[f[0]] = Reference(
                width: Int(f[1])!, height: Int(f[2])!, bytes: Int(f[3])!,
                meanColor: f[4].split(separator: ",").map { Int($0)! }, dhash: UInt64(f[5], radix: 16)!)
        }
        return (rows, skipped)
    }

    @Test func inflatedPixelsMatchPillowsDecode() throws {
        let (references, skipped) = try Self.references()
        let good = try Self.names().filter { !$0.hasPrefix("x") }
        // Every file has a reference, except the ones the generator says Pillow cannot give (16-bit RGB with tRNS).
        #expect(Set(good).subtracting(references.keys) == Set(skipped))
        #expect(skipped.count <= 2)
        for name in good {
            guard let reference = references[name] else { continue }
            let bytes = try Corpora.bytes("\(Self.suite)/\(name)")
            guard case .success(let info) = Self.read(bytes, Self.inflate), let decoded = info.decoded else {
                Issue.record("\(name) did not inflate")
                continue
            }
            #expect(info.width == reference.width && info.height == reference.height, "\(name)")
            #expect(decoded.bytes == reference.bytes, "\(name)")
            #expect(decoded.meanColor == reference.meanColor, "\(name)")
            #expect(decoded.dhash == reference.dhash, "\(name): \(String(decoded.dhash, radix: 16))")
        }
    }

    /// The two files Pillow cannot give a reference for still decode, with transparency turned into alpha: their
    /// tRNS colour marks some pixels, so the mean alpha is below 255.
    @Test func sixteenBitRGBWithTransparencyGetsAlpha() throws {
        for name in ["tbbn2c16.png", "tbgn2c16.png"] {
            let bytes = try Corpora.bytes("\(Self.suite)/\(name)")
            guard case .success(let info) = Self.read(bytes, Self.inflate), let decoded = info.decoded else {
                Issue.record("\(name) did not inflate")
                continue
            }
            #expect(info.hasAlpha == true)
            #expect(decoded.meanColor[3] < 255, "\(name): \(decoded.meanColor)")
        }
    }
}
