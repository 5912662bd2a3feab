import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// Builders and helpers for the header reader tests: images made byte by byte, and a way to run a reader on them.
/// Everything is namespaced here so nothing collides with other test files; the suites are nested in extensions.
enum HeaderReaderTests {
    // MARK: - Helpers

    /// The signature every header reader has.
    typealias HeaderRead = (ByteReader, inout [String]) throws(RecordError) -> ImageInfo

    /// What one header read gave: the metadata or the error, and the warnings.
    struct HeaderOutcome {
        var info: ImageInfo?
        var error: RecordError?
        var warnings: [String]

        /// Whether the read failed with `invalidImage`.
        var isInvalidImage: Bool { error?.code == .invalidImage }
    }

    /// Runs `read` on `bytes`.
    static func readHeader(_ read: HeaderRead, _ bytes: [UInt8]) -> HeaderOutcome {
        bytes.withUnsafeBufferPointer { buffer in
            var warnings: [String] = []
            do throws(RecordError) {
                let info = try read(ByteReader(buffer), &warnings)
                return HeaderOutcome(info: info, error: nil, warnings: warnings)
            } catch {
                return HeaderOutcome(info: nil, error: error, warnings: warnings)
            }
        }
    }

    /// Whether `matches` accepts `bytes`.
    static func headerMatches(_ matches: (ByteReader) -> Bool, _ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { matches(ByteReader($0)) }
    }

    /// Reads every proper prefix of `bytes` and the whole: each must give metadata or an `invalidImage` error. Returns
    /// how many prefixes gave metadata.
    @discardableResult
    static func checkEveryPrefix(_ read: HeaderRead, _ bytes: [UInt8]) -> Int {
        var successes = 0
        for length in 0...bytes.count {
            let outcome = readHeader(read, Array(bytes[..<length]))
            if outcome.info != nil {
                successes += 1
            } else {
                #expect(outcome.isInvalidImage, "prefix of \(length) bytes: \(String(describing: outcome.error))")
            }
        }
        #expect(readHeader(read, bytes).info != nil, "the whole file must read")
        return successes
    }

    /// Little- and big-endian encodings of the low bytes of `v`, and ASCII text.
    static func le16(_ v: Int) -> [UInt8] { [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8)] }
    static func be16(_ v: Int) -> [UInt8] { le16(v).reversed() }
    static func le24(_ v: Int) -> [UInt8] {
        [UInt8(truncatingIfNeeded: v), UInt8(truncatingIfNeeded: v >> 8), UInt8(truncatingIfNeeded: v >> 16)]
    }
    static func le32(_ v: Int) -> [UInt8] { le16(v) + le16(v >> 16) }
    static func be32(_ v: Int) -> [UInt8] { le32(v).reversed() }
    static func ascii(_ s: String) -> [UInt8] { Array(s.utf8) }

    // MARK: - Builders

    /// GIF pieces.
    enum GIF {
        /// Signature, logical screen descriptor and (zeroed) global colour table.
        static func header(_ version: String = "GIF89a", width: Int, height: Int, tableBits: Int?) -> [UInt8] {
            var b = ascii(version) + le16(width) + le16(height)
            if let bits = tableBits {
                b += [0x80 | 0x70 | UInt8(bits - 1), 0, 0] + [UInt8](repeating: 0, count: 3 << bits)
            } else {
                b += [0x70, 0, 0]
            }
            return b
        }

        /// An image descriptor, optional local table, and a tiny LZW stream.
        static func frame(width: Int = 1, height: Int = 1, tableBits: Int? = nil, interlaced: Bool = false) -> [UInt8] {
            var flags: UInt8 = interlaced ? 0x40 : 0
            if let bits = tableBits { flags |= 0x80 | UInt8(bits - 1) }
            var b: [UInt8] = [0x2C] + le16(0) + le16(0) + le16(width) + le16(height) + [flags]
            if let bits = tableBits { b += [UInt8](repeating: 0, count: 3 << bits) }
            return b + [0x02, 0x02, 0x4C, 0x01, 0x00]
        }

        /// A graphic control extension, with or without the transparency flag.
        static func graphicControl(transparent: Bool) -> [UInt8] {
            [0x21, 0xF9, 0x04, transparent ? 0x05 : 0x04, 0x0A, 0x00, 0x00, 0x00]
        }

        /// A looping application extension (NETSCAPE2.0 or ANIMEXTS1.0).
        static func loop(_ count: Int, application: String = "NETSCAPE2.0") -> [UInt8] {
            [0x21, 0xFF, 0x0B] + ascii(application) + [0x03, 0x01] + le16(count) + [0x00]
        }

        /// A comment extension.
        static func comment(_ text: String) -> [UInt8] {
            [0x21, 0xFE, UInt8(text.utf8.count)] + ascii(text) + [0x00]
        }

        /// The trailer byte.
        static let trailer: [UInt8] = [0x3B]
    }

    /// BMP files.
    enum BMP {
        /// A file with the given DIB header (12 bytes: OS/2 core), masks after the first 40 header bytes (inside the
        /// header when it is larger, after it otherwise) and 8 bytes of pixel data.
        static func file(
            headerSize: Int = 40, width: Int, height: Int, bitCount: Int, compression: Int = 0,
            pixelsPerMetre: (Int, Int) = (0, 0), masks: [Int] = []
        ) -> [UInt8] {
            var dib: [UInt8]
            if headerSize == 12 {
                dib = le32(12) + le16(width) + le16(height) + le16(1) + le16(bitCount)
            } else {
                dib =
                    le32(headerSize) + le32(width) + le32(height) + le16(1) + le16(bitCount) + le32(compression)
                    + le32(0) + le32(pixelsPerMetre.0) + le32(pixelsPerMetre.1) + le32(0) + le32(0)
                for mask in masks { dib += le32(mask) }
                if dib.count < headerSize { dib += [UInt8](repeating: 0, count: headerSize - dib.count) }
            }
            let pixels = [UInt8](repeating: 0xAB, count: 8)
            let offset = 14 + dib.count
            return ascii("BM") + le32(offset + pixels.count) + le32(0) + le32(offset) + dib + pixels
        }
    }

    /// ICO and CUR files.
    enum ICO {
        /// One stored image: directory width and height bytes, the bit count field, the image data.
        struct Image {
            var width: Int
            var height: Int
            var bitField: Int
            var data: [UInt8]
        }

        /// A PNG signature, IHDR and IEND.
        static func png(width: Int, height: Int, depth: Int = 8, colorType: Int = 6) -> [UInt8] {
            [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + be32(13) + ascii("IHDR") + be32(width) + be32(height)
                + [UInt8(depth), UInt8(colorType), 0, 0, 0] + be32(0) + be32(0) + ascii("IEND") + be32(0)
        }

        /// A 40-byte BITMAPINFOHEADER (with the doubled height of icons) and a few bytes of pixels.
        static func dib(width: Int, height: Int, bitCount: Int) -> [UInt8] {
            le32(40) + le32(width) + le32(2 * height) + le16(1) + le16(bitCount) + [UInt8](repeating: 0, count: 24)
                + [UInt8](repeating: 0x55, count: 8)
        }

        /// Header, directory and the images' data in order; `type` 1 is an icon, 2 a cursor.
        static func file(type: Int = 1, _ images: [Image]) -> [UInt8] {
            var b = le16(0) + le16(type) + le16(images.count)
            var offset = 6 + 16 * images.count
            for image in images {
                b += [UInt8(image.width & 0xFF), UInt8(image.height & 0xFF), 0, 0]
                b += le16(type == 2 ? 3 : 1) + le16(image.bitField) + le32(image.data.count) + le32(offset)
                offset += image.data.count
            }
            for image in images { b += image.data }
            return b
        }
    }

    /// TIFF blocks: IFDs of entries with their values laid out after each directory.
    struct TIFF {
        /// One entry: tag, field type, and values (for RATIONAL: numerator, denominator pairs flattened).
        struct Field {
            var tag: Int
            var type: Int
            var values: [Int]
            /// Overrides the count written (for hostile entries).
            var count: Int?
            /// Overrides the value offset written (for hostile entries).
            var valueOffset: Int?

            /// Fields of the common types.
            static func byte(_ tag: Int, _ v: Int...) -> Field { Field(tag: tag, type: 1, values: v) }
            static func short(_ tag: Int, _ v: Int...) -> Field { Field(tag: tag, type: 3, values: v) }
            static func long(_ tag: Int, _ v: Int...) -> Field { Field(tag: tag, type: 4, values: v) }
            static func rational(_ tag: Int, _ n: Int, _ d: Int) -> Field { Field(tag: tag, type: 5, values: [n, d]) }
            static func undefined(_ tag: Int, count: Int) -> Field {
                Field(tag: tag, type: 7, values: [Int](repeating: 0x11, count: count))
            }
        }

        /// Byte order of the block (`MM` when true).
        var bigEndian = false

        /// Integers in the block's byte order.
        func u16(_ v: Int) -> [UInt8] { bigEndian ? be16(v) : le16(v) }
        func u32(_ v: Int) -> [UInt8] { bigEndian ? be32(v) : le32(v) }

        /// The value bytes of a field.
        func encode(_ f: Field) -> [UInt8] {
            switch f.type {
            case 1, 2, 6, 7: return f.values.map { UInt8(truncatingIfNeeded: $0) }
            case 3, 8: return f.values.flatMap { u16($0) }
            default: return f.values.flatMap { u32($0) }
            }
        }

        /// Header and the directories in order; directory `i` links to `links[i]` (an index, or nil for the end),
        /// by default the next one.
        func block(_ ifds: [[Field]], links: [Int?]? = nil) -> [UInt8] {
            var out = ascii(bigEndian ? "MM" : "II") + u16(42) + u32(8)
            var starts: [Int] = []
            var nextSlots: [Int] = []
            for fields in ifds {
                let start = out.count
                starts.append(start)
                var data: [UInt8] = []
                let dataStart = start + 2 + 12 * fields.count + 4
                var entries: [UInt8] = []
                for f in fields {
                    let bytes = encode(f)
                    let count = f.count ?? (f.type == 5 || f.type == 10 ? f.values.count / 2 : f.values.count)
                    entries += u16(f.tag) + u16(f.type) + u32(count)
                    if let forced = f.valueOffset {
                        entries += u32(forced)
                    } else if bytes.count <= 4 {
                        entries += bytes + [UInt8](repeating: 0, count: 4 - bytes.count)
                    } else {
                        entries += u32(dataStart + data.count)
                        data += bytes
                        if data.count % 2 == 1 { data.append(0) }
                    }
                }
                out += u16(fields.count) + entries
                nextSlots.append(out.count)
                out += u32(0) + data
            }
            for (i, slot) in nextSlots.enumerated() {
                let target = links.map { $0[i] } ?? (i + 1 < ifds.count ? i + 1 : nil)
                if let target { out.replaceSubrange(slot..<slot + 4, with: u32(starts[target])) }
            }
            return out
        }
    }

    /// WebP files.
    enum WebP {
        /// A chunk, padded to an even size.
        static func chunk(_ fourCC: String, _ data: [UInt8]) -> [UInt8] {
            ascii(fourCC) + le32(data.count) + data + (data.count % 2 == 1 ? [0] : [])
        }

        /// The RIFF header (with the right size unless one is given) and the chunks.
        static func file(_ chunks: [UInt8], riffSize: Int? = nil) -> [UInt8] {
            ascii("RIFF") + le32(riffSize ?? 4 + chunks.count) + ascii("WEBP") + chunks
        }

        /// A lossy key frame header.
        static func vp8(width: Int, height: Int) -> [UInt8] {
            chunk(
                "VP8 ", [0x50, 0x02, 0x00, 0x9D, 0x01, 0x2A] + le16(width) + le16(height) + [0x01, 0x02, 0x03, 0x04])
        }

        /// A lossless header.
        static func vp8l(width: Int, height: Int, alpha: Bool) -> [UInt8] {
            let bits = (width - 1) | (height - 1) << 14 | (alpha ? 1 << 28 : 0)
            return chunk("VP8L", [0x2F] + le32(bits) + [0x00, 0x01, 0x02])
        }

        /// An extended-format header.
        static func vp8x(flags: UInt8, width: Int, height: Int) -> [UInt8] {
            chunk("VP8X", [flags, 0, 0, 0] + le24(width - 1) + le24(height - 1))
        }

        /// Animation parameters.
        static func anim(loops: Int) -> [UInt8] { chunk("ANIM", le32(0xFFFF_FFFF) + le16(loops)) }

        /// An animation frame holding a lossy frame.
        static func anmf(width: Int, height: Int) -> [UInt8] {
            chunk(
                "ANMF",
                le24(0) + le24(0) + le24(width - 1) + le24(height - 1) + le24(100) + [0]
                    + vp8(width: width, height: height))
        }
    }
}

// MARK: - TIFF directory

extension HeaderReaderTests {
    /// ``TIFFDirectory``: value types, byte orders, chains, caps and out-of-bounds values.
    @Suite struct TIFFDirectoryTests {
        /// One field of each integer and rational type, one of an unknown type, and a long UNDEFINED one.
        static let fields: [TIFF.Field] = [
            .byte(1, 200),
            .short(2, 60000),
            .long(3, 4_000_000_000),
            TIFF.Field(tag: 4, type: 6, values: [-3]),
            TIFF.Field(tag: 5, type: 8, values: [-5]),
            TIFF.Field(tag: 6, type: 9, values: [-70000]),
            .short(7, 8, 16, 32),
            .rational(8, 300, 4),
            .rational(9, 1, 0),
            .undefined(10, count: 1000),
            TIFF.Field(tag: 11, type: 10, values: [-10, 4]),
            TIFF.Field(tag: 12, type: 99, values: [1]),
            TIFF.Field(tag: 13, type: 13, values: [1234]),
        ]

        /// Runs `body` on the directory parsed from `bytes`.
        func directory(_ bytes: [UInt8], _ body: (TIFFDirectory?) -> Void) {
            bytes.withUnsafeBufferPointer { body(TIFFDirectory(tiff: $0)) }
        }

        @Test(arguments: [false, true]) func readsValuesInBothByteOrders(bigEndian: Bool) {
            directory(TIFF(bigEndian: bigEndian).block([Self.fields])) { d in
                guard let d else {
                    Issue.record("directory does not parse")
                    return
                }
                #expect(d.offset == 8)
                #expect(d.integer(1) == 200)
                #expect(d.integer(2) == 60000)
                #expect(d.integer(3) == 4_000_000_000)
                #expect(d.integer(4) == -3)
                #expect(d.integer(5) == -5)
                #expect(d.integer(6) == -70000)
                #expect(d.integer(7) == 8) // first of three, stored at an offset
                #expect(d.integer(13) == 1234)
                #expect(d.rational(8) == 75)
                #expect(d.rational(9) == nil) // denominator 0
                #expect(d.rational(11) == -2.5)
                #expect(d.rational(2) == nil) // a SHORT
                #expect(d.integer(8) == nil) // a RATIONAL
                #expect(d.integer(10) == nil) // UNDEFINED
                #expect(d.integer(12) == nil) // unknown type
                #expect(d.byteCount(10) == 1000)
                #expect(d.byteCount(7) == 6)
                #expect(d.byteCount(8) == 8)
                #expect(d.byteCount(12) == nil)
                #expect(d.integer(999) == nil && d.rational(999) == nil && d.byteCount(999) == nil)
                #expect(d.nextOffset == 0)
            }
        }

        @Test func followsTheChain() {
            let block = TIFF(bigEndian: true).block([[.short(1, 1)], [.short(1, 2)], [.short(1, 3)]])
            directory(block) { first in
                guard let first else {
                    Issue.record("directory does not parse")
                    return
                }
                #expect(first.integer(1) == 1)
                let second = first.directory(at: first.nextOffset)
                #expect(second?.integer(1) == 2)
                let third = second.flatMap { first.directory(at: $0.nextOffset) }
                #expect(third?.integer(1) == 3)
                #expect(third?.nextOffset == 0)
                #expect(first.directory(at: 0) == nil)
                #expect(first.directory(at: 7) == nil)
                #expect(first.directory(at: block.count - 1) == nil)
                #expect(first.directory(at: Int(UInt32.max)) == nil)
                #expect(first.directory(at: -5) == nil)
            }
        }

        @Test func rejectsWhatIsNotTIFF() {
            directory([]) { #expect($0 == nil) }
            directory(ascii("II*\0")) { #expect($0 == nil) }
            directory(ascii("II*\0") + le32(100)) { #expect($0 == nil) } // IFD past the end
            directory(ascii("II*\0") + le32(4) + [0, 0]) { #expect($0 == nil) } // IFD inside the header
            directory(ascii("II+\0") + le32(8) + le16(0) + le32(0)) { #expect($0 == nil) } // BigTIFF
            directory(ascii("MM*\0") + be32(8) + be16(0) + be32(0)) { #expect($0 == nil) } // wrong order for MM
            directory(ascii("II*\0") + le32(8) + le16(0)) { d in
                #expect(d != nil) // an empty directory whose next offset is cut off
                #expect(d?.nextOffset == 0)
            }
        }

        @Test func entryCountIsCappedAndClipped() {
            // 5000 entries: tag 100 + i. Only the first 4096 are looked at.
            let fields = (0..<5000).map { TIFF.Field.short(100 + $0, $0) }
            directory(TIFF().block([fields])) { d in
                #expect(d?.integer(110) == 10)
                #expect(d?.integer(100 + 4095) == 4095)
                #expect(d?.integer(100 + 4096) == nil)
            }
            // A directory that declares 65535 entries in a body holding three and a half.
            var bytes = ascii("II*\0") + le32(8) + le16(65535)
            for tag in 1...3 { bytes += le16(tag) + le16(3) + le32(1) + le16(tag * 10) + le16(0) }
            bytes += le16(4) + le16(3)
            directory(bytes) { d in
                #expect(d?.integer(3) == 30)
                #expect(d?.integer(4) == nil)
                #expect(d?.nextOffset == 0)
            }
        }

        @Test func valuesOutsideTheBlockReadAsNil() {
            let fields: [TIFF.Field] = [
                TIFF.Field(tag: 1, type: 3, values: [], count: 3, valueOffset: 0xFFFF_FFF0),
                TIFF.Field(tag: 2, type: 5, values: [], count: 1, valueOffset: 0x7FFF_FFFF),
                TIFF.Field(tag: 3, type: 4, values: [], count: 0xFFFF_FFFF, valueOffset: 8),
            ]
            directory(TIFF().block([fields])) { d in
                #expect(d != nil)
                #expect(d?.integer(1) == nil)
                #expect(d?.rational(2) == nil)
                #expect(d?.byteCount(1) == 6)
                #expect(d?.byteCount(3) == 0xFFFF_FFFF * 4)
                #expect(d?.integer(3) == 0x0001_0003) // first LONG at offset 8: the entry count and first tag
            }
        }
    }
}

// MARK: - GIF

extension HeaderReaderTests {
    /// ``GIFHeader``: still and animated files, truncation, broken files and a flood of frames.
    @Suite struct GIFHeaderTests {
        /// Three frames, the first interlaced, the second transparent with an 8-bit local table; loops forever.
        static let animated: [UInt8] =
            GIF.header(width: 300, height: 200, tableBits: 2) + GIF.loop(0) + GIF.comment("hi")
            + GIF.graphicControl(transparent: false) + GIF.frame(width: 300, height: 200, interlaced: true)
            + GIF.graphicControl(transparent: true) + GIF.frame(tableBits: 8)
            + GIF.graphicControl(transparent: false) + GIF.frame() + GIF.trailer

        @Test func still() {
            let file =
                GIF.header("GIF87a", width: 16, height: 9, tableBits: 8) + GIF.frame(width: 16, height: 9)
                + GIF.trailer
            #expect(headerMatches(GIFHeader.matches, file))
            let outcome = readHeader(GIFHeader.read, file)
            var expected = ImageInfo(format: "gif", width: 16, height: 9)
            expected.bitDepth = 8
            expected.channels = 1
            expected.colorType = "palette"
            expected.hasAlpha = false
            expected.interlaced = false
            #expect(outcome.info == expected)
            #expect(outcome.warnings.isEmpty)
        }

        @Test func animation() {
            let outcome = readHeader(GIFHeader.read, Self.animated)
            #expect(outcome.info?.width == 300 && outcome.info?.height == 200)
            #expect(outcome.info?.bitDepth == 2)
            #expect(outcome.info?.frames == 3)
            #expect(outcome.info?.loopCount == 0)
            #expect(outcome.info?.hasAlpha == true)
            #expect(outcome.info?.interlaced == true)
            #expect(outcome.warnings.isEmpty)
        }

        @Test func localTableAndAnimExts() {
            let file =
                GIF.header(width: 4, height: 4, tableBits: nil) + GIF.loop(5, application: "ANIMEXTS1.0")
                + GIF.frame(tableBits: 4) + GIF.frame(tableBits: 8) + GIF.trailer
            let outcome = readHeader(GIFHeader.read, file)
            #expect(outcome.info?.bitDepth == 4)
            #expect(outcome.info?.loopCount == 5)
            #expect(outcome.info?.frames == 2)
            #expect(outcome.info?.hasAlpha == false)
            // No table anywhere: no bit depth.
            let bare = readHeader(
                GIFHeader.read, GIF.header(width: 4, height: 4, tableBits: nil) + GIF.frame() + GIF.trailer)
            #expect(bare.info != nil && bare.info?.bitDepth == nil)
        }

        @Test func endsBeforeTheTrailer() {
            let header = GIF.header(width: 8, height: 8, tableBits: 1)
            let one = readHeader(GIFHeader.read, header + GIF.frame() + Array(GIF.frame().prefix(7)))
            #expect(one.info?.frames == nil)
            #expect(one.warnings == ["gif data ends before the trailer"])
            let two = readHeader(GIFHeader.read, header + GIF.frame() + GIF.frame())
            #expect(two.info?.frames == 2)
            #expect(two.warnings == ["gif data ends before the trailer"])
            let firstCut = readHeader(GIFHeader.read, header + GIF.frame().dropLast())
            #expect(firstCut.isInvalidImage)
            #expect(firstCut.error?.message == "gif data ends before the first image is complete")
        }

        @Test func broken() {
            let header = GIF.header(width: 8, height: 8, tableBits: 1)
            let empty = readHeader(GIFHeader.read, header + GIF.comment("nothing") + GIF.trailer)
            #expect(empty.error?.message == "gif has no image")
            #expect(empty.error?.location?.offset == Int64(header.count + GIF.comment("nothing").count))
            #expect(readHeader(GIFHeader.read, header + [0x99] + GIF.frame() + GIF.trailer).isInvalidImage)
            #expect(readHeader(GIFHeader.read, Array(header.prefix(12))).isInvalidImage)
            #expect(readHeader(GIFHeader.read, ascii("GIF88a") + Array(header.dropFirst(6))).isInvalidImage)
            #expect(!headerMatches(GIFHeader.matches, ascii("GIF88a") + Array(header.dropFirst(6))))
            // Junk after an image is a warning.
            let junk = readHeader(GIFHeader.read, header + GIF.frame() + [0x00, 0x00])
            #expect(junk.info != nil)
            #expect(junk.warnings.count == 1 && junk.warnings[0].hasPrefix("gif has an unknown block introducer 0x00"))
            // A sub-block length that runs past the end.
            let overrun = header + [0x2C] + [UInt8](repeating: 0, count: 9) + [0x02, 0xFF, 0x01]
            #expect(readHeader(GIFHeader.read, overrun).isInvalidImage)
        }

        @Test func everyPrefix() {
            let successes = checkEveryPrefix(GIFHeader.read, Self.animated)
            // Prefixes that hold the first whole image read (with a warning); shorter ones do not.
            #expect(successes > 0 && successes < Self.animated.count)
        }

        @Test func hundredThousandTinyFrames() {
            let frame = GIF.frame()
            var file = GIF.header(width: 1, height: 1, tableBits: 1) + GIF.graphicControl(transparent: true)
            file.reserveCapacity(file.count + 100_000 * frame.count + 1)
            for _ in 0..<100_000 { file += frame }
            file += GIF.trailer
            let start = ContinuousClock.now
            let outcome = readHeader(GIFHeader.read, file)
            #expect(outcome.info?.frames == 100_000)
            #expect(outcome.info?.hasAlpha == true)
            #expect(ContinuousClock.now - start < .seconds(5))
        }
    }
}

// MARK: - BMP

extension HeaderReaderTests {
    /// ``BMPHeader``: every DIB header kind, alpha masks, compression names and broken headers.
    @Suite struct BMPHeaderTests {
        @Test func infoHeader() {
            let file = BMP.file(width: 640, height: 480, bitCount: 24, pixelsPerMetre: (2835, 3780))
            #expect(headerMatches(BMPHeader.matches, file))
            let outcome = readHeader(BMPHeader.read, file)
            var expected = ImageInfo(format: "bmp", width: 640, height: 480)
            expected.bitDepth = 24
            expected.channels = 3
            expected.colorType = "rgb"
            expected.hasAlpha = false
            expected.compression = "none"
            expected.dpi = (2835 * 0.0254, 3780 * 0.0254)
            #expect(outcome.info == expected)
            #expect(outcome.warnings.isEmpty)
        }

        @Test func topDownAndCore() {
            let topDown = readHeader(
                BMPHeader.read, BMP.file(width: 10, height: -20, bitCount: 8, pixelsPerMetre: (0, 100)))
            #expect(topDown.info?.height == 20)
            #expect(topDown.info?.colorType == "palette" && topDown.info?.channels == 1)
            #expect(topDown.info?.dpi == nil)
            let core = readHeader(BMPHeader.read, BMP.file(headerSize: 12, width: 65535, height: 3, bitCount: 4))
            #expect(core.info?.width == 65535 && core.info?.height == 3)
            #expect(core.info?.bitDepth == 4 && core.info?.colorType == "palette")
            #expect(core.info?.compression == "none")
        }

        @Test func alphaMasks() {
            let rgbMasks = [0x00FF_0000, 0x0000_FF00, 0x0000_00FF]
            let v5 = readHeader(
                BMPHeader.read,
                BMP.file(
                    headerSize: 124, width: 2, height: 2, bitCount: 32, compression: 3, masks: rgbMasks + [0xFF00_0000])
            )
            #expect(v5.info?.colorType == "rgba" && v5.info?.hasAlpha == true && v5.info?.channels == 4)
            #expect(v5.info?.compression == "bitfields")
            let v4 = readHeader(
                BMPHeader.read,
                BMP.file(headerSize: 108, width: 2, height: 2, bitCount: 32, compression: 3, masks: rgbMasks + [0]))
            #expect(v4.info?.colorType == "rgb" && v4.info?.hasAlpha == false)
            let v3 = readHeader(
                BMPHeader.read,
                BMP.file(headerSize: 56, width: 2, height: 2, bitCount: 16, compression: 3, masks: rgbMasks + [0x8000]))
            #expect(v3.info?.colorType == "rgba")
            let bitfields = readHeader(
                BMPHeader.read, BMP.file(width: 2, height: 2, bitCount: 16, compression: 3, masks: rgbMasks))
            #expect(bitfields.info?.colorType == "rgb" && bitfields.info?.compression == "bitfields")
            let alphaBitfields = readHeader(
                BMPHeader.read,
                BMP.file(width: 2, height: 2, bitCount: 32, compression: 6, masks: rgbMasks + [0xFF00_0000]))
            #expect(alphaBitfields.info?.colorType == "rgba" && alphaBitfields.info?.compression == "alphabitfields")
            // OS/2 2.x headers have no masks.
            let os2 = readHeader(BMPHeader.read, BMP.file(headerSize: 64, width: 2, height: 2, bitCount: 24))
            #expect(os2.info?.colorType == "rgb")
            // A palette image ignores masks.
            let palette = readHeader(
                BMPHeader.read, BMP.file(headerSize: 124, width: 2, height: 2, bitCount: 8, masks: [0, 0, 0, 0xFF]))
            #expect(palette.info?.colorType == "palette" && palette.info?.hasAlpha == false)
        }

        @Test(arguments: [(1, 8, "rle8"), (2, 4, "rle4"), (4, 0, "jpeg"), (5, 0, "png"), (9, 24, "code 9")])
        func compressionNames(code: Int, bitCount: Int, name: String) {
            let outcome = readHeader(
                BMPHeader.read, BMP.file(width: 3, height: 3, bitCount: bitCount, compression: code))
            #expect(outcome.info?.compression == name)
            #expect(outcome.info?.bitDepth == (bitCount == 0 ? nil : bitCount))
        }

        /// OS/2 2.x headers (64 bytes) name codes 3 and 4 their own way: Huffman 1D and RLE24, not bit fields and
        /// JPEG; an OS/2 RLE24 bitmap has its 24 bits, and a bit count of 0 is no embedded image there.
        @Test(arguments: [(0, 24, "none"), (1, 8, "rle8"), (2, 4, "rle4"), (3, 1, "huffman1d"), (4, 24, "rle24")])
        func os2CompressionNames(code: Int, bitCount: Int, name: String) {
            let outcome = readHeader(
                BMPHeader.read, BMP.file(headerSize: 64, width: 3, height: 3, bitCount: bitCount, compression: code))
            #expect(outcome.info?.compression == name)
            #expect(outcome.info?.bitDepth == bitCount)
            let noBits = readHeader(
                BMPHeader.read, BMP.file(headerSize: 64, width: 3, height: 3, bitCount: 0, compression: code))
            #expect(noBits.error?.message == "bmp bit count 0 is not 1, 2, 4, 8, 16, 24 or 32")
        }

        @Test func broken() {
            func message(_ file: [UInt8]) -> String? { readHeader(BMPHeader.read, file).error?.message }
            #expect(
                message(BMP.file(width: 3, height: 3, bitCount: 3)) == "bmp bit count 3 is not 1, 2, 4, 8, 16, 24 or 32"
            )
            #expect(message(BMP.file(width: 3, height: 3, bitCount: 0)) != nil)
            #expect(message(BMP.file(width: 0, height: 3, bitCount: 8)) == "bmp has a zero width or height")
            #expect(message(BMP.file(width: 3, height: 0, bitCount: 8)) == "bmp has a zero width or height")
            #expect(
                message(BMP.file(headerSize: 12, width: 0, height: 3, bitCount: 8)) == "bmp has a zero width or height")
            #expect(
                message(BMP.file(width: 3, height: Int(Int32.min), bitCount: 8))
                    == "bmp height -2147483648 is out of range")
            #expect(message(BMP.file(width: -3, height: 3, bitCount: 8)) == "bmp width -3 is negative")
            #expect(
                message(BMP.file(headerSize: 20, width: 3, height: 3, bitCount: 8))
                    == "bmp dib header size 20 is not supported")
            let cut = Array(BMP.file(headerSize: 124, width: 3, height: 3, bitCount: 8).prefix(100))
            #expect(readHeader(BMPHeader.read, cut).error?.location?.offset == 100)
            #expect(
                !headerMatches(
                    BMPHeader.matches, ascii("BA") + Array(BMP.file(width: 1, height: 1, bitCount: 1).dropFirst(2))))
        }

        @Test func farPixelOffsetIsAWarning() {
            var file = BMP.file(width: 3, height: 3, bitCount: 24)
            file.replaceSubrange(10..<14, with: le32(1_000_000))
            let outcome = readHeader(BMPHeader.read, file)
            #expect(outcome.info != nil)
            #expect(outcome.warnings == ["bmp pixel data offset 1000000 is past the end of the body"])
        }

        @Test(arguments: [12, 40, 124]) func everyPrefix(headerSize: Int) {
            let file = BMP.file(headerSize: headerSize, width: 5, height: 5, bitCount: 24, compression: 0)
            // Prefixes holding the whole DIB header read; shorter ones are errors.
            #expect(checkEveryPrefix(BMPHeader.read, file) == file.count + 1 - (14 + headerSize))
        }
    }
}

// MARK: - ICO

extension HeaderReaderTests {
    /// ``ICOHeader``: icons and cursors with BMP and PNG entries, the entry cap and hostile directories.
    @Suite struct ICOHeaderTests {
        /// A 32-bit BMP entry, a 256×256 PNG entry (directory size 0) and an 8-bit BMP entry with a zero bit field.
        static let icon = ICO.file([
            ICO.Image(width: 16, height: 16, bitField: 32, data: ICO.dib(width: 16, height: 16, bitCount: 32)),
            ICO.Image(width: 0, height: 0, bitField: 0, data: ICO.png(width: 256, height: 256)),
            ICO.Image(width: 48, height: 48, bitField: 0, data: ICO.dib(width: 48, height: 48, bitCount: 8)),
        ])

        @Test func icon() {
            #expect(headerMatches(ICOHeader.matches, Self.icon))
            let outcome = readHeader(ICOHeader.read, Self.icon)
            var expected = ImageInfo(format: "ico", width: 256, height: 256)
            expected.entries = [
                .init(width: 16, height: 16, bitDepth: 32, format: "bmp"),
                .init(width: 256, height: 256, bitDepth: 32, format: "png"),
                .init(width: 48, height: 48, bitDepth: 8, format: "bmp"),
            ]
            #expect(outcome.info == expected)
            #expect(outcome.info?.frames == nil && outcome.info?.colorType == nil)
            #expect(outcome.warnings.isEmpty)
        }

        @Test func pngSizeComesFromIHDR() {
            let file = ICO.file([
                ICO.Image(width: 32, height: 32, bitField: 32, data: ICO.dib(width: 32, height: 32, bitCount: 32)),
                ICO.Image(
                    width: 0, height: 0, bitField: 0, data: ICO.png(width: 300, height: 200, depth: 8, colorType: 2)),
            ])
            let outcome = readHeader(ICOHeader.read, file)
            #expect(outcome.info?.width == 300 && outcome.info?.height == 200)
            #expect(outcome.info?.entries?.last == .init(width: 300, height: 200, bitDepth: 24, format: "png"))
        }

        @Test func cursorAndTies() {
            // Cursor fields hold the hotspot, so the depth comes from the bitmap; equal areas keep the first.
            let file = ICO.file(
                type: 2,
                [
                    ICO.Image(width: 32, height: 8, bitField: 7, data: ICO.dib(width: 32, height: 8, bitCount: 4)),
                    ICO.Image(width: 16, height: 16, bitField: 9, data: ICO.dib(width: 16, height: 16, bitCount: 1)),
                ])
            let outcome = readHeader(ICOHeader.read, file)
            #expect(outcome.info?.format == "ico")
            #expect(outcome.info?.width == 32 && outcome.info?.height == 8)
            #expect(outcome.info?.entries?.map(\.bitDepth) == [4, 1])
        }

        @Test func moreEntriesThanListed() {
            let image = ICO.Image(width: 1, height: 1, bitField: 1, data: ICO.dib(width: 1, height: 1, bitCount: 1))
            let outcome = readHeader(ICOHeader.read, ICO.file(Array(repeating: image, count: 300)))
            #expect(outcome.info?.entries?.count == ImageInfo.maxEntries)
            #expect(outcome.warnings == ["ico has 44 more entries than the 256 listed"])
        }

        @Test func broken() {
            func message(_ file: [UInt8]) -> String? { readHeader(ICOHeader.read, file).error?.message }
            let hostile = le16(0) + le16(1) + le16(65535) + [UInt8](repeating: 0, count: 64)
            #expect(message(hostile) == "ico directory of 65535 entries needs 1048566 bytes but the body has 70")
            #expect(message(le16(0) + le16(1) + le16(0)) == "ico has no entries")
            #expect(message(le16(1) + le16(1) + le16(1)) == "ico reserved field is 1, not 0")
            #expect(message(le16(0) + le16(3) + le16(1)) == "ico type 3 is neither icon (1) nor cursor (2)")
            #expect(!headerMatches(ICOHeader.matches, le16(0) + le16(3) + le16(1)))
            var outside = Self.icon
            outside.replaceSubrange(6 + 16 + 12..<6 + 16 + 16, with: le32(0xFFFF_FFF0))
            // The second entry's size field.
            #expect(readHeader(ICOHeader.read, outside).error?.location?.offset == 30)
            var tooLong = Self.icon
            tooLong.replaceSubrange(6 + 8..<6 + 12, with: le32(Self.icon.count))
            #expect(readHeader(ICOHeader.read, tooLong).isInvalidImage)
        }

        @Test func everyPrefix() {
            // Only the whole file reads: the last entry's data runs to the end.
            #expect(checkEveryPrefix(ICOHeader.read, Self.icon) == 1)
        }
    }
}

// MARK: - TIFF

extension HeaderReaderTests {
    /// ``TIFFHeader``: the first directory's fields, resolution units, directory chains, loops and caps.
    @Suite struct TIFFHeaderTests {
        /// A 640×480 LZW RGB image at 300 dpi, orientation 6, with a 3144-byte ICC profile.
        static let rgb: [TIFF.Field] = [
            .short(256, 640), .long(257, 480), .short(258, 8, 8, 8), .short(259, 5), .short(262, 2), .short(274, 6),
            .short(277, 3), .rational(282, 300, 1), .rational(283, 600, 2), .short(296, 2),
            .undefined(34675, count: 3144),
        ]

        @Test(arguments: [false, true]) func rgbFile(bigEndian: Bool) {
            let file = TIFF(bigEndian: bigEndian).block([Self.rgb])
            #expect(headerMatches(TIFFHeader.matches, file))
            let outcome = readHeader(TIFFHeader.read, file)
            var expected = ImageInfo(format: "tiff", width: 640, height: 480)
            expected.bitDepth = 8
            expected.channels = 3
            expected.colorType = "rgb"
            expected.hasAlpha = false
            expected.compression = "lzw"
            expected.exifOrientation = 6
            expected.dpi = (300, 300)
            expected.iccProfile = 3144
            #expect(outcome.info == expected)
            #expect(outcome.warnings.isEmpty)
        }

        @Test func grayAlphaInCentimetres() {
            let file = TIFF(bigEndian: true).block([
                [
                    .long(256, 7), .long(257, 9), .short(262, 1), .short(277, 2), .short(338, 2),
                    .rational(282, 100, 1), .rational(283, 50, 1), .short(296, 3),
                ]
            ])
            let outcome = readHeader(TIFFHeader.read, file)
            #expect(outcome.info?.colorType == "gray-alpha")
            #expect(outcome.info?.hasAlpha == true)
            #expect(outcome.info?.channels == 2)
            #expect(outcome.info?.bitDepth == 1) // default
            #expect(outcome.info?.compression == "none") // default
            #expect(outcome.info?.dpi?.x == 254 && outcome.info?.dpi?.y == 127)
            let rgba = readHeader(
                TIFFHeader.read, TIFF().block([[.short(256, 1), .short(257, 1), .short(262, 2), .short(338, 1)]]))
            #expect(rgba.info?.colorType == "rgba")
        }

        @Test func noAbsoluteResolution() {
            let file = TIFF().block([
                [.short(256, 1), .short(257, 1), .rational(282, 72, 1), .rational(283, 72, 1), .short(296, 1)]
            ])
            #expect(readHeader(TIFFHeader.read, file).info?.dpi == nil)
        }

        @Test(arguments: [
            (1, "none"), (2, "ccitt-rle"), (3, "ccitt-g3"), (4, "ccitt-g4"), (5, "lzw"), (6, "jpeg"), (7, "jpeg"),
            (8, "deflate"), (32946, "deflate"), (32773, "packbits"), (34712, "jpeg2000"), (50000, "code 50000"),
        ])
        func compressionNames(code: Int, name: String) {
            let file = TIFF().block([[.short(256, 1), .short(257, 1), .short(259, code)]])
            #expect(readHeader(TIFFHeader.read, file).info?.compression == name)
        }

        @Test(arguments: [
            (0, "gray"), (1, "gray"), (2, "rgb"), (3, "palette"), (5, "cmyk"), (6, "ycbcr"), (8, "code 8"),
        ])
        func colorTypes(photometric: Int, name: String) {
            let file = TIFF().block([[.short(256, 1), .short(257, 1), .short(262, photometric)]])
            #expect(readHeader(TIFFHeader.read, file).info?.colorType == name)
        }

        @Test func orientationOutOfRange() {
            let outcome = readHeader(TIFFHeader.read, TIFF().block([[.short(256, 1), .short(257, 1), .short(274, 9)]]))
            #expect(outcome.info != nil && outcome.info?.exifOrientation == nil)
            #expect(outcome.warnings == ["tiff orientation 9 is not between 1 and 8"])
        }

        @Test func pagesAndLoops() {
            let size: [TIFF.Field] = [.short(256, 1), .short(257, 1)]
            #expect(readHeader(TIFFHeader.read, TIFF().block([size, size, size])).info?.frames == 3)
            let cycle = readHeader(TIFFHeader.read, TIFF().block([size, size], links: [1, 0]))
            #expect(cycle.info?.frames == 2)
            #expect(cycle.warnings == ["tiff directory chain loops back to offset 8"])
            let selfLoop = readHeader(TIFFHeader.read, TIFF().block([size], links: [0]))
            #expect(selfLoop.info?.frames == nil)
            #expect(selfLoop.warnings.count == 1)
            var outside = TIFF().block([size])
            outside.replaceSubrange(outside.count - 4..<outside.count, with: le32(0x00FF_FFFF))
            let lost = readHeader(TIFFHeader.read, outside)
            #expect(lost.info?.frames == nil)
            #expect(lost.warnings == ["tiff directory offset 16777215 is outside the body"])
        }

        @Test func longChainIsCapped() {
            let size: [TIFF.Field] = [.short(256, 1), .short(257, 1)]
            let ifds = [size] + Array(repeating: [TIFF.Field](), count: 10_050)
            let outcome = readHeader(TIFFHeader.read, TIFF().block(ifds))
            #expect(outcome.info?.frames == TIFFHeader.maxDirectories)
            #expect(outcome.warnings == ["tiff has more than 10000 directories; only 10000 are counted"])
        }

        @Test func broken() {
            func message(_ file: [UInt8]) -> String? { readHeader(TIFFHeader.read, file).error?.message }
            #expect(message(TIFF().block([[.short(256, 1)]])) == "tiff first directory has no image width or height")
            #expect(
                message(TIFF().block([[.short(256, 0), .short(257, 1)]]))
                    == "tiff image width or height is zero or negative")
            #expect(message(TIFF().block([[.rational(256, 1, 1), .short(257, 1)]])) != nil)
            #expect(
                message(ascii("II*\0") + le32(4096) + [0, 0])
                    == "tiff first directory offset 4096 is outside the body of 10 bytes")
            #expect(message(ascii("MM\0*") + be32(2)) == "tiff first directory offset 2 points into the header")
            #expect(message(ascii("MM\0*") + [0]) == "tiff header is truncated")
            #expect(!headerMatches(TIFFHeader.matches, ascii("II+\0") + le32(8)))
        }

        @Test func everyPrefix() {
            let file = TIFF().block([Self.rgb, [.short(256, 2), .short(257, 2)]])
            #expect(checkEveryPrefix(TIFFHeader.read, file) > 0)
        }
    }
}

// MARK: - WebP

extension HeaderReaderTests {
    /// ``WebPHeader``: simple lossy and lossless files, extended still and animated files, broken chunk sizes.
    @Suite struct WebPHeaderTests {
        /// An EXIF block with orientation 8.
        static let exif = TIFF(bigEndian: true).block([[.short(274, 8)]])
        /// A 1024×768 lossy still with ICC, alpha and EXIF (behind an `Exif\0\0` prefix).
        static let extendedStill = WebP.file(
            WebP.vp8x(flags: 0x20 | 0x10 | 0x08, width: 1024, height: 768)
                + WebP.chunk("ICCP", [UInt8](repeating: 7, count: 101))
                + WebP.chunk("ALPH", [0, 1, 2]) + WebP.vp8(width: 1024, height: 768)
                + WebP.chunk("EXIF", ascii("Exif\0\0") + exif))
        /// A 64×32 animation of four frames, looping three times.
        static let animated = WebP.file(
            WebP.vp8x(flags: 0x02, width: 64, height: 32) + WebP.anim(loops: 3) + WebP.anmf(width: 64, height: 32)
                + WebP.anmf(width: 10, height: 10) + WebP.anmf(width: 1, height: 1) + WebP.anmf(width: 64, height: 32))

        @Test func lossy() {
            let file = WebP.file(WebP.vp8(width: 400, height: 300))
            #expect(headerMatches(WebPHeader.matches, file))
            let outcome = readHeader(WebPHeader.read, file)
            var expected = ImageInfo(format: "webp", width: 400, height: 300)
            expected.bitDepth = 8
            expected.channels = 3
            expected.hasAlpha = false
            expected.compression = "lossy"
            #expect(outcome.info == expected)
            #expect(outcome.warnings.isEmpty)
        }

        @Test func lossless() {
            let alpha = readHeader(WebPHeader.read, WebP.file(WebP.vp8l(width: 1000, height: 16384, alpha: true)))
            #expect(alpha.info?.width == 1000 && alpha.info?.height == 16384)
            #expect(alpha.info?.compression == "lossless")
            #expect(alpha.info?.hasAlpha == true && alpha.info?.channels == 4)
            let opaque = readHeader(WebPHeader.read, WebP.file(WebP.vp8l(width: 1, height: 1, alpha: false)))
            #expect(opaque.info?.hasAlpha == false && opaque.info?.channels == 3)
        }

        @Test func extendedStill() {
            let outcome = readHeader(WebPHeader.read, Self.extendedStill)
            var expected = ImageInfo(format: "webp", width: 1024, height: 768)
            expected.bitDepth = 8
            expected.channels = 4
            expected.hasAlpha = true
            expected.compression = "lossy"
            expected.iccProfile = 101
            expected.exifOrientation = 8
            #expect(outcome.info == expected)
            #expect(outcome.warnings.isEmpty)
            // Alpha from an ALPH chunk alone, EXIF without the prefix, little-endian.
            let file = WebP.file(
                WebP.vp8x(flags: 0, width: 3, height: 3) + WebP.chunk("ALPH", [0]) + WebP.vp8(width: 3, height: 3)
                    + WebP.chunk("EXIF", TIFF().block([[.short(274, 3)]])))
            let plain = readHeader(WebPHeader.read, file)
            #expect(plain.info?.hasAlpha == true && plain.info?.exifOrientation == 3)
            // Alpha from the VP8L hint.
            let hinted = readHeader(
                WebPHeader.read,
                WebP.file(WebP.vp8x(flags: 0, width: 3, height: 3) + WebP.vp8l(width: 3, height: 3, alpha: true)))
            #expect(hinted.info?.hasAlpha == true && hinted.info?.compression == "lossless")
        }

        @Test func exifOddities() {
            let bad = WebP.file(
                WebP.vp8x(flags: 0x08, width: 3, height: 3) + WebP.vp8(width: 3, height: 3)
                    + WebP.chunk("EXIF", ascii("junk")))
            #expect(readHeader(WebPHeader.read, bad).warnings == ["webp exif chunk is not a tiff block"])
            let range = WebP.file(
                WebP.vp8x(flags: 0x08, width: 3, height: 3) + WebP.vp8(width: 3, height: 3)
                    + WebP.chunk("EXIF", TIFF().block([[.short(274, 0)]])))
            let outcome = readHeader(WebPHeader.read, range)
            #expect(outcome.info?.exifOrientation == nil)
            #expect(outcome.warnings == ["webp exif orientation 0 is not between 1 and 8"])
        }

        @Test func animation() {
            let outcome = readHeader(WebPHeader.read, Self.animated)
            #expect(outcome.info?.width == 64 && outcome.info?.height == 32)
            #expect(outcome.info?.frames == 4)
            #expect(outcome.info?.loopCount == 3)
            #expect(outcome.info?.hasAlpha == false && outcome.info?.channels == 3)
            #expect(outcome.info?.compression == nil)
        }

        @Test func riffSizeLargerThanTheBody() {
            let chunks = WebP.vp8(width: 5, height: 6)
            let outcome = readHeader(WebPHeader.read, WebP.file(chunks, riffSize: 1000))
            #expect(outcome.info?.width == 5)
            #expect(outcome.warnings == ["riff size says 1008 bytes but the body has \(12 + chunks.count)"])
            // A RIFF size shorter than the chunks cuts them off.
            #expect(readHeader(WebPHeader.read, WebP.file(chunks, riffSize: 10)).isInvalidImage)
            #expect(
                readHeader(WebPHeader.read, WebP.file(chunks, riffSize: 3)).error?.message
                    == "webp riff size 3 is too small")
        }

        @Test func hugeChunkSizes() {
            var first = WebP.file(WebP.vp8(width: 5, height: 6))
            first.replaceSubrange(16..<20, with: le32(0xFFFF_FFFF))
            let outcome = readHeader(WebPHeader.read, first)
            #expect(outcome.error?.message == "webp chunk \"VP8 \" says 4294967295 bytes but only 14 remain")
            #expect(outcome.error?.location?.offset == 16)
            let later = WebP.file(
                WebP.vp8x(flags: 0, width: 3, height: 3) + WebP.vp8(width: 3, height: 3) + ascii("EXIF")
                    + le32(0xFFFF_FFFF))
            #expect(readHeader(WebPHeader.read, later).isInvalidImage)
            let riffMax = WebP.file(
                WebP.vp8x(flags: 0, width: 3, height: 3) + ascii("XYZW") + le32(0xFFFF_FFFF), riffSize: 0xFFFF_FFFF)
            #expect(readHeader(WebPHeader.read, riffMax).isInvalidImage)
        }

        @Test func oddChunksArePadded() {
            let file = WebP.file(
                WebP.vp8x(flags: 0x20, width: 3, height: 3) + WebP.chunk("ICCP", [1, 2, 3, 4, 5])
                    + WebP.chunk("XTRA", [9])
                    + WebP.vp8(width: 3, height: 3))
            let outcome = readHeader(WebPHeader.read, file)
            #expect(outcome.info?.iccProfile == 5)
            #expect(outcome.info?.compression == "lossy")
        }

        @Test func broken() {
            func message(_ file: [UInt8]) -> String? { readHeader(WebPHeader.read, file).error?.message }
            var badStart = WebP.file(WebP.vp8(width: 5, height: 6))
            badStart[23] = 0x9C
            #expect(message(badStart) == "webp vp8 start code is missing")
            var interFrame = WebP.file(WebP.vp8(width: 5, height: 6))
            interFrame[20] |= 1
            #expect(message(interFrame) == "webp vp8 frame is not a key frame")
            #expect(message(WebP.file(WebP.vp8(width: 0, height: 6))) == "webp vp8 frame has a zero width or height")
            var badSignature = WebP.file(WebP.vp8l(width: 5, height: 6, alpha: false))
            badSignature[20] = 0x2E
            #expect(message(badSignature) == "webp vp8l signature is missing")
            #expect(
                message(WebP.file(WebP.chunk("VP8L", [0x2F] + le32(0xE000_0000)))) == "webp vp8l version 7 is not 0")
            #expect(
                message(WebP.file(WebP.vp8x(flags: 0, width: 3, height: 3) + WebP.chunk("ICCP", [1])))
                    == "webp extended file has no vp8 or vp8l image chunk")
            #expect(
                message(WebP.file(WebP.vp8x(flags: 2, width: 3, height: 3) + WebP.anim(loops: 0)))
                    == "webp animation has no frames")
            #expect(
                message(WebP.file(WebP.chunk("JUNK", [1, 2]))) == "webp first chunk \"JUNK\" is not VP8, VP8L or VP8X")
            #expect(message(WebP.file(WebP.chunk("VP8X", [0, 0]))) == "webp vp8x chunk is too short")
            #expect(message(WebP.file([])) == "webp chunk header is truncated")
            #expect(!headerMatches(WebPHeader.matches, ascii("RIFF") + le32(4) + ascii("WAVE")))
        }

        @Test func everyPrefix() {
            for file in [WebP.file(WebP.vp8(width: 5, height: 6)), Self.extendedStill, Self.animated] {
                // A prefix reads only when it ends on a chunk boundary after what the image needs.
                #expect(checkEveryPrefix(WebPHeader.read, file) >= 1)
            }
        }
    }
}

// MARK: - All formats

extension HeaderReaderTests {
    /// All readers: signatures do not overlap, and mutated files never trap.
    @Suite struct HeaderReaderRobustnessTests {
        /// A valid sample of each format with its reader.
        static var samples: [(String, HeaderRead, [UInt8])] {
            [
                ("gif", GIFHeader.read, GIFHeaderTests.animated),
                (
                    "bmp", BMPHeader.read,
                    BMP.file(
                        headerSize: 124, width: 3, height: -3, bitCount: 32, compression: 3,
                        pixelsPerMetre: (100, 100), masks: [0xFF, 0xFF00, 0xFF_0000, 0xFF00_0000])
                ),
                ("ico", ICOHeader.read, ICOHeaderTests.icon),
                ("tiff", TIFFHeader.read, TIFF().block([TIFFHeaderTests.rgb, [.short(256, 2)], []])),
                ("webp", WebPHeader.read, WebPHeaderTests.extendedStill),
                ("webp", WebPHeader.read, WebPHeaderTests.animated),
            ]
        }

        @Test func signaturesDoNotOverlap() {
            let matchers: [(String, (ByteReader) -> Bool)] = [
                ("gif", GIFHeader.matches), ("bmp", BMPHeader.matches), ("ico", ICOHeader.matches),
                ("tiff", TIFFHeader.matches), ("webp", WebPHeader.matches),
            ]
            for (format, read, bytes) in Self.samples {
                #expect(readHeader(read, bytes).info?.format == format)
                for (name, matches) in matchers {
                    #expect(headerMatches(matches, bytes) == (name == format), "\(name) on a \(format) sample")
                }
            }
            for (_, matches) in matchers { #expect(!headerMatches(matches, [])) }
        }

        /// Random byte changes to valid files: every read returns or throws `invalidImage`; what it returns is sane.
        @Test func mutationsNeverTrap() {
            var random = SplitMix64(seed: 0x5EED_1A6E)
            for (format, read, sample) in Self.samples {
                var reads = 0
                for _ in 0..<3000 {
                    var bytes = sample
                    for _ in 0..<(1 + Int.random(in: 0..<4, using: &random)) {
                        let i = Int.random(in: 0..<bytes.count, using: &random)
                        bytes[i] =
                            Int.random(in: 0..<4, using: &random) == 0 ? 0xFF : UInt8(truncatingIfNeeded: random.next())
                    }
                    if Int.random(in: 0..<8, using: &random) == 0 {
                        bytes.removeLast(Int.random(in: 0..<bytes.count, using: &random))
                    }
                    let outcome = readHeader(read, bytes)
                    if let info = outcome.info {
                        reads += 1
                        #expect(info.format == format)
                        #expect(info.width >= 0 && info.height >= 0)
                        #expect((info.entries?.count ?? 0) <= ImageInfo.maxEntries)
                    } else {
                        #expect(outcome.isInvalidImage)
                    }
                }
                #expect(reads > 0, "no mutation of the \(format) sample read")
            }
        }
    }
}
