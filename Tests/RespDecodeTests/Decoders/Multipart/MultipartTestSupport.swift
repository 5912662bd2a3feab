import Foundation
import Testing

@testable import RespDecode

/// What the multipart decoder gave for one body: the value as an object (nil when none or on an error), the error,
/// and the warnings.
struct MultipartOutcome {
    var value: [String: Any]?
    var error: RecordError?
    var warnings: [String]

    var parts: [[String: Any]] { (value?["parts"] as? [[String: Any]]) ?? [] }

    /// Each part's content as the raw decoder gives it (a chain without decoders): its bytes.
    var partBytes: [[UInt8]?] {
        parts.map { part in
            guard let value = part["value"] as? [String: Any] else { return part["error"] == nil ? [] : nil }
            if let text = value["text"] as? String { return Array(text.utf8) }
            if let base64 = value["base64"] as? String { return Data(base64Encoded: base64).map { [UInt8]($0) } }
            return nil
        }
    }
}

/// Runs the multipart decoder on `body` with the Content-Type field value `contentType`, with `chain` (default: no
/// decoder, so that every part is given raw) as the chain parts are decoded with.
func decodeMultipart(
    _ body: [UInt8], contentType: String, chain: [String] = [], depth: Int = 0,
    configure: (inout DecoderOptions) -> Void = { _ in }
) throws -> MultipartOutcome {
    var options = DecoderOptions()
    configure(&options)
    var context = DecodingContext(
        mimeType: MediaType.mimeType(ofContentType: contentType), url: "http://example.com/upload", options: options)
    context.contentType = contentType
    context.chain = chain.compactMap(DecoderRegistry.decoder(named:)).map { ChainEntry(decoder: $0) }
    context.depth = depth
    let out = OutputBuffer()
    let wrote: Bool
    do throws(RecordError) {
        wrote = try body.withUnsafeBufferPointer { (bytes) throws(RecordError) -> Bool in
            try MultipartBodyDecoder().decode(bytes, context: &context, into: out)
        }
    } catch {
        #expect(out.count == 0, "the decoder threw and left \(out.count) bytes")
        return MultipartOutcome(value: nil, error: error, warnings: context.warnings)
    }
    guard wrote else { return MultipartOutcome(value: nil, error: nil, warnings: context.warnings) }
    let object = try #require(
        try JSONSerialization.jsonObject(with: Data(out.bytes)) as? [String: Any],
        "not a JSON object: \(String(decoding: out.bytes, as: UTF8.self).prefix(300))")
    return MultipartOutcome(value: object, error: nil, warnings: context.warnings)
}

func decodeMultipart(
    _ body: String, contentType: String, chain: [String] = [], depth: Int = 0,
    configure: (inout DecoderOptions) -> Void = { _ in }
) throws -> MultipartOutcome {
    try decodeMultipart(Array(body.utf8), contentType: contentType, chain: chain, depth: depth, configure: configure)
}
