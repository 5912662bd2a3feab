import Foundation
import Testing

// Nested in the documents' suite, which is serialized: the hostile suites measure CPU time, so they run one at a
// time, not beside each other (in CI, with the suites in parallel, CBOR's 64 MB took 1.07 s against 0.65 s alone).
extension HostileDocumentTests {
    /// Hostile form bodies through the real binary, each within 1 s of CPU time and 256 MB resident
    /// (``HostileDocumentTests/runLimited(input:name:arguments:)``), one line, nothing on stderr (docs/decoding.md#form).
    @Suite("Hostile forms")
    struct HostileFormTests {
        static let type = "application/x-www-form-urlencoded"
        static let megabyte = 1 << 20

        static func run(_ body: Data, name: String) throws -> [String: Any] {
            try HostileDocumentTests.runLimited(body, type: type, name: name, arguments: ["--chain", "form"])
        }

        static func repeated(_ piece: String, toBytes size: Int) -> Data {
            let unit = Data(piece.utf8)
            var data = Data(capacity: size)
            while data.count + unit.count <= size { data.append(unit) }
            return data
        }

        @Test("64 MiB of '&': no pairs")
        func ampersands() throws {
            let line = try Self.run(Data(repeating: UInt8(ascii: "&"), count: 64 * Self.megabyte), name: "64 MiB of &")
            #expect(line["ok"] as? Bool == true)
            #expect((line["value"] as? [String: Any])?.isEmpty == true)
        }

        @Test("60 MB of one-byte pairs: past maxFormFields")
        func manyPairs() throws {
            let line = try Self.run(Self.repeated("a&", toBytes: 60 * Self.megabyte), name: "60 MB of a&")
            #expect((line["error"] as? [String: Any])?["code"] as? String == "limitExceeded")
        }

        @Test("100,000 distinct names, the most maxFormFields allows")
        func distinctNames() throws {
            let body = Data((0..<100_000).map { "name\($0)=\($0)" }.joined(separator: "&").utf8)
            let line = try Self.run(body, name: "100,000 distinct names")
            #expect((line["value"] as? [String: Any])?.count == 100_000)
        }

        @Test("100,000 values of one name")
        func oneName() throws {
            let line = try Self.run(Self.repeated("n=vv&", toBytes: 500_000), name: "100,000 values of one name")
            #expect(((line["value"] as? [String: Any])?["n"] as? [Any])?.count == 100_000)
        }

        @Test("60 MB of one value")
        func oneValue() throws {
            let body = Data("a=".utf8) + Data(repeating: UInt8(ascii: "x"), count: 60 * Self.megabyte)
            let line = try Self.run(body, name: "60 MB value")
            #expect(((line["value"] as? [String: Any])?["a"] as? [String])?.first?.utf8.count == 60 * Self.megabyte)
        }

        @Test("60 MB of %01: escapes past maxValueBytes")
        func escapes() throws {
            let line = try Self.run(Self.repeated("%01", toBytes: 60 * Self.megabyte), name: "60 MB of %01")
            #expect((line["error"] as? [String: Any])?["code"] as? String == "limitExceeded")
        }

        @Test("60 MB of invalid UTF-8: U+FFFD, one warning")
        func invalidUTF8() throws {
            let line = try Self.run(Self.repeated("%FF", toBytes: 60 * Self.megabyte), name: "60 MB of %FF")
            #expect(line["ok"] as? Bool == true)
            #expect((line["warnings"] as? [String])?.count == 1)
        }
    }
}
