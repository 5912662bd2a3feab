import Foundation
import Testing

@testable import RespDecode

/// Protobuf wire-format building blocks for the tests (written here from the encoding's definition).
enum Wire {
    static func varint(_ value: UInt64) -> [UInt8] {
        var rest = value
        var bytes: [UInt8] = []
        while rest >= 0x80 {
            bytes.append(UInt8(rest & 0x7F) | 0x80)
            rest >>= 7
        }
        return bytes + [UInt8(rest)]
    }
    static func key(_ field: UInt64, _ wire: UInt64) -> [UInt8] { varint(field << 3 | wire) }
    static func int(_ field: UInt64, _ value: UInt64) -> [UInt8] { key(field, 0) + varint(value) }
    static func bytes(_ field: UInt64, _ content: [UInt8]) -> [UInt8] {
        key(field, 2) + varint(UInt64(content.count)) + content
    }
    static func string(_ field: UInt64, _ text: String) -> [UInt8] { bytes(field, Array(text.utf8)) }
    static func fixed64(_ field: UInt64, _ value: UInt64) -> [UInt8] {
        key(field, 1) + (0..<8).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
    }
    static func fixed32(_ field: UInt64, _ value: UInt32) -> [UInt8] {
        key(field, 5) + (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * UInt32($0))) }
    }
    static func frame(_ payload: [UInt8], flags: UInt8 = 0) -> [UInt8] {
        let n = UInt32(payload.count)
        return [flags, UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)] + payload
    }
}

/// The protobuf decoder (docs/decoding.md#protobuf, docs/output.md#protobuf).
@Suite("Protobuf decoder")
struct ProtobufDecoderTests {
    struct Outcome {
        var value: String?
        var error: RecordError?
        var warnings: [String] = []
    }

    static func decode(
        _ body: [UInt8], type: String = "application/x-protobuf", headers: [(String, String)] = [],
        trailers: [(String, String)]? = nil, configure: (inout Configuration) -> Void = { _ in }
    ) -> Outcome {
        var configuration = Configuration()
        configure(&configuration)
        var context = DecodingContext(mimeType: type, options: configuration.decoding.options)
        context.headers = HeaderFields(headers)
        context.trailers = trailers.map(HeaderFields.init)
        let out = OutputBuffer()
        out.append(ascii: "prefix")
        do {
            let wrote = try body.withUnsafeBufferPointer {
                try ProtobufBodyDecoder().decode($0, context: &context, into: out)
            }
            return Outcome(
                value: wrote ? String(decoding: out.bytes[6...], as: UTF8.self) : nil, warnings: context.warnings)
        } catch {
            #expect(out.count == 6, "a failed decode must leave the output as it was")
            return Outcome(error: error as? RecordError)
        }
    }

    static func fields(_ body: [UInt8], configure: (inout Configuration) -> Void = { _ in }) -> String? {
        guard let value = decode(body, configure: configure).value else { return nil }
        #expect(value.hasPrefix("{\"fields\":") && value.hasSuffix("}"))
        return String(value.dropFirst(10).dropLast())
    }

    @Test func scalars() {
        #expect(Self.fields(Wire.int(1, 150)) == #"[{"field":1,"wire":0,"type":"varint","value":150}]"#)
        #expect(
            Self.fields(Wire.int(2, UInt64.max))
                == #"[{"field":2,"wire":0,"type":"varint","value":18446744073709551615,"signed":-1}]"#)
        #expect(
            Self.fields(Wire.fixed64(3, 1.5.bitPattern))
                == #"[{"field":3,"wire":1,"type":"fixed64","value":4609434218613702656,"double":1.5}]"#)
        #expect(
            Self.fields(Wire.fixed32(4, Float(0.1).bitPattern))
                == #"[{"field":4,"wire":5,"type":"fixed32","value":1036831949,"float":0.1}]"#)
        #expect(
            Self.fields(Wire.fixed32(5, Float.infinity.bitPattern | 0x8000_0000))
                == #"[{"field":5,"wire":5,"type":"fixed32","value":4286578688,"signed":-8388608,"float":"-Infinity"}]"#)
        #expect(
            Self.fields(Wire.int(536_870_911, 1))
                == #"[{"field":536870911,"wire":0,"type":"varint","value":1}]"#)
    }

    @Test func lengthDelimitedGuesses() {
        #expect(
            Self.fields(Wire.string(1, "hi")) == #"[{"field":1,"wire":2,"type":"string","value":"hi"}]"#,
            "parses as a message (field 13 = 105) but is printable text")
        #expect(Self.fields(Wire.string(1, "")) == #"[{"field":1,"wire":2,"type":"string","value":""}]"#)
        #expect(
            Self.fields(Wire.bytes(1, Wire.int(1, 1) + Wire.string(2, "x")))
                == #"[{"field":1,"wire":2,"type":"message","value":[{"field":1,"wire":0,"type":"varint","value":1},{"field":2,"wire":2,"type":"string","value":"x"}]}]"#
        )
        #expect(
            Self.fields(Wire.bytes(1, [0xFF, 0xFE, 0x00]))
                == #"[{"field":1,"wire":2,"type":"bytes","value":{"base64":"//4A"}}]"#)
        #expect(
            Self.fields(Wire.string(1, "tab\tline\nfeed\r"))
                == #"[{"field":1,"wire":2,"type":"string","value":"tab\tline\nfeed\r"}]"#)
        #expect(
            Self.fields(Wire.string(1, "a\u{1}b"))
                == #"[{"field":1,"wire":2,"type":"bytes","value":{"base64":"YQFi"}}]"#,
            "not printable and not a message: bytes")
        // Not guessed past the depth limit: the innermost level stays bytes.
        var nested = Wire.int(1, 7)
        for _ in 0..<3 { nested = Wire.bytes(1, nested) }
        let shallow = Self.fields(nested) { $0.limits.maxProtobufDepth = 3 } ?? ""
        #expect(shallow.components(separatedBy: "\"message\"").count == 3, "\(shallow)")
        #expect(shallow.contains(#""type":"bytes","value":{"base64":"CAc="}"#), "\(shallow)")
        let deep = Self.fields(nested) { $0.limits.maxProtobufDepth = 4 } ?? ""
        #expect(deep.components(separatedBy: "\"message\"").count == 4, "\(deep)")
    }

    @Test func groups() {
        let group = Wire.key(2, 3) + Wire.int(1, 5) + Wire.key(3, 3) + Wire.key(3, 4) + Wire.key(2, 4) + Wire.int(4, 1)
        #expect(
            Self.fields(group)
                == #"[{"field":2,"wire":3,"type":"group","value":[{"field":1,"wire":0,"type":"varint","value":5},{"field":3,"wire":3,"type":"group","value":[]}]},{"field":4,"wire":0,"type":"varint","value":1}]"#
        )
        #expect(Self.decode(Wire.key(2, 3) + Wire.int(1, 5)).error?.code == .invalidProtobuf, "not closed")
        #expect(Self.decode(Wire.key(2, 3) + Wire.key(3, 4)).error?.code == .invalidProtobuf, "closed by another")
        let deep: [UInt8] =
            Array(repeating: Wire.key(1, 3), count: 20).flatMap { $0 }
            + Array(repeating: Wire.key(1, 4), count: 20).flatMap { $0 }
        #expect(Self.decode(deep).error?.code == .limitExceeded)
        #expect(Self.decode(deep) { $0.limits.maxProtobufDepth = 20 }.value != nil)
    }

    @Test func notAMessage() {
        for (body, offset, what) in [
            ([0x0F, 0x01], 0, "wire type 7"), ([0x08], 0, "a varint missing"), ([0x08, 0x80], 0, "a truncated varint"),
            ([0x12, 0x05, 0x41], 1, "a length past the end"), ([0x00, 0x01], 0, "field 0"),
            ([0x09, 1, 2, 3], 0, "short fixed64"),
            ([0x08] + [UInt8](repeating: 0xFF, count: 10) + [0x01], 0, "11 bytes"),
            (Wire.int(1, 1) + Wire.key(1, 4), 2, "an end-group with none open"),
        ] as [([UInt8], Int, String)] {
            let outcome = Self.decode(body)
            #expect(outcome.error?.code == .invalidProtobuf, "\(what)")
            #expect(outcome.error?.location?.offset == Int64(offset), "\(what)")
        }
        #expect(Self.decode([]).value == nil && Self.decode([]).error == nil, "empty: no content")
    }

    @Test func valueLimit() {
        let body: [UInt8] = (0..<100).flatMap { _ in Wire.string(1, "some text here") }
        #expect(Self.decode(body) { $0.limits.maxValueBytes = 1000 }.error?.code == .limitExceeded)
        #expect(Self.decode(body) { $0.limits.maxValueBytes = 100_000 }.value != nil)
    }

    @Test func grpcFrames() {
        let message = Wire.int(1, 1)
        let body = Wire.frame(message) + Wire.frame(Wire.string(2, "b"))
        #expect(
            Self.decode(body, type: "application/grpc", trailers: [("grpc-status", "0")]).value
                == #"{"messages":[{"fields":[{"field":1,"wire":0,"type":"varint","value":1}]},{"fields":[{"field":2,"wire":2,"type":"string","value":"b"}]}],"grpcStatus":0}"#
        )
        // Trailers-only: the status in the headers, no body.
        #expect(
            Self.decode([], type: "application/grpc", headers: [("grpc-status", "14"), ("grpc-message", "no%20way")])
                .value == #"{"messages":[],"grpcStatus":14,"grpcMessage":"no way"}"#)
        #expect(Self.decode([], type: "application/grpc").value == nil)
        // gRPC-Web: the trailer frame's fields override the headers'.
        let web = Wire.frame(message) + Wire.frame(Array("grpc-status: 3\r\ngrpc-message: bad\r\n".utf8), flags: 0x80)
        #expect(
            Self.decode(web, type: "application/grpc-web+proto", headers: [("grpc-status", "0")]).value
                == #"{"messages":[{"fields":[{"field":1,"wire":0,"type":"varint","value":1}]}],"trailer":{"grpc-status":"3","grpc-message":"bad"},"grpcStatus":3,"grpcMessage":"bad"}"#
        )
        #expect(Self.decode(Array(body.dropLast()), type: "application/grpc").error?.code == .invalidProtobuf)
        #expect(Self.decode([0, 0, 0], type: "application/grpc").error?.code == .invalidProtobuf)
        let huge = Self.decode([0, 0xFF, 0xFF, 0xFF, 0xFF, 1], type: "application/grpc")
        #expect(huge.error?.code == .invalidProtobuf && huge.error?.message.contains("4294967295") == true)
        #expect(Self.decode(Wire.frame([0x0F]), type: "application/grpc").error?.location?.offset == 5)
    }

    @Test func grpcCompressedFrames() {
        let message = Wire.int(1, 1) + Wire.string(2, "zipped")
        let gzipped = Compressor.deflate(message, format: .gzip)
        let decoded = Self.decode(
            Wire.frame(gzipped, flags: 1), type: "application/grpc", headers: [("grpc-encoding", "gzip")])
        #expect(
            decoded.value
                == #"{"messages":[{"compressed":"gzip","fields":[{"field":1,"wire":0,"type":"varint","value":1},{"field":2,"wire":2,"type":"string","value":"zipped"}]}]}"#
        )
        let snappy = Self.decode(
            Wire.frame([1, 2, 3], flags: 1), type: "application/grpc", headers: [("grpc-encoding", "snappy")])
        #expect(snappy.value == #"{"messages":[{"compressed":"snappy","value":{"base64":"AQID"}}]}"#)
        #expect(snappy.warnings.count == 1)
        let broken = Self.decode(
            Wire.frame([1, 2, 3], flags: 1), type: "application/grpc", headers: [("grpc-encoding", "gzip")])
        #expect(broken.error?.code == .invalidProtobuf)
    }

    @Test func inTheDefaultChain() throws {
        let decoder = try #require(DecoderRegistry.decoder(named: "protobuf"))
        let entry = ChainEntry(decoder: decoder)
        for type in [
            "application/x-protobuf", "application/protobuf", "application/vnd.google.protobuf",
            "application/x-google-protobuf", "application/grpc", "application/grpc+proto", "application/grpc-web",
            "application/grpc-web+proto",
        ] {
            #expect(entry.accepts(type), "\(type)")
        }
        #expect(!entry.accepts("application/grpc+json"))
        let names = DecoderRegistry.defaultChainNames
        let index = try #require(names.firstIndex(of: "protobuf"))
        #expect(index > names.firstIndex(of: "image")! && index < names.firstIndex(of: "html")!)
    }
}
