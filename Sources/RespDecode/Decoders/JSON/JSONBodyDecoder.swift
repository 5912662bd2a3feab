/// The json decoder (AFNetworking's `AFJSONResponseSerializer` with `removesKeysWithNullValues`), on our own
/// ``JSONTranscoder``.
public struct JSONBodyDecoder: BodyDecoder {
    public let name = "json"

    /// `application/json`, `text/json`, `text/javascript` (AFNetworking's three) and any `+json` type (RFC 6839).
    public let defaultAcceptableTypes: [MediaTypePattern] = [
        "application/json", "text/json", "text/javascript", "*/*+json",
    ]
    .compactMap(MediaTypePattern.init)

    public init() {}

    public func decode(
        _ body: UnsafeBufferPointer<UInt8>, context: inout DecodingContext, into output: OutputBuffer
    ) throws(RecordError) -> Bool {
        // An empty body, or exactly one space (Rails' `head :ok`), means "no content": no value and no error
        // (docs/decoding.md#empty-bodies).
        if Self.isNoContent(body) { return false }
        let options = JSONTranscoder.Options(
            stripNulls: context.options.stripNulls, maxDepth: context.options.limits.maxDepth)
        try JSONTranscoder(options: options).transcode(body, into: output)
        return true
    }
}
