import Foundation
import Testing

// Nested in the documents' suite, which is serialized: the hostile suites measure CPU time, so they run one at a
// time, not beside each other (in CI, with the suites in parallel, CBOR's 64 MB took 1.07 s against 0.65 s alone).
extension HostileDocumentTests {
    /// Records far over `--max-body-bytes` through a pipe (docs/reliability.md#limits): each still gets its metadata line
    /// (status, contentType, bodyBytes, digest, length, the sniffed type) with `limitExceeded`, within the hostile budget
    /// of ``HostileDocumentTests`` (1 s of CPU time, 256 MB resident, measured by GNU time on the child, generator
    /// included): the body streams through the digest, it is never held.
    @Suite("Hostile records over the body limit")
    struct HostileOverLimitTests {
        /// The body of the big record: `[` and zeros (sniffed as JSON), 300 MB.
        static let bodyBytes = 300_000_000
        static let httpHead =
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(bodyBytes)\r\n\r\n"
        static let smallBlock = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{}"
        static let small =
            "WARC/1.1\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:x:2>\r\nWARC-Date: 2024-01-01T00:00:00Z\r\n"
            + "WARC-Target-URI: http://example.com/small\r\nContent-Type: application/http; msgtype=response\r\n"
            + "Content-Length: \(smallBlock.utf8.count)\r\n\r\n\(smallBlock)\r\n\r\n"

        /// A shell command that writes the body: `[` then zeros.
        static let bodyCommand = "printf '['; head -c \(bodyBytes - 1) /dev/zero"

        /// The body's SHA-1 in hex (as `sha1sum` computes it; the digest parser reads hex).
        static func bodySHA1() throws -> String {
            let run = try EndToEndTests.run(["-c", "{ \(bodyCommand); } | sha1sum"], executable: "/bin/sh")
            let hex = String(decoding: run.stdout.prefix(40), as: UTF8.self)
            try #require(run.status == 0 && hex.count == 40, "sha1sum: \(run.stderr)")
            return hex
        }

        /// A shell command that writes a WARC: the big record (with `digest`), then a small one.
        static func warcCommand(digest: String) -> String {
            let head =
                "WARC/1.1\\r\\nWARC-Type: response\\r\\nWARC-Record-ID: <urn:x:1>\\r\\nWARC-Date: 2024-01-01T00:00:00Z\\r\\n"
                + "WARC-Target-URI: http://example.com/big\\r\\nContent-Type: application/http; msgtype=response\\r\\n"
                + "WARC-Payload-Digest: \(digest)\\r\\n"
                + "Content-Length: \(httpHead.utf8.count + bodyBytes)\\r\\n\\r\\n"
            let http = httpHead.replacingOccurrences(of: "\r\n", with: "\\r\\n")
            let next = small.replacingOccurrences(of: "\r\n", with: "\\r\\n")
            return "{ printf '\(head)\(http)'; \(bodyCommand); printf '\\r\\n\\r\\n\(next)'; }"
        }

        /// Runs `generator | respdecode --jobs 2 --max-body-bytes 1MiB ARGUMENTS -` under the hostile budget, the
        /// generator and respdecode measured together by GNU time; returns the lines.
        static func runPipe(_ generator: String, name: String, arguments: [String] = []) throws -> [[String: Any]] {
            let usage = FileManager.default.temporaryDirectory.appendingPathComponent(
                "respdecode-overlimit-\(UUID().uuidString).time")
            defer { try? FileManager.default.removeItem(at: usage) }
            let guardSpace = HostileDocumentTests.sanitized ? "" : "ulimit -v 786432 && "
            let result = try EndToEndTests.run(
                [
                    "-f", "%U %S %e %M", "-o", usage.path, "/bin/sh", "-c",
                    guardSpace + generator + " | exec \"$0\" \"$@\"", EndToEndTests.binary.path, "--jobs", "2",
                    "--max-body-bytes", "1MiB",
                ] + arguments + ["-"],
                executable: "/usr/bin/time")
            try HostileDocumentTests.checkBudget(result, usage: usage, name: name)
            return try result.stdout.split(separator: UInt8(ascii: "\n")).map {
                try #require(try JSONSerialization.jsonObject(with: Data($0)) as? [String: Any])
            }
        }

        static func expectBigLine(_ line: [String: Any]?, digest: String, name: String) {
            let error = line?["error"] as? [String: Any]
            #expect(error?["code"] as? String == "limitExceeded", "\(name): \(String(describing: line))")
            #expect((error?["message"] as? String)?.hasSuffix("the body not decoded") == true, "\(name)")
            #expect(line?["status"] as? Int == 200 && line?["contentType"] as? String == "application/json", "\(name)")
            #expect(line?["bodyBytes"] as? Int == bodyBytes, "\(name)")
            #expect(line?["digest"] as? String == digest, "\(name)")
            #expect(line?["url"] as? String == "http://example.com/big" && line?["warcType"] as? String == "response")
            #expect(line?["warcRecordId"] as? String == "<urn:x:1>" && line?["length"] != nil, "\(name)")
            #expect(
                line?["warnings"] as? [String] == [
                    "the body was not decoded; its first bytes look like application/json (sniffed)"
                ], "\(name)")
        }

        @Test("a 300 MB WARC record through a pipe, digest ok and mismatch")
        func plainWARC() throws {
            let sha1 = try Self.bodySHA1()
            for (digest, expected) in [("sha1:" + sha1, "ok"), ("sha1:" + String(sha1.reversed()), "mismatch")] {
                let name = "300 MB WARC record, digest \(expected)"
                let lines = try Self.runPipe(Self.warcCommand(digest: digest), name: name)
                #expect(lines.count == 2, "\(name)")
                Self.expectBigLine(lines.first, digest: expected, name: name)
                // The small record after it starts where the failure's extent (the bytes it skipped, separator
                // included: docs/output.md#record-extents) ends.
                #expect(lines.last?["ok"] as? Bool == true)
                #expect(lines.last?["offset"] as? Int == lines.first?["length"] as? Int)
            }
        }

        @Test("a 300 MB record in a .warc.gz member through a pipe")
        func gzipWARC() throws {
            let sha1 = try Self.bodySHA1()
            let file = FileManager.default.temporaryDirectory.appendingPathComponent(
                "respdecode-overlimit-\(UUID().uuidString).warc.gz")
            defer { try? FileManager.default.removeItem(at: file) }
            // One member for the big record (gzip -1 of 300 MB: about 1.3 MB), one for the small one.
            let smallEscaped = Self.small.replacingOccurrences(of: "\r\n", with: "\\r\\n")
            let big = Self.warcCommand(digest: "sha1:" + sha1).replacingOccurrences(
                of: "printf '\\r\\n\\r\\n\(smallEscaped)'", with: "printf '\\r\\n\\r\\n'")
            let made = try EndToEndTests.run(
                ["-c", "{ \(big) | gzip -1; printf '\(smallEscaped)' | gzip; } > '\(file.path)'"], executable: "/bin/sh"
            )
            try #require(made.status == 0, "\(made.stderr)")
            let lines = try Self.runPipe("cat '\(file.path)'", name: "300 MB .warc.gz record")
            #expect(lines.count == 2)
            Self.expectBigLine(lines.first, digest: "ok", name: "300 MB .warc.gz record")
            #expect(
                lines.last?["ok"] as? Bool == true && lines.last?["offset"] as? Int == lines.first?["length"] as? Int)
        }

        @Test("a 300 MB raw HTTP body through a pipe")
        func rawHTTP() throws {
            let next = "HTTP/1.1 200 OK\\r\\nContent-Type: application/json\\r\\nContent-Length: 2\\r\\n\\r\\n{}"
            let head = Self.httpHead.replacingOccurrences(of: "\r\n", with: "\\r\\n")
            let lines = try Self.runPipe(
                "{ printf '\(head)'; \(Self.bodyCommand); printf '\(next)'; }", name: "300 MB HTTP body")
            #expect(lines.count == 2)
            let first = lines.first
            #expect((first?["error"] as? [String: Any])?["code"] as? String == "limitExceeded")
            #expect(first?["status"] as? Int == 200 && first?["bodyBytes"] as? Int == Self.bodyBytes)
            #expect(first?["contentType"] as? String == "application/json" && first?["digest"] == nil)
            #expect(
                first?["warnings"] as? [String] == [
                    "the body was not decoded; its first bytes look like application/json (sniffed)"
                ])
            #expect(lines.last?["ok"] as? Bool == true)
        }
    }
}
