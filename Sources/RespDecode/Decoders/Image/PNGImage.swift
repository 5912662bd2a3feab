/// PNG: libpng reads the header chunks (and, with `--inflate`, the pixels); a walk over every chunk adds what a
/// header read alone cannot promise — every chunk is whole and has its CRC, the image data is there and the file
/// ends with IEND — plus the text keywords and the APNG frame count.
enum PNGImage {
    static func matches(_ r: ByteReader) -> Bool {
        r.count >= 8 && r.bytes[0] == 0x89 && r.matches("PNG\r\n\u{1A}\n", at: 1)
    }

    static func read(
        _ body: UnsafeBufferPointer<UInt8>, options: ImageOptions, warnings: inout [String]
    ) throws(RecordError) -> ImageInfo {
        let pixels = options.inflate ? PixelAccumulator() : nil
        let limits = LibPNG.Limits(options)
        let header: LibPNG.Header
        switch LibPNG.read(body, limits: limits, pixels: pixels, warnings: &warnings) {
        case .success(let h): header = h
        case .failure(.invalid(let message)), .failure(.unsupported(let message)):
            throw RecordError(.invalidImage, "png: \(message)")
        case .failure(.limit(let message)): throw RecordError(.limitExceeded, "png: \(message)")
        }
        var info = ImageInfo(format: "png", width: header.width, height: header.height)
        info.bitDepth = header.bitDepth
        info.channels = header.channels
        // A switch, not a dictionary literal: that would be built (and hashed into) for every record.
        info.colorType =
            switch header.colorType {
            case 0: "gray"
            case 2: "rgb"
            case 3: "palette"
            case 4: "gray-alpha"
            case 6: "rgba"
            default: nil
            }
        info.hasAlpha = header.colorType & 4 != 0 || header.hasTransparency
        info.interlaced = header.interlaced
        info.iccProfile = header.iccBytes
        if let physical = header.physical, physical.perMetre, physical.x > 0, physical.y > 0 {
            info.dpi = (Double(physical.x) * 0.0254, Double(physical.y) * 0.0254)
        }
        try walkChunks(body, libpngReadEverything: options.inflate, options: options, info: &info, warnings: &warnings)
        if let pixels {
            guard pixels.pixelsSeen == header.width * header.height else {
                throw RecordError(.invalidImage, "png: the image data ended before every pixel was decoded")
            }
            info.decoded = pixels.summary()
        }
        return info
    }

    /// Checks the chunk layout from the signature to IEND and collects text keywords and the APNG frame count.
    /// CRCs are checked where libpng did not read: from the image data on, unless it decoded the whole file.
    private static func walkChunks(
        _ body: UnsafeBufferPointer<UInt8>, libpngReadEverything: Bool, options: ImageOptions, info: inout ImageInfo,
        warnings: inout [String]
    ) throws(RecordError) {
        let r = ByteReader(body)
        var offset = 8
        // At most `maxWarnings` warnings, the last one counting the rest, as on the line (a file of millions of bad
        // chunks must not make a huge line).
        var suppressed = 0
        func warn(_ text: @autoclosure () -> String) {
            if warnings.count < options.maxWarnings - 1 { warnings.append(text()) } else { suppressed += 1 }
        }
        defer { if suppressed > 0 { warnings.append("png: \(suppressed) more warnings like these") } }
        // Made on the first compressed text chunk: most images have none (inflateInit and its buffer per record
        // cost a tenth of a header-only read).
        var counter: Zlib.SizeCounter?
        var sawImageData = false
        var imageDataEnded = false
        var fcTLCount = 0
        var textChunks = 0
        /// What compressed text may still inflate to: one budget for all of an image's text chunks, so that many
        /// chunks just under the limit cannot add up to a long decompression.
        var textBudget = options.maxChunkBytes
        var animation: (frames: Int, plays: Int)?
        while true {
            guard let length = r.u32be(offset), length <= 0x7FFF_FFFF, r.has(offset + 8, length + 4) else {
                throw RecordError(
                    .invalidImage, "png: the data ends inside the chunk at byte \(offset), before IEND (truncated)",
                    location: .init(offset: offset))
            }
            // The type as one big-endian word: compared without making strings (this loop runs per chunk).
            let type = UInt32(r.u32be(offset + 4)!)
            for byte in r.slice(offset + 4, 4)! where !(byte | 0x20 >= 0x61 && byte | 0x20 <= 0x7A) {
                throw RecordError(
                    .invalidImage, "png: bad chunk type at byte \(offset)", location: .init(offset: offset))
            }
            var name: String { String(decoding: r.slice(offset + 4, 4)!, as: UTF8.self) }
            let data = r.slice(offset + 8, length)!
            let isImageData = type == Chunk.IDAT
            let isText = type == Chunk.tEXt || type == Chunk.zTXt || type == Chunk.iTXt
            let critical = type & 0x2000_0000 == 0 // the first letter is upper case
            if critical && type != Chunk.IHDR && type != Chunk.PLTE && !isImageData && type != Chunk.IEND {
                throw RecordError(
                    .invalidImage, "png: unknown critical chunk \(name) at byte \(offset)",
                    location: .init(offset: offset))
            }
            // libpng checked the CRCs of the chunks it read (and warned about bad ancillary ones); the rest are
            // checked here. Text chunks always are, since their keywords are read here.
            let libpngRead = libpngReadEverything || !(sawImageData || isImageData)
            if !libpngRead || isText {
                let stored = UInt32(r.u32be(offset + 8 + length)!)
                if CRC32.checksum(r.slice(offset + 4, length + 4)!) != stored {
                    if critical {
                        throw RecordError(
                            .invalidImage, "png: CRC error in the \(name) chunk at byte \(offset)",
                            location: .init(offset: offset))
                    }
                    if !libpngRead { warn("png: CRC error in the \(name) chunk at byte \(offset); chunk ignored") }
                    offset += 12 + length
                    continue
                }
            }
            if isImageData {
                if imageDataEnded {
                    throw RecordError(
                        .invalidImage, "png: IDAT chunks are not consecutive (byte \(offset))",
                        location: .init(offset: offset))
                }
                sawImageData = true
            } else if sawImageData {
                imageDataEnded = true
            }
            switch type {
            case Chunk.IEND:
                if !sawImageData {
                    throw RecordError(.invalidImage, "png: no IDAT chunk", location: .init(offset: offset))
                }
                let trailing = body.count - (offset + 12)
                if trailing > 0 { warn("png: \(trailing) byte\(trailing == 1 ? "" : "s") after IEND ignored") }
                if let animation {
                    if animation.frames == 0 || animation.frames > 0x7FFF_FFFF {
                        warn("png: invalid APNG frame count \(animation.frames); shown as a still image")
                    } else {
                        if fcTLCount != animation.frames {
                            warn(
                                "png: acTL announces \(animation.frames) frames but there are \(fcTLCount) fcTL chunks")
                        }
                        info.frames = animation.frames
                        info.loopCount = animation.plays
                    }
                }
                if textChunks > ImageInfo.maxTextKeys {
                    warn("png: \(textChunks - ImageInfo.maxTextKeys) more text chunks not listed")
                }
                if textChunks > Self.maxCheckedTextChunks {
                    warn(
                        "png: the compressed text of the \(textChunks - Self.maxCheckedTextChunks) text chunks after "
                            + "the first \(Self.maxCheckedTextChunks) was not checked")
                }
                return
            case Chunk.acTL:
                if !sawImageData, let frames = r.u32be(offset + 8), let plays = r.u32be(offset + 12), length == 8 {
                    animation = (frames, plays)
                }
            case Chunk.fcTL:
                fcTLCount += 1
            case Chunk.tEXt, Chunk.zTXt, Chunk.iTXt:
                textChunks += 1
                // Past the listed keys and the checked ones, a text chunk costs nothing more (libpng itself keeps
                // at most 1000 ancillary chunks).
                guard info.textKeys.count < ImageInfo.maxTextKeys || textChunks <= Self.maxCheckedTextChunks else {
                    break
                }
                var problem: String?
                if let key = try textKeyword(
                    type, data, check: textChunks <= Self.maxCheckedTextChunks, budget: &textBudget, counter: &counter,
                    options: options, problem: &problem),
                    info.textKeys.count < ImageInfo.maxTextKeys
                {
                    info.textKeys.append(key)
                }
                if let problem { warn(problem) }
            case Chunk.gAMA where !sawImageData && length == 4:
                info.gamma100000 = r.u32be(offset + 8)
            case Chunk.sRGB where !sawImageData && length == 1:
                info.srgb = ["perceptual", "relative", "saturation", "absolute"].element(at: Int(data[0]))
            default:
                break
            }
            offset += 12 + length
        }
    }

    /// Text chunks whose compressed text is inflated to check its size; later ones are only counted.
    static let maxCheckedTextChunks = 1000

    /// Chunk types as big-endian words, named as the PNG specification spells them (the case of each letter is a flag).
    // swift-format-ignore: AlwaysUseLowerCamelCase
    private enum Chunk {
        static let IHDR: UInt32 = 0x4948_4452
        static let PLTE: UInt32 = 0x504C_5445
        static let gAMA: UInt32 = 0x6741_4D41
        static let sRGB: UInt32 = 0x7352_4742
        static let IDAT: UInt32 = 0x4944_4154
        static let IEND: UInt32 = 0x4945_4E44
        static let acTL: UInt32 = 0x6163_544C
        static let fcTL: UInt32 = 0x6663_544C
        static let tEXt: UInt32 = 0x7445_5874
        static let zTXt: UInt32 = 0x7A54_5874
        static let iTXt: UInt32 = 0x6954_5874
    }

    /// A text chunk's keyword (Latin-1, 1–79 bytes before a NUL). With `check`, compressed text is inflated — to
    /// nowhere, only counted against `budget` — so that a decompression bomb is an error here, as it would be for
    /// any reader that shows the text. Oddities go to `problem`.
    private static func textKeyword(
        _ type: UInt32, _ data: UnsafeBufferPointer<UInt8>, check: Bool, budget: inout Int,
        counter: inout Zlib.SizeCounter?, options: ImageOptions, problem: inout String?
    ) throws(RecordError) -> String? {
        let name = type == Chunk.tEXt ? "tEXt" : type == Chunk.zTXt ? "zTXt" : "iTXt"
        guard let nul = data.firstIndex(of: 0), nul >= 1, nul <= 79 else {
            problem = "png: \(name) chunk without a valid keyword ignored"
            return nil
        }
        let key = String(String.UnicodeScalarView(data[0..<nul].map { Unicode.Scalar($0) }))
        guard check else { return key }
        var compressed: UnsafeBufferPointer<UInt8>?
        if type == Chunk.zTXt {
            compressed = UnsafeBufferPointer(rebasing: data[min(nul + 2, data.count)...])
        } else if type == Chunk.iTXt, nul + 2 < data.count, data[nul + 1] == 1 {
            // flag, method, language tag NUL, translated keyword NUL, then the text.
            var i = nul + 3
            for _ in 0..<2 {
                guard let end = data[i...].firstIndex(of: 0) else {
                    problem = "png: iTXt chunk \"\(key)\" is cut short"
                    return key
                }
                i = end + 1
            }
            compressed = UnsafeBufferPointer(rebasing: data[min(i, data.count)...])
        }
        if let compressed {
            let sizer = counter ?? Zlib.SizeCounter()
            counter = sizer
            switch sizer.inflatedSize(of: compressed, limit: budget) {
            case .size(let size): budget -= size
            case .tooLarge:
                throw RecordError(
                    .limitExceeded,
                    "png: the text chunks inflate to more than \(options.maxChunkBytes) bytes, the \(name) chunk "
                        + "\"\(key)\" past the limit (--max-image-chunk-bytes)")
            case .invalid(let message):
                problem = "png: the \(name) chunk \"\(key)\" does not inflate (\(message)); ignored"
            }
        }
        return key
    }
}

extension Array {
    /// The element at `index`, or nil when it is out of range.
    func element(at index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
