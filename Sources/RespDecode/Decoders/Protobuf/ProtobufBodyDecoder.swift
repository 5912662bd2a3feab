/// The protobuf decoder: protobuf messages without a schema, and gRPC / gRPC-Web bodies of length-prefixed messages
/// (docs/decoding.md#protobuf, docs/output.md#protobuf). The wire format is read by our own ``ProtobufReader``.
public struct ProtobufBodyDecoder: BodyDecoder {
    public let name = "protobuf"

    /// The protobuf types servers send, and gRPC's (docs/decoding.md#protobuf).
    public let defaultAcceptableTypes: [MediaTypePattern] = [
        "application/x-protobuf", "application/protobuf", "application/vnd.google.protobuf",
        "application/x-google-protobuf", "application/grpc", "application/grpc+proto", "application/grpc-web",
        "application/grpc-web+proto",
    ].compactMap(MediaTypePattern.init)

    public init() {}

    public func decode(
        _ body: UnsafeBufferPointer<UInt8>, context: inout DecodingContext, into output: OutputBuffer
    ) throws(RecordError) -> Bool {
        let limits = context.options.limits
        let reader = ProtobufReader(
            output: output, limits: .init(maxDepth: limits.maxProtobufDepth, maxValueBytes: limits.maxValueBytes))
        let mime = context.mimeType?.lowercased() ?? ""
        guard mime.hasPrefix("application/grpc") else {
            if Self.isNoContent(body) { return false }
            let mark = output.mark
            output.append(ascii: "{\"fields\":")
            do { try reader.readMessage(body) } catch {
                output.rollback(to: mark)
                throw error
            }
            output.append(UInt8(ascii: "}"))
            return true
        }
        let mark = output.mark
        do {
            return try readGRPC(body, reader: reader, context: &context, output: output)
        } catch {
            output.rollback(to: mark)
            throw error
        }
    }

    /// gRPC and gRPC-Web: frames of a flags byte and a 32-bit big-endian length; flag 0x01 compressed (with the
    /// `grpc-encoding` header's coding), 0x80 gRPC-Web's trailer frame.
    private func readGRPC(
        _ body: UnsafeBufferPointer<UInt8>, reader: ProtobufReader, context: inout DecodingContext,
        output: OutputBuffer
    ) throws(RecordError) -> Bool {
        let headers = context.headers
        var status = context.trailers?.last("grpc-status") ?? headers?.last("grpc-status")
        var message = context.trailers?.last("grpc-message") ?? headers?.last("grpc-message")
        // A trailers-only response (no message, the status in the headers) still says how the call ended.
        if body.isEmpty && status == nil { return false }
        output.append(ascii: "{\"messages\":[")
        var i = 0
        var count = 0
        var trailerFields: [(String, String)]?
        while i < body.count {
            let start = i
            guard body.count - i >= 5 else {
                throw RecordError(
                    .invalidProtobuf, "a truncated gRPC frame header (\(body.count - i) of 5 bytes)",
                    location: .init(offset: start))
            }
            let flags = body[i]
            let length = Int(body[i + 1]) << 24 | Int(body[i + 2]) << 16 | Int(body[i + 3]) << 8 | Int(body[i + 4])
            i += 5
            guard length <= body.count - i else {
                throw RecordError(
                    .invalidProtobuf, "a gRPC frame of \(length) bytes with \(body.count - i) left",
                    location: .init(offset: start))
            }
            let payload = UnsafeBufferPointer(rebasing: body[i..<(i + length)])
            i += length
            if flags & 0x80 != 0 {
                // gRPC-Web's trailer frame: HTTP/1-style `name: value` lines.
                trailerFields = Self.trailerLines(payload)
                continue
            }
            if count > 0 { output.append(UInt8(ascii: ",")) }
            count += 1
            if flags & 0x01 == 0 {
                output.append(ascii: "{\"fields\":")
                try reader.readMessage(payload, base: i - length)
                output.append(UInt8(ascii: "}"))
            } else {
                try readCompressed(payload, at: start, reader: reader, context: &context, output: output)
            }
            guard output.count <= reader.valueEnd else {
                throw RecordError(.limitExceeded, "protobuf value larger than the value limit (maxValueBytes)")
            }
        }
        output.append(UInt8(ascii: "]"))
        if let trailerFields {
            output.append(ascii: ",\"trailer\":{")
            for (k, (name, value)) in trailerFields.enumerated() {
                if k > 0 { output.append(UInt8(ascii: ",")) }
                output.appendJSONString(name)
                output.append(UInt8(ascii: ":"))
                output.appendJSONString(value)
            }
            output.append(UInt8(ascii: "}"))
            if let value = trailerFields.last(where: { $0.0 == "grpc-status" })?.1 { status = value }
            if let value = trailerFields.last(where: { $0.0 == "grpc-message" })?.1 { message = value }
        }
        if let status {
            output.append(ascii: ",\"grpcStatus\":")
            if let code = Int(status.trimmingASCIISpaces), code >= 0 {
                output.append(decimal: code)
            } else {
                output.appendJSONString(status)
            }
        }
        if let message {
            output.append(ascii: ",\"grpcMessage\":")
            output.appendJSONString(Self.percentDecoded(message))
        }
        output.append(UInt8(ascii: "}"))
        return true
    }

    /// A frame with the compressed flag: inflated with `grpc-encoding`'s coding when the Content-Encoding code undoes
    /// it, else kept as base64 with a warning.
    private func readCompressed(
        _ payload: UnsafeBufferPointer<UInt8>, at start: Int, reader: ProtobufReader, context: inout DecodingContext,
        output: OutputBuffer
    ) throws(RecordError) {
        let coding = context.headers?.last("grpc-encoding")?.lowercased() ?? "identity"
        if ["gzip", "x-gzip", "deflate", "zstd"].contains(coding) {
            let inflated: [UInt8]
            do throws(RecordError) {
                inflated = try ContentDecoding.decode(payload, codings: [coding], limits: context.options.limits).body
            } catch {
                throw RecordError(
                    .invalidProtobuf, "a compressed gRPC frame is not \(coding): \(error.message)",
                    location: .init(offset: start))
            }
            output.append(ascii: "{\"compressed\":")
            output.appendJSONString(coding)
            output.append(ascii: ",\"fields\":")
            try inflated.withUnsafeBufferPointer { (bytes) throws(RecordError) in try reader.readMessage(bytes) }
            output.append(UInt8(ascii: "}"))
        } else {
            context.warnings.append("a gRPC frame compressed with '\(coding)', which is not undone, is kept as bytes")
            output.append(ascii: "{\"compressed\":")
            output.appendJSONString(coding)
            output.append(ascii: ",\"value\":{\"base64\":\"")
            output.appendBase64(payload)
            output.append(ascii: "\"}}")
        }
    }

    /// The `name: value` lines of a gRPC-Web trailer frame, names lower-cased, values trimmed; lines without a colon
    /// are skipped, text that is not UTF-8 is repaired (U+FFFD).
    static func trailerLines(_ payload: UnsafeBufferPointer<UInt8>) -> [(String, String)] {
        let text = String(decoding: payload, as: UTF8.self)
        var result: [(String, String)] = []
        for line in text.split(whereSeparator: { $0 == "\r\n" || $0 == "\n" || $0 == "\r" }) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = String(line[..<colon]).trimmingASCIISpaces.lowercased()
            let value = String(line[line.index(after: colon)...]).trimmingASCIISpaces
            result.append((name, value))
        }
        return result
    }

    /// `grpc-message` is percent-encoded UTF-8 (gRPC's HTTP/2 protocol document); text that does not decode as UTF-8
    /// is kept as it came.
    static func percentDecoded(_ text: String) -> String {
        guard text.utf8.contains(UInt8(ascii: "%")) else { return text }
        var bytes: [UInt8] = []
        let utf8 = Array(text.utf8)
        var i = 0
        func hex(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x41...0x46: c - 0x41 + 10
            case 0x61...0x66: c - 0x61 + 10
            default: nil
            }
        }
        while i < utf8.count {
            if utf8[i] == UInt8(ascii: "%"), i + 2 < utf8.count, let high = hex(utf8[i + 1]), let low = hex(utf8[i + 2])
            {
                bytes.append(high << 4 | low)
                i += 3
            } else {
                bytes.append(utf8[i])
                i += 1
            }
        }
        return String(validating: bytes, as: UTF8.self) ?? text
    }
}

extension StringProtocol {
    /// The text without leading and trailing ASCII spaces and tabs.
    fileprivate var trimmingASCIISpaces: String {
        var scalars = Substring(self)
        while let first = scalars.first, first == " " || first == "\t" { scalars.removeFirst() }
        while let last = scalars.last, last == " " || last == "\t" { scalars.removeLast() }
        return String(scalars)
    }
}
