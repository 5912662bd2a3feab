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
    /// The Content-Type field value as received, parameters included (the multipart decoder reads its `boundary`).
    public var contentType: String?
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
    /// The run's chain, for decoders that decode bodies embedded in theirs (multipart parts) with it
    /// (docs/decoding.md#embedded-bodies); empty where there is none (a decoder called on its own).
    public var chain: [ChainEntry] = []
    /// How many bodies enclose this one: 0 for a record's body, 1 for a part of it, and so on.
    public var depth = 0
    /// How many embedded bodies (multipart parts) the record's decoders have read so far, at every depth together:
    /// what bounds a record's total (`maxMultipartParts`), however they nest.
    public var embeddedBodies = 0
    /// The bytes the record's decoders have transfer-decoded so far (multipart parts' base64 and quoted-printable
    /// copies), at every depth together, each counted at its largest possible size: bounded by
    /// ``recordBodyBytes`` (docs/decoding.md#multipart-limits).
    public var transferDecodedBytes = 0
    /// The size of the record's body (depth 0), set by the first decoder that needs it; nil before.
    public var recordBodyBytes: Int?

    public init(mimeType: String?, charset: String? = nil, url: String? = nil, options: DecoderOptions) {
        self.mimeType = mimeType
        self.charset = charset
        self.url = url
        self.options = options
    }
}

/// What decoding an embedded body gave (``DecodingContext/decodeEmbedded(_:with:mimeType:contentType:charset:url:maxValueBytes:into:)``).
public struct EmbeddedOutcome: Sendable {
    /// Whether a value was written.
    public var wroteValue = false
    /// The decoder's error; the output is then as it was.
    public var error: RecordError?
    /// The decoder's warnings.
    public var warnings: [String] = []
    /// Whether ``error`` is the value passing the `maxValueBytes` it was given (docs/decoding.md#multipart-limits).
    public var valueTooLarge = false
}

extension DecodingContext {
    /// The decoder for a body embedded in this one (a multipart part) of type `mimeType`: the first entry of
    /// ``chain`` that accepts it, else the raw decoder, as for a record's body (docs/decoding.md#embedded-bodies).
    public func embeddedDecoder(for mimeType: String?) -> any BodyDecoder {
        chain.first { $0.accepts(mimeType) }?.decoder ?? RawDecoder()
    }

    /// Decodes a body embedded in this one with `decoder` (from ``embeddedDecoder(for:)``) as the compound decoder
    /// decodes a record's body, writing the value to `output`, which on an error, or when no value was written, is as
    /// it was (docs/decoding.md#embedded-bodies). The embedded body is one level deeper, and its value may take at
    /// most `maxValueBytes` (else `limitExceeded`). The embedded bodies it reads in turn count in ``embeddedBodies``.
    public mutating func decodeEmbedded(
        _ body: UnsafeBufferPointer<UInt8>, with decoder: any BodyDecoder, mimeType: String?, contentType: String?,
        charset: String?, url: String?, maxValueBytes: Int, into output: OutputBuffer
    ) -> EmbeddedOutcome {
        var nested = DecodingContext(mimeType: mimeType, charset: charset, url: url, options: options)
        nested.contentType = contentType
        nested.chain = chain
        nested.depth = depth + 1
        nested.embeddedBodies = embeddedBodies
        nested.transferDecodedBytes = transferDecodedBytes
        nested.recordBodyBytes = recordBodyBytes
        defer {
            embeddedBodies = nested.embeddedBodies
            transferDecodedBytes = nested.transferDecodedBytes
        }
        let budget = max(min(maxValueBytes, options.limits.maxValueBytes), 0)
        nested.options.limits.maxValueBytes = budget
        var outcome = EmbeddedOutcome()
        let mark = output.mark
        let tooLarge = RecordError(.limitExceeded, "the value is larger than --max-value-bytes allows here (\(budget))")
        // The raw decoder writes at least a byte per body byte: a body past the budget is refused before it is copied.
        if decoder is RawDecoder && body.count > budget {
            outcome.error = tooLarge
            outcome.valueTooLarge = true
            return outcome
        }
        do {
            outcome.wroteValue = try decoder.decode(body, context: &nested, into: output)
            if output.count - mark > budget {
                output.rollback(to: mark)
                outcome.wroteValue = false
                outcome.error = tooLarge
                outcome.valueTooLarge = true
            } else if !outcome.wroteValue {
                output.rollback(to: mark)
            }
        } catch {
            output.rollback(to: mark)
            outcome.wroteValue = false
            outcome.error = error
        }
        outcome.warnings = nested.warnings
        return outcome
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
        FormBodyDecoder(),
        SSEBodyDecoder(),
        NDJSONBodyDecoder(),
        MultipartBodyDecoder(),
        MessagePackBodyDecoder(),
        CBORBodyDecoder(),
        ProtobufBodyDecoder(),
        HTMLBodyDecoder(),
        TextBodyDecoder(),
    ]

    /// The names of the decoders of the default chain, in order.
    public static let defaultChainNames = [
        "json", "xml", "plist", "image", "form", "multipart", "sse", "ndjson", "msgpack", "cbor", "protobuf", "html",
        "text",
    ]

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
