/// Why a record did not decode cleanly: the `error` object of a result line.
///
/// Errors are data, not failures of the worker: every framing, validation and parse problem becomes one of these and
/// is written on the record's line. `code` is stable and is what downstream code should match on; `message` is for
/// people. The two validation codes carry AFNetworking's URL error codes (`urlErrorCode`) and message strings.
public struct RecordError: Error, Hashable, Sendable, CustomStringConvertible {
    /// Broad, stable classification, written as `error.code`.
    public var code: Code
    /// What went wrong, for people. Parse errors say what was expected.
    public var message: String
    /// Where in the body (or, for framing errors, the input) the problem was found, if known.
    public var location: Location?
    /// The error this one was chained over (AFNetworking's `NSUnderlyingErrorKey`).
    public var underlying: RecordError? {
        get { underlyingBox?.error }
        set { underlyingBox = newValue.map(Box.init) }
    }
    private var underlyingBox: Box?

    /// AFNetworking's URL error code for this error, when it has one (-1011, -1016).
    public var urlErrorCode: Int? { code.urlErrorCode }

    public init(_ code: Code, _ message: String, location: Location? = nil, underlying: RecordError? = nil) {
        self.code = code
        self.message = message
        self.location = location
        self.underlyingBox = underlying.map(Box.init)
    }

    public var description: String {
        var text = "\(code): \(message)"
        if let location { text += " (\(location))" }
        if let underlying { text += "; underlying \(underlying)" }
        return text
    }

    /// AFNetworking's `AFErrorWithUnderlyingError`: chains `underlying` below `self`, unless `self` already has an
    /// underlying error, in which case the new one is dropped (chains never get deeper than the first error made them).
    public func chained(over underlying: RecordError?) -> RecordError {
        guard let underlying, self.underlying == nil else { return self }
        var copy = self
        copy.underlying = underlying
        return copy
    }

    /// A position in a body or an input stream.
    public struct Location: Hashable, Sendable, CustomStringConvertible {
        /// Byte offset, 0-based.
        public var offset: Int64
        /// Line, 1-based, for text formats.
        public var line: Int?
        /// Column in bytes, 1-based, for text formats.
        public var column: Int?

        public init(offset: Int64, line: Int? = nil, column: Int? = nil) {
            self.offset = offset
            self.line = line
            self.column = column
        }

        public init(offset: Int, line: Int? = nil, column: Int? = nil) {
            self.init(offset: Int64(offset), line: line, column: column)
        }

        public var description: String {
            if let line, let column { return "byte \(offset), line \(line), column \(column)" }
            return "byte \(offset)"
        }
    }

    /// The stable error codes (docs/output.md#errors).
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Wrapped: String, Hashable, Sendable {
            case unacceptableStatusCode, unacceptableContentType, invalidJSON, invalidXML, invalidPropertyList
            case invalidImage, unsupportedFormat, contentDecodingFailed, limitExceeded, malformedRecord
            case truncatedRecord, digestMismatch, invalidNDJSON, invalidMultipart
            case invalidMessagePack, invalidCBOR, invalidProtobuf
        }
        private let wrapped: Wrapped

        /// The status code is not in the acceptable set (AFNetworking -1011, `NSURLErrorBadServerResponse`).
        public static let unacceptableStatusCode = Code(wrapped: .unacceptableStatusCode)
        /// The MIME type is not acceptable (AFNetworking -1016, `NSURLErrorCannotDecodeContentData`).
        public static let unacceptableContentType = Code(wrapped: .unacceptableContentType)
        /// The body is not one valid JSON text.
        public static let invalidJSON = Code(wrapped: .invalidJSON)
        /// A line of an NDJSON or JSON Lines body is not one valid JSON text (the message and location name the line).
        public static let invalidNDJSON = Code(wrapped: .invalidNDJSON)
        /// The body is not well-formed XML.
        public static let invalidXML = Code(wrapped: .invalidXML)
        /// The body is not a valid property list.
        public static let invalidPropertyList = Code(wrapped: .invalidPropertyList)
        /// The body is not a multipart body that can be read (docs/decoding.md#multipart).
        public static let invalidMultipart = Code(wrapped: .invalidMultipart)
        /// The body is not one valid MessagePack value (docs/output.md#msgpack).
        public static let invalidMessagePack = Code(wrapped: .invalidMessagePack)
        /// The body is not one well-formed CBOR data item, or a sequence of them for `application/cbor-seq`
        /// (docs/output.md#cbor).
        public static let invalidCBOR = Code(wrapped: .invalidCBOR)
        /// The body is not a decodable image.
        public static let invalidImage = Code(wrapped: .invalidImage)
        /// The body is not a protobuf message, or its gRPC frames are truncated (docs/decoding.md#protobuf).
        public static let invalidProtobuf = Code(wrapped: .invalidProtobuf)
        /// The body is in a format this build cannot decode.
        public static let unsupportedFormat = Code(wrapped: .unsupportedFormat)
        /// The declared Content-Encoding could not be undone.
        public static let contentDecodingFailed = Code(wrapped: .contentDecodingFailed)
        /// A configured limit was reached (header section, body size, nesting, …).
        public static let limitExceeded = Code(wrapped: .limitExceeded)
        /// The input could not be framed into a response here.
        public static let malformedRecord = Code(wrapped: .malformedRecord)
        /// The input ended inside a record.
        public static let truncatedRecord = Code(wrapped: .truncatedRecord)
        /// A recorded payload digest does not match the payload.
        public static let digestMismatch = Code(wrapped: .digestMismatch)

        /// The name written as `error.code`.
        public var description: String { wrapped.rawValue }

        /// The code written as `name` (an ndjson record that `frame` wrote carries its failure's); nil for none.
        public init?(name: String) {
            guard let wrapped = Wrapped(rawValue: name) else { return nil }
            self.wrapped = wrapped
        }

        private init(wrapped: Wrapped) { self.wrapped = wrapped }

        /// AFNetworking's URL error code, for the two validation codes.
        public var urlErrorCode: Int? {
            switch wrapped {
            case .unacceptableStatusCode: -1011
            case .unacceptableContentType: -1016
            default: nil
            }
        }
    }

    private final class Box: Hashable, Sendable {
        let error: RecordError
        init(_ error: RecordError) { self.error = error }
        static func == (lhs: Box, rhs: Box) -> Bool { lhs.error == rhs.error }
        func hash(into hasher: inout Hasher) { hasher.combine(error) }
    }
}
