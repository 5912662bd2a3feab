import RespDecode

/// The multipart decoder with the default chain (its parts go through every decoder): the input's first line (at
/// most 256 bytes, without its LF) is the Content-Type field value, the rest the body; an input without a line feed
/// there is a body of `multipart/form-data; boundary=b`. Besides the shared checks: at most `maxParts` parts are
/// read at every depth together, and the value stays within `maxValueBytes`.
enum MultipartTarget {
    static let maxParts = 64

    static func run(_ data: UnsafeBufferPointer<UInt8>) {
        var configuration = FuzzLimits.configuration()
        configuration.limits.maxMultipartParts = maxParts
        configuration.limits.maxMultipartDepth = 3
        configuration.limits.maxValueBytes = 1 << 20
        let options = configuration.decoding.options
        let newline = data.prefix(256).firstIndex(of: 0x0A)
        let contentType =
            newline.map { String(decoding: UnsafeBufferPointer(rebasing: data[..<$0]), as: UTF8.self) }
            ?? "multipart/form-data; boundary=b"
        let body = newline.map { UnsafeBufferPointer(rebasing: data[($0 + 1)...]) } ?? data
        guard let decoder = DecoderRegistry.decoder(named: "multipart") else { violated("no multipart decoder") }
        var context = DecodingContext(
            mimeType: MediaType.mimeType(ofContentType: contentType) ?? "multipart/mixed", options: options)
        context.contentType = contentType
        context.chain = DecoderRegistry.defaultChain.map { ChainEntry(decoder: $0) }
        let out = OutputBuffer()
        out.append(ascii: "[")
        let mark = out.mark
        do {
            if try decoder.decode(body, context: &context, into: out) {
                JSONCheck.requireValid(UnsafeBufferPointer(rebasing: out.bytes[mark...]), "multipart value")
                if out.count - mark > options.limits.maxValueBytes {
                    violated("a multipart value of \(out.count - mark) bytes, past \(options.limits.maxValueBytes)")
                }
            } else if out.count != mark {
                violated("multipart said it wrote nothing but wrote \(out.count - mark) bytes")
            }
        } catch {
            if out.count != mark { violated("multipart threw and left \(out.count - mark) bytes") }
        }
        if context.embeddedBodies > maxParts { violated("\(context.embeddedBodies) parts read, past \(maxParts)") }
    }
}
