import Testing

@testable import RespDecode

@Suite("Input detection (docs/framings.md#detection)")
struct InputDetectionTests {
    static func detect(_ bytes: [UInt8]) -> InputFormat? {
        bytes.withUnsafeBufferPointer(InputDetection.detect)
    }

    static func detect(_ text: String) -> InputFormat? { detect(Array(text.utf8)) }

    @Test(arguments: [
        ("HTTP/1.1 200 OK\r\n", InputFormat.http),
        ("\r\n\r\nHTTP/1.0 404 Not Found\n", .http),
        ("WARC/1.1\r\nWARC-Type: warcinfo\r\n", .warc),
        ("WARC/1.0\r\n", .warc),
        // An ARC file's first record: the archive framing, never raw HTTP.
        ("filedesc://x.arc 0.0.0.0 20080430204825 text/plain 76\n", .warc),
        ("{\"log\":{\"version\":\"1.2\"", .har),
        ("{\n  \"log\": {\n    \"version\": \"1.2\",", .har),
        ("\u{FEFF}{\r\n\t\"log\": {", .har),
        ("{\"status\":200,\"headers\":[],\"body\":\"\"}\n", .ndjson),
        ("{\"id\":\"log\",\"status\":200}", .ndjson),
        ("  {\"logs\":1}", .ndjson),
    ])
    func text(_ prefix: String, _ format: InputFormat) {
        #expect(Self.detect(prefix) == format, "\(prefix.debugDescription)")
    }

    @Test func gzipIsWARC() {
        #expect(Self.detect([0x1F, 0x8B, 0x08, 0x00]) == .warc)
        #expect(Self.detect([0x1F, 0x8B]) == .warc)
        #expect(Self.detect([0x1F]) == nil)
    }

    /// `.warc.zst` (a zstd frame, or the skippable frame of its dictionary) and `.warc.lz4`, by their magic numbers.
    @Test func zstdAndLZ4AreWARC() {
        #expect(Self.detect([0x28, 0xB5, 0x2F, 0xFD, 0x04]) == .warc)
        #expect(Self.detect([0x5D, 0x2A, 0x4D, 0x18]) == .warc)
        #expect(Self.detect([0x50, 0x2A, 0x4D, 0x18]) == .warc)
        #expect(Self.detect([0x04, 0x22, 0x4D, 0x18, 0x64]) == .warc)
        for prefix: [UInt8] in [[0x28], [0x28, 0xB5, 0x2F], [0x5D, 0x2A], [0x04, 0x22, 0x4D]] {
            #expect(prefix.withUnsafeBufferPointer(InputDetection.decide) == .undecided, "\(prefix)")
        }
        #expect(Self.detect([0x28, 0xB5, 0x2F, 0xFE]) == nil)
        #expect(Self.detect([0x04, 0x22, 0x4D, 0x19]) == nil)
    }

    @Test(arguments: ["", "   ", "<html>", "[1,2]", "GET / HTTP/1.1\r\n", "HTTP", "WARC", "PK\u{3}\u{4}"])
    func unknown(_ prefix: String) {
        #expect(Self.detect(prefix) == nil, "\(prefix.debugDescription)")
    }

    /// The runner decides on at most `prefixLength` bytes: an indented HAR must be recognisable within them.
    @Test func prefixIsLongEnoughForAnIndentedHAR() {
        let har = Array("\u{FEFF}{\n    \"log\": {".utf8)
        #expect(har.count <= InputDetection.prefixLength)
        #expect(Self.detect(har) == .har)
    }

    /// What a slow pipe may have sent so far: too little to decide, so the runner reads on.
    @Test(arguments: [
        "", " \r\n", "H", "HTTP", "W", "WARC", "f", "filedesc:/", "{", "{\n  ", "{\"", "{ \"lo", "\u{FEFF}",
        "\u{FEFF}  WA",
    ])
    func undecided(_ prefix: String) {
        #expect(
            Array(prefix.utf8).withUnsafeBufferPointer(InputDetection.decide) == .undecided,
            "\(prefix.debugDescription)")
    }

    @Test func undecidedBinaryPrefixes() {
        for prefix: [UInt8] in [[0x1F], [0xEF], [0xEF, 0xBB]] {
            #expect(prefix.withUnsafeBufferPointer(InputDetection.decide) == .undecided, "\(prefix)")
        }
        #expect([0x1F, 0x00].withUnsafeBufferPointer(InputDetection.decide) == .unknown)
        #expect(Array("WAX".utf8).withUnsafeBufferPointer(InputDetection.decide) == .unknown)
        #expect(Array("{\"lox\"".utf8).withUnsafeBufferPointer(InputDetection.decide) == .format(.ndjson))
    }

    /// A ZIP local file header is a WACZ, which the runner reads entry by entry: no framing (docs/framings.md#wacz).
    @Test func zipIsAnArchive() {
        #expect(Array("PK\u{3}\u{4}\u{14}\u{0}".utf8).withUnsafeBufferPointer(InputDetection.decide) == .zip)
        for prefix in ["P", "PK", "PK\u{3}"] {
            #expect(
                Array(prefix.utf8).withUnsafeBufferPointer(InputDetection.decide) == .undecided,
                "\(prefix.debugDescription)")
        }
        #expect(Array("PK\u{5}\u{6}".utf8).withUnsafeBufferPointer(InputDetection.decide) == .unknown)
        #expect(Array("PKZIP".utf8).withUnsafeBufferPointer(InputDetection.decide) == .unknown)
    }
}
