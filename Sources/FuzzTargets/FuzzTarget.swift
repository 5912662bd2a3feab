/*
 The fuzz targets: one per parser that reads untrusted bytes, each a function of one input that returns normally or
 stops the process (a trap, `fatalError`) when an invariant fails. libFuzzer calls them through `respdecode-fuzz`
 (built with `--sanitize=fuzzer`, scripts/fuzz); the same binary built normally replays files, and the regression
 test replays every file under Tests/FuzzRegressions through them, so a crash once found stays fixed.

 What every target checks besides "no crash": every line written is valid JSON (read back by the strict transcoder),
 a decoder that throws leaves its output as it was, and output stays within the limits it was given. The framers are
 also fed the same bytes in pieces (cut where the input's own hash says): the lines must be the same bytes.

 Only the library's public API is used, as a caller would use it.
 */
import RespDecode

public enum FuzzTarget: String, CaseIterable, Sendable {
    case http, warc, arc, wacz, har, ndjson, encoding, json, xml
    /// The WARC framer on `.warc.zst` and `.warc.lz4` inputs: the same target as `warc`, seeded with zstd and LZ4
    /// frames (scripts/fuzz), so that the fuzzer works on the frame layers.
    case zst, lz4
    case plistBinary = "plist-binary"
    case plistXML = "plist-xml"
    /// OpenStep text plists and `.strings` tables (docs/decoding.md#openstep-property-lists), through the plist decoder.
    case plistOpenStep = "plist-openstep"
    case png, jpeg
    /// The html decoder (libxml2's HTML parser in SAX mode and the value's rules).
    case html
    /// The text layer (charset resolution and conversion) and the text decoder.
    case text
    /// The form decoder (the WHATWG urlencoded parser).
    case form
    /// The sse decoder (the HTML event-stream interpretation, data through the JSON transcoder).
    case sse
    /// The ndjson body decoder: NDJSON lines, or an RFC 7464 sequence when the input starts with RS (0x1E). Not
    /// `ndjson`, which is the framer of ndjson input records.
    case ndjsonBody = "ndjson-body"
    /// The multipart decoder, its parts through the default chain (the first line is the Content-Type).
    case multipart
    /// The msgpack decoder (msgpack-c's unpack template with our callbacks).
    case msgpack
    /// The cbor decoder (libcbor's streaming decoder), as `application/cbor` and as `application/cbor-seq`.
    case cbor
    /// The protobuf decoder, on the input as one message and as gRPC frames (docs/decoding.md#protobuf).
    case protobuf
    /// `respdecode serve`'s HTTP API end to end: the input is one client's bytes (docs/sidecar.md#http-api).
    case serve

    /// Runs the target on one input.
    public func run(_ data: UnsafeBufferPointer<UInt8>) {
        switch self {
        case .http: FramerTarget.run(data) { HTTPStreamFramer(limits: FuzzLimits.limits) }
        case .warc, .zst, .lz4:
            FramerTarget.run(data) { WARCFramer(limits: FuzzLimits.limits) }
            SpanTarget.run(data)
        // ARC: the archive framer after an ARC file's first record, so that every input is read as ARC records.
        case .arc:
            let arc = ARCSeed.filedesc + Array(data)
            arc.withUnsafeBufferPointer { bytes in FramerTarget.run(bytes) { WARCFramer(limits: FuzzLimits.limits) } }
        case .wacz: WACZTarget.run(data)
        case .har: FramerTarget.run(data) { HARFramer(limits: FuzzLimits.limits) }
        case .ndjson: FramerTarget.run(data) { NDJSONFramer(limits: FuzzLimits.limits) }
        case .encoding: EncodingTarget.run(data)
        case .json: JSONTarget.run(data)
        case .xml: BodyTarget.run(data, decoder: "xml", mimeType: "application/xml")
        case .plistBinary: BodyTarget.run(data, decoder: "plist", mimeType: "application/x-plist", magic: "bplist00")
        case .plistXML: BodyTarget.run(data, decoder: "plist", mimeType: "application/x-plist")
        case .plistOpenStep: BodyTarget.run(data, decoder: "plist", mimeType: "application/x-plist")
        case .png:
            ImageTarget.run(data, mimeType: "image/png", magic: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        case .jpeg: ImageTarget.run(data, mimeType: "image/jpeg", magic: [0xFF, 0xD8])
        case .html: HTMLTarget.run(data)
        case .text: TextTarget.run(data)
        case .form: BodyTarget.run(data, decoder: "form", mimeType: "application/x-www-form-urlencoded")
        case .sse:
            // With nulls kept as well, so that data values take the transcoder's other path.
            BodyTarget.run(data, decoder: "sse", mimeType: "text/event-stream")
            var keepNulls = FuzzLimits.configuration()
            keepNulls.decoding.options.stripNulls = false
            BodyTarget.run(data, decoder: "sse", mimeType: "text/event-stream", configuration: keepNulls)
        case .ndjsonBody:
            let sequence = data.first == 0x1E
            BodyTarget.run(
                data, decoder: "ndjson", mimeType: sequence ? "application/json-seq" : "application/x-ndjson")
        case .multipart: MultipartTarget.run(data)
        case .msgpack: BodyTarget.run(data, decoder: "msgpack", mimeType: "application/msgpack")
        case .cbor:
            BodyTarget.run(data, decoder: "cbor", mimeType: "application/cbor")
            BodyTarget.run(data, decoder: "cbor", mimeType: "application/cbor-seq")
        case .protobuf:
            BodyTarget.run(data, decoder: "protobuf", mimeType: "application/x-protobuf")
            BodyTarget.run(data, decoder: "protobuf", mimeType: "application/grpc-web+proto")
        case .serve: ServeTarget.run(data)
        }
    }

    public func run(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { run($0) }
    }
}

/// What the `arc` target puts before its input.
enum ARCSeed {
    /// A v1 `filedesc://` record and its separator.
    static let filedesc: [UInt8] = {
        let block = "1 1 fuzz\nURL IP-address Archive-date Content-type Archive-length\n"
        return Array("filedesc://fuzz.arc 0.0.0.0 20240102030405 text/plain \(block.utf8.count)\n\(block)\n".utf8)
    }()
}
