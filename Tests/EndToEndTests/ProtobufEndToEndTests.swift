import Foundation
import Testing

/// The protobuf decoder through the binary: the record's headers and HTTP trailers reach it (DecodingContext's
/// `headers` and `trailers`, set by the compound decoder), so `grpc-status` is read from a chunked response's trailer
/// section and `grpc-encoding` from its headers (docs/decoding.md#protobuf).
@Suite("Protobuf end to end")
struct ProtobufEndToEndTests {
    @Test func grpcStatusFromChunkedTrailers() throws {
        // One gRPC frame holding field 1 = 150.
        let frame: [UInt8] = [0, 0, 0, 0, 3, 0x08, 0x96, 0x01]
        var input = Data(
            "HTTP/1.1 200 OK\r\nContent-Type: application/grpc\r\nTransfer-Encoding: chunked\r\nTrailer: grpc-status\r\n\r\n"
                .utf8)
        input += Data("8\r\n".utf8) + Data(frame) + Data("\r\n0\r\ngrpc-status: 7\r\ngrpc-message: denied\r\n\r\n".utf8)
        let result = try EndToEndTests.run(["--input", "http"], stdin: input)
        #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
        let line = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
        #expect(line["decoder"] as? String == "protobuf")
        let value = try #require(line["value"] as? [String: Any])
        #expect(value["grpcStatus"] as? Int == 7)
        #expect(value["grpcMessage"] as? String == "denied")
        let messages = try #require(value["messages"] as? [[String: Any]])
        let fields = try #require(messages.first?["fields"] as? [[String: Any]])
        #expect(fields.first?["value"] as? Int == 150)
    }
}
