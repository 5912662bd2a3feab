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

/// PNG and JPEG: header only, then decoded in full (within a 4-megapixel budget).
enum ImageTarget {
    static func run(_ data: UnsafeBufferPointer<UInt8>, mimeType: String, magic: [UInt8]) {
        var body = Array(data)
        if !body.starts(with: magic) { body = magic + body }
        body.withUnsafeBufferPointer { bytes in
            for inflate in [false, true] {
                BodyTarget.run(
                    bytes, decoder: "image", mimeType: mimeType,
                    configuration: FuzzLimits.configuration(inflate: inflate))
            }
        }
    }
}
