import Foundation
import Testing

// Nested in the documents' suite, which is serialized: the hostile suites measure CPU time, so they run one at a
// time, not beside each other (in CI, with the suites in parallel, CBOR's 64 MB took 1.07 s against 0.65 s alone).
extension HostileDocumentTests {
    /// Hostile multipart bodies through the real binary with the default chain, under the budgets of
    /// ``HostileDocumentTests`` (1 s of CPU time, 256 MB resident, one line, nothing on stderr, exit 0);
    /// docs/decoding.md#multipart-limits says what each line holds.
    @Suite("Hostile multipart")
    struct HostileMultipartTests {
        static func run(_ body: Data, type: String, name: String) throws -> [String: Any] {
            let line = try HostileDocumentTests.runLimited(body, type: type, name: name)
            #expect(line["decoder"] as? String == "multipart", "\(name)")
            #expect(line["ok"] as? Bool == true, "\(name): \(line["error"] ?? "")")
            return try #require(line["value"] as? [String: Any], "\(name): no value")
        }

        @Test func nestedThousandDeep() throws {
            var body = Data("leaf".utf8)
            var type = "text/plain"
            for level in 0..<1000 {
                body = Data("--B\(level)\r\nContent-Type: \(type)\r\n\r\n".utf8) + body + Data("\r\n--B\(level)--".utf8)
                type = "multipart/mixed; boundary=B\(level)"
            }
            var value: [String: Any]? = try Self.run(body, type: type, name: "multipart nested 1,000 deep")
            // Four levels are decoded (--max-multipart-depth); the part that holds the fifth has the error.
            for _ in 0..<3 { value = (value?["parts"] as? [[String: Any]])?.first?["value"] as? [String: Any] }
            let deepest = try #require((value?["parts"] as? [[String: Any]])?.first)
            #expect((deepest["error"] as? [String: Any])?["code"] as? String == "limitExceeded")
        }

        @Test func wideNesting() throws {
            // 500 parts of 10,000 parts each (55 MB, 5 million parts): the record's parts, at every depth together,
            // stop at --max-multipart-parts.
            let inner = Data((String(repeating: "--in\r\n\r\nx\r\n", count: 10_000) + "--in--").utf8)
            var body = Data()
            for _ in 0..<500 {
                body +=
                    Data("--out\r\nContent-Type: multipart/mixed; boundary=in\r\n\r\n".utf8) + inner + Data("\r\n".utf8)
            }
            body += Data("--out--".utf8)
            let value = try Self.run(body, type: "multipart/mixed; boundary=out", name: "500 x 10,000 nested parts")
            #expect(value["truncated"] as? [String] == ["parts"])
        }

        @Test func seventyByteBoundaryNearMatches() throws {
            // 60 MB of lines that are the delimiter but for its last byte, or the whole delimiter followed by data.
            let boundary = String(repeating: "b", count: 70)
            let unit = "\r\n--" + boundary.dropLast() + "X" + "\r\n--" + boundary + "X"
            var body = Data("--\(boundary)\r\nContent-Type: application/octet-stream\r\n\r\n".utf8)
            let data = Data(String(repeating: unit, count: 60_000_000 / unit.utf8.count).utf8)
            body += data
            body += Data("\r\n--\(boundary)--".utf8)
            let value = try Self.run(
                body, type: "multipart/mixed; boundary=\(boundary)", name: "70-byte boundary near-matches (60 MB)")
            let parts = try #require(value["parts"] as? [[String: Any]])
            #expect(parts.count == 1)
            #expect(parts.first?["bytes"] as? Int == data.count)
        }

        @Test func millionsOfEmptyParts() throws {
            let body = Data((String(repeating: "--b\r\n\r\n", count: 8_500_000) + "--b--").utf8)
            let value = try Self.run(body, type: "multipart/form-data; boundary=b", name: "8.5 million empty parts")
            #expect((value["parts"] as? [Any])?.count == 10_000)
            #expect(value["truncated"] as? [String] == ["parts"])
        }

        @Test func headerSectionWithoutEnd() throws {
            for (name, section) in [
                ("a 60 MB header line", "X-A: " + String(repeating: "a", count: 60_000_000)),
                ("7.5 million header lines", String(repeating: "X-A: y\r\n", count: 7_500_000)),
            ] {
                let value = try Self.run(
                    Data(("--b\r\n" + section).utf8), type: "multipart/form-data; boundary=b", name: name)
                let part = try #require((value["parts"] as? [[String: Any]])?.first)
                #expect((part["error"] as? [String: Any])?["code"] as? String == "limitExceeded", "\(name)")
                #expect(value["closed"] as? Bool == false)
            }
        }

        @Test func base64PartOfGarbage() throws {
            var generator = SystemRandomNumberGenerator()
            var garbage = [UInt8](repeating: 0, count: 40_000_000)
            for i in stride(from: 0, to: garbage.count, by: 8) {
                withUnsafeBytes(of: generator.next() as UInt64) { random in
                    for j in 0..<min(8, garbage.count - i) { garbage[i + j] = random[j] }
                }
            }
            let body =
                Data("--b\r\nContent-Type: application/json\r\nContent-Transfer-Encoding: base64\r\n\r\n".utf8)
                + Data(garbage) + Data("\r\n--b--".utf8)
            let value = try Self.run(body, type: "multipart/mixed; boundary=b", name: "a 40 MB base64 part of garbage")
            let part = try #require((value["parts"] as? [[String: Any]])?.first)
            #expect((part["error"] as? [String: Any])?["code"] as? String == "invalidMultipart")
        }

        @Test(arguments: ["quoted-printable", "base64"])
        func nestedTransferEncodedParts(encoding: String) throws {
            // Four nested multipart/mixed levels, each one part in `encoding`, the innermost 60 MB of `x` (19 MB in base64,
            // whose four levels make 60 MB): each level's decoded copy would stay alive while the next decodes; past the
            // record's body size the part is refused.
            var body = Data(repeating: UInt8(ascii: "x"), count: encoding == "base64" ? 19_000_000 : 60_000_000)
            var type = "application/octet-stream"
            for level in 0..<4 {
                let encoded = encoding == "base64" ? body.base64EncodedData(options: .lineLength76Characters) : body
                body =
                    Data("--N\(level)\r\nContent-Type: \(type)\r\nContent-Transfer-Encoding: \(encoding)\r\n\r\n".utf8)
                    + encoded + Data("\r\n--N\(level)--\r\n".utf8)
                type = "multipart/mixed; boundary=N\(level)"
            }
            let value = try Self.run(body, type: type, name: "four nested \(encoding) levels (60 MB)")
            let first = try #require((value["parts"] as? [[String: Any]])?.first)
            let inner = try #require(((first["value"] as? [String: Any])?["parts"] as? [[String: Any]])?.first)
            #expect((inner["error"] as? [String: Any])?["code"] as? String == "limitExceeded")
        }
    }
}
