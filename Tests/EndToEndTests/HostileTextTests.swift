import Foundation
import RespDecodeTestSupport
import Testing

// Nested in the documents' suite, which is serialized: the hostile suites measure CPU time, so they run one at a
// time, not beside each other (in CI, with the suites in parallel, CBOR's 64 MB took 1.07 s against 0.65 s alone).
extension HostileDocumentTests {
    /// The text decoder through the real binary: the issue's example, and hostile text bodies, each within 1 s of CPU time
    /// and 256 MB resident (``HostileDocumentTests/runLimited(input:name:arguments:)``), one line, nothing on stderr.
    @Suite("Hostile text")
    struct HostileTextTests {
        static func response(_ body: Data, type: String) -> Data {
            Data("HTTP/1.1 200 OK\r\nContent-Type: \(type)\r\nContent-Length: \(body.count)\r\n\r\n".utf8) + body
        }

        static func run(_ body: Data, type: String, name: String) throws -> [String: Any] {
            try HostileDocumentTests.runLimited(body, type: type, name: name, arguments: ["--chain", "text"])
        }

        @Test("the issue's example: windows-1252 from the Content-Type")
        func issueExample() throws {
            let input =
                Data(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=windows-1252\r\nContent-Length: 12\r\n\r\n<p>caf"
                        .utf8)
                + Data([0xE9]) + Data("</p>\n".utf8)
            let result = try EndToEndTests.run(["--chain", "text"], stdin: input)
            #expect(result.status == 0 && result.stderr.isEmpty, "\(result.stderr)")
            let line = try #require(try JSONSerialization.jsonObject(with: result.stdout) as? [String: Any])
            let value = try #require(line["value"] as? [String: Any])
            #expect(value["text"] as? String == "<p>café</p>\n")
            #expect(value["charset"] as? String == "windows-1252")
            #expect(value["charsetSource"] as? String == "header")
            #expect(line["decoder"] as? String == "text")
            #expect(
                String(decoding: result.stdout, as: UTF8.self).contains(#""value":{"text":"<p>café</p>\n","charset""#))
        }

        /// A `<meta>` that lies is obeyed (the spec says so) and must not crash: readability's `qq` page declares gb2312
        /// and is UTF-8.
        @Test(
            "a lying <meta charset>: gb2312 on UTF-8 bytes",
            .enabled(if: Corpora.available, Comment(rawValue: Corpora.skipMessage)))
        func lyingMeta() throws {
            let page = try Data(contentsOf: Corpora.url("html/readability/test-pages/qq/source.html"))
            let line = try Self.run(page, type: "text/html", name: "lying meta (qq)")
            let value = try #require(line["value"] as? [String: Any])
            #expect(value["charset"] as? String == "GBK")
            #expect(value["charsetSource"] as? String == "meta")
            #expect(line["ok"] as? Bool == true)
        }

        @Test("generated hostile text bodies")
        func generated() throws {
            let megabyte = 1 << 20
            // Invalid in every encoding tried: lone continuation bytes and lead bytes without trail bytes.
            let invalid = Data((0..<(60 * megabyte)).map { UInt8(truncatingIfNeeded: 0x80 | ($0 * 7919 % 0x7F)) })
            let cases: [(name: String, body: Data, type: String, charset: String?)] = [
                (
                    "gb2312 meta on UTF-8",
                    Data(("<meta charset=gb2312>" + String(repeating: "中文 ", count: 200_000)).utf8),
                    "text/html", "GBK"
                ),
                (
                    "UTF-16 declared on ASCII", Data(String(repeating: "plain ascii ", count: 1_000_000).utf8),
                    "text/plain; charset=utf-16", "UTF-16LE"
                ),
                ("60 MB of invalid UTF-8", invalid, "text/plain; charset=utf-8", "UTF-8"),
                ("60 MB of invalid Shift_JIS", invalid, "text/plain; charset=shift_jis", "Shift_JIS"),
                ("60 MB of invalid UTF-16", invalid, "text/plain; charset=utf-16be", "UTF-16BE"),
                (
                    "60 MB undefined in windows-1253", Data(repeating: 0xAA, count: 60 * megabyte),
                    "text/plain; charset=windows-1253", "windows-1253"
                ),
                ("60 MB undeclared, not UTF-8", invalid, "text/plain", nil),
                ("only a BOM", Data([0xEF, 0xBB, 0xBF]), "text/plain", "UTF-8"),
                ("only a UTF-16 BOM", Data([0xFF, 0xFE]), "text/plain; charset=koi8-r", "UTF-16LE"),
                ("odd-length UTF-16", Data([0xFE, 0xFF, 0x00, 0x41, 0x00]), "text/plain", "UTF-16BE"),
                (
                    "a 60 MB meta prescan bait", Data(String(repeating: "<meta a=b ", count: 6_000_000).utf8),
                    "text/html", "windows-1252"
                ),
                // 64 KiB of distinct attributes on one <meta> (the prescan keeps their names in a set), past the window.
                (
                    "a <meta> with 12,000 attributes",
                    Data(("<meta " + (0..<12_000).map { "a\($0)" }.joined(separator: " ") + " charset=koi8-r>").utf8),
                    "text/html", "windows-1252"
                ),
                (
                    "unterminated comment", Data(("<!--" + String(repeating: "-", count: 60 * megabyte)).utf8),
                    "text/html", "windows-1252"
                ),
                (
                    "replacement", Data(repeating: 0x41, count: 60 * megabyte), "text/plain; charset=iso-2022-kr",
                    "replacement"
                ),
            ]
            for test in cases {
                let line = try Self.run(test.body, type: test.type, name: test.name)
                let value = try #require(line["value"] as? [String: Any], "\(test.name): \(line)")
                if let charset = test.charset { #expect(value["charset"] as? String == charset, "\(test.name)") }
                let text = try #require(value["text"] as? String, "\(test.name)")
                // The default --max-text-bytes (8 MiB) holds the text.
                #expect(text.utf8.count <= 8 * megabyte, "\(test.name)")
            }
        }
    }
}
