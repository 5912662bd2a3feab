import Foundation
import Testing

// Nested in the documents' suite, which is serialized: the hostile suites measure CPU time, so they run one at a
// time, not beside each other (in CI, with the suites in parallel, CBOR's 64 MB took 1.07 s against 0.65 s alone).
extension HostileDocumentTests {
    /// Hostile protobuf and gRPC bodies through the real binary (docs/decoding.md#protobuf), each within 1 s of CPU time
    /// and 256 MB resident (``HostileDocumentTests/runLimited(input:name:arguments:)``), one line, nothing on stderr.
    @Suite("Hostile protobuf")
    struct HostileProtobufTests {
        static func code(of line: [String: Any]) -> String? { (line["error"] as? [String: Any])?["code"] as? String }

        static func varint(_ value: Int) -> [UInt8] {
            var rest = UInt64(value)
            var bytes: [UInt8] = []
            while rest >= 0x80 {
                bytes.append(UInt8(rest & 0x7F) | 0x80)
                rest >>= 7
            }
            return bytes + [UInt8(rest)]
        }

        /// `content` wrapped in `levels` length-delimited fields, each holding the next: every level parses as a message,
        /// so each is guessed down to the depth limit (built from the inside out, in one buffer).
        static func nested(_ content: [UInt8], levels: Int, extra: [UInt8] = []) -> Data {
            var body = content
            for _ in 0..<levels { body = extra + [0x0A] + varint(body.count) + body }
            return Data(body)
        }

        @Test("64 MB of one-byte varint fields")
        func oneByteVarints() throws {
            let body = Data(
                [UInt8](repeating: 0, count: 64_000_000).enumerated().map { $0.offset % 2 == 0 ? 0x08 : 0x01 })
            let line = try HostileDocumentTests.runLimited(
                body, type: "application/x-protobuf", name: "protobuf 64 MB varints")
            #expect(Self.code(of: line) == "limitExceeded", "the value limit")
        }

        @Test("nested length-delimited fields, each a message, 64 MB, to full depth and past it")
        func nestedMessages() throws {
            // The innermost level: 30 MB of small fields (a message). Within the depth limit it is guessed and written
            // field by field, past the value limit; 100 levels deep it is not guessed: 40 MB of base64, within the limit.
            let inner = [UInt8](repeating: 0, count: 30_000_000).enumerated().map {
                $0.offset % 2 == 0 ? UInt8(0x10) : 0x05
            }
            let shallow = try HostileDocumentTests.runLimited(
                Self.nested(inner, levels: 15, extra: [0x08, 0x01]), type: "application/x-protobuf",
                name: "protobuf nested 15")
            #expect(Self.code(of: shallow) == "limitExceeded", "the value limit")
            let deep = try HostileDocumentTests.runLimited(
                Self.nested(inner, levels: 100, extra: [0x08, 0x01]), type: "application/x-protobuf",
                name: "protobuf nested 100")
            #expect(deep["ok"] as? Bool == true)
            // Small enough to be written in full: 200 levels of a 4-byte message, the last 184 not guessed.
            let small = try HostileDocumentTests.runLimited(
                Self.nested([0x08, 0x01], levels: 200), type: "application/x-protobuf",
                name: "protobuf nested 200 small")
            #expect(small["ok"] as? Bool == true)
        }

        @Test("lengths that each claim the rest of the body, broken at the bottom")
        func brokenAtTheBottom() throws {
            // Every level claims the rest; the innermost has a truncated varint, so it is not a message and neither
            // checks as text: bytes, once, at the depth where guessing stops.
            let line = try HostileDocumentTests.runLimited(
                Self.nested([0x08, 0x80] + [UInt8](repeating: 0x41, count: 40_000_000), levels: 40),
                type: "application/x-protobuf", name: "protobuf nested broken")
            #expect(line["ok"] as? Bool == true || Self.code(of: line) == "limitExceeded")
        }

        @Test("64 MB of tiny messages in length-delimited fields")
        func manySmallMessages() throws {
            let body = Data((0..<16_000_000).flatMap { _ in [UInt8(0x0A), 0x02, 0x08, 0x01] })
            let line = try HostileDocumentTests.runLimited(
                body, type: "application/x-protobuf", name: "protobuf 16M small")
            #expect(Self.code(of: line) == "limitExceeded")
        }

        @Test("groups nested a million deep")
        func deepGroups() throws {
            let body = Data(repeating: 0x0B, count: 1_000_000) + Data(repeating: 0x0C, count: 1_000_000)
            let line = try HostileDocumentTests.runLimited(
                body, type: "application/x-protobuf", name: "protobuf groups 1M")
            #expect(Self.code(of: line) == "limitExceeded")
        }

        @Test("gRPC: a frame length claiming 4 GB, a length field claiming 4 GB, 13 million empty frames")
        func grpcFrames() throws {
            let claim = Data([0, 0xFF, 0xFF, 0xFF, 0xFF]) + Data(repeating: 0x08, count: 60_000_000)
            let line = try HostileDocumentTests.runLimited(claim, type: "application/grpc", name: "grpc 4 GB frame")
            #expect(Self.code(of: line) == "invalidProtobuf")
            let field = Data([0x0A] + Self.varint(0xFFFF_FFFF)) + Data(repeating: 0x41, count: 60_000_000)
            let fieldLine = try HostileDocumentTests.runLimited(
                field, type: "application/x-protobuf", name: "protobuf 4 GB length")
            #expect(Self.code(of: fieldLine) == "invalidProtobuf")
            let frames = Data(repeating: 0, count: 13_000_000 * 5)
            let framesLine = try HostileDocumentTests.runLimited(
                frames, type: "application/grpc", name: "grpc 13M frames")
            #expect(Self.code(of: framesLine) == "limitExceeded")
        }
    }
}
