import RespDecode

/// One body decoder: a value it writes is valid JSON; when it throws, the output is as it was.
enum BodyTarget {
    static func run(
        _ data: UnsafeBufferPointer<UInt8>, decoder name: String, mimeType: String, magic: String? = nil,
        configuration: Configuration = FuzzLimits.configuration()
    ) {
        guard let decoder = DecoderRegistry.decoder(named: name) else { violated("no decoder \(name)") }
        var body = Array(data)
        if let magic, !body.starts(with: magic.utf8) { body = Array(magic.utf8) + body }
        let out = OutputBuffer()
        out.append(ascii: "[")
        let mark = out.mark
        var context = DecodingContext(mimeType: mimeType, options: configuration.decoding.options)
        do {
            let wrote = try body.withUnsafeBufferPointer { try decoder.decode($0, context: &context, into: out) }
            if wrote {
                JSONCheck.requireValid(UnsafeBufferPointer(rebasing: out.bytes[mark...]), "\(name) value")
            } else if out.count != mark {
                violated("\(name) said it wrote nothing but wrote \(out.count - mark) bytes")
            }
        } catch {
            if out.count != mark { violated("\(name) threw and left \(out.count - mark) bytes") }
        }
    }
}

/// PNG and JPEG: header only, then decoded in full (within a 4-megapixel budget). A PNG is decoded in full a second
/// time with every chunk's CRC made right: most mutations break a CRC, and only a file whose CRCs are all right has
/// its image data inflated whole and handed to libpng rewritten (CShims/png.c), so this reaches that code with the
/// mutated data behind the CRCs. Each PNG decoded in full is decoded both ways, whole and through zlib, and must
/// give the same result but for the difference docs/output.md names (``PNGInflateCheck``).
enum ImageTarget {
    static func run(_ data: UnsafeBufferPointer<UInt8>, mimeType: String, magic: [UInt8]) {
        var body = Array(data)
        if !body.starts(with: magic) { body = magic + body }
        var variants = [body]
        if mimeType == "image/png", let fixed = PNGChunks.withCRCsMadeRight(body), fixed != body {
            variants.append(fixed)
        }
        for (index, variant) in variants.enumerated() {
            variant.withUnsafeBufferPointer { bytes in
                for inflate in index == 0 ? [false, true] : [true] {
                    BodyTarget.run(
                        bytes, decoder: "image", mimeType: mimeType,
                        configuration: FuzzLimits.configuration(inflate: inflate))
                }
                // A full decode gives the same both ways, the image data inflated whole or through zlib.
                if mimeType == "image/png",
                    let difference = PNGInflateCheck.difference(bytes, limits: FuzzLimits.configuration().limits)
                {
                    violated("png decoded differently: \(difference)")
                }
            }
        }
    }
}

/// PNG chunks, for the fuzz target: the file with each whole chunk's CRC-32 set to what its type and data give.
enum PNGChunks {
    /// nil when there is no whole chunk after the signature.
    static func withCRCsMadeRight(_ png: [UInt8]) -> [UInt8]? {
        var out = png
        var offset = 8
        var changed = false
        while offset + 12 <= png.count {
            let length = png[offset..<offset + 4].reduce(0) { $0 << 8 | Int($1) }
            guard length <= png.count - offset - 12 else { break }
            let crc = crc32(png[offset + 4..<offset + 8 + length])
            for k in 0..<4 { out[offset + 8 + length + k] = UInt8(truncatingIfNeeded: crc >> (24 - 8 * k)) }
            changed = true
            offset += 12 + length
        }
        return changed ? out : nil
    }

    /// CRC-32 (ISO 3309, as PNG uses it): the library's own.
    static func crc32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.withUnsafeBufferPointer { CRC32.checksum($0) }
    }
}
