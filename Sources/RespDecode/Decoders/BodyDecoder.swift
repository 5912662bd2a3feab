/// One decoder of the chain: a name, the MIME types it accepts by default, and one entry point that writes the
/// decoded value straight into the result line (AFNetworking's `AFURLResponseSerialization`, minus the object tree).
///
/// A new decoder is one file with a type conforming to this protocol plus one line in ``DecoderRegistry``.
public protocol BodyDecoder: Sendable {
    /// The name used in `--chain`, `--accept` and the output's `decoder` key.
    var name: String { get }
    /// The MIME types this decoder accepts unless configured otherwise.
    var defaultAcceptableTypes: [MediaTypePattern] { get }
    /// Decodes `body` and writes its JSON value to `output`.
    /// - Returns: `true` when a value was written, `false` when the body holds no value (e.g. an empty JSON body).
    /// - Throws: the decoder's parse error; `output` must then be as it was on entry.
    func decode(_ body: UnsafeBufferPointer<UInt8>, context: inout DecodingContext, into output: OutputBuffer)
        throws(RecordError) -> Bool
}

/// What a decoder may need besides the body.
public struct DecodingContext: Sendable {
    /// The response's MIME type (docs/decoding.md#mime-type).
    public var mimeType: String?
    /// The `charset` parameter of the response's Content-Type, if any.
    public var charset: String?
    /// The record's URL (WARC-Target-URI, the HAR entry's or ndjson record's `url`), if any: links resolve against it.
    public var url: String?
    /// The response's Content-Language field, if any: a hint for language detection (docs/decoding.md#language).
    public var contentLanguage: String?
    /// The response's header fields and its trailer fields (chunked or HTTP/2 trailers), if the caller has them: the
    /// protobuf decoder reads `grpc-encoding`, `grpc-status` and `grpc-message` there (docs/decoding.md#protobuf).
    public var headers: HeaderFields?
    public var trailers: HeaderFields?
    /// The decoders' options and limits: all a decoder is told of the run's settings.
    public var options: DecoderOptions
    /// Warnings to put on the line.
    public var warnings: [String] = []

    public init(mimeType: String?, charset: String? = nil, url: String? = nil, options: DecoderOptions) {
        self.mimeType = mimeType
        self.charset = charset
        self.url = url
        self.options = options
    }
}

extension BodyDecoder {
    /// Whether a body means "no content": empty, or exactly one space (Rails' `head :ok`). The text decoders give no
    /// value and no error for it (docs/decoding.md#empty-bodies; AFNetworking's plist test `…Handles204`).
    @inline(__always)
    public static func isNoContent(_ body: UnsafeBufferPointer<UInt8>) -> Bool {
        body.isEmpty || (body.count == 1 && body[0] == 0x20)
    }
}

/// Every decoder that can be named in `--chain`, and the default chain.
public enum DecoderRegistry {
    public static let all: [any BodyDecoder] = [
        JSONBodyDecoder(),
        XMLBodyDecoder(),
        PlistBodyDecoder(),
        ImageBodyDecoder(),
        ProtobufBodyDecoder(),
        HTMLBodyDecoder(),
        TextBodyDecoder(),
    ]

    /// The names of the decoders of the default chain, in order.
    public static let defaultChainNames = ["json", "xml", "plist", "image", "protobuf", "html", "text"]

    /// The default chain: the decoders of ``defaultChainNames``.
    public static var defaultChain: [any BodyDecoder] { defaultChainNames.compactMap(decoder(named:)) }

    /// The decoder called `name`, if any.
    public static func decoder(named name: String) -> (any BodyDecoder)? {
        all.first { $0.name == name }
    }
}

/// A decoder with the MIME types it accepts in this run.
public struct ChainEntry: Sendable {
    public var decoder: any BodyDecoder
    public var acceptableTypes: [MediaTypePattern]

    public init(decoder: any BodyDecoder, acceptableTypes: [MediaTypePattern]? = nil) {
        self.decoder = decoder
        self.acceptableTypes = acceptableTypes ?? decoder.defaultAcceptableTypes
    }

    /// Whether this entry accepts the MIME type.
    public func accepts(_ mimeType: String?) -> Bool {
        guard let mimeType else { return false }
        return acceptableTypes.contains { $0.matches(mimeType) }
    }
}
