import Foundation
import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// The multipart fixtures of ../shared/corpora/multipart (python-multipart, busboy, Go's mime/multipart, Mozilla's
/// netwerk tests), every case; the deliberate deviations are listed in docs/decoding.md#multipart-deviations and
/// checked here as such.
@Suite("Multipart conformance", .enabled(if: Corpora.available || Corpora.required, "\(Corpora.skipMessage)"))
struct MultipartConformanceTests {
    static func jsonLines(_ path: String) throws -> [[String: Any]] {
        let text = String(decoding: try Corpora.bytes(path), as: UTF8.self)
        return try text.split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
    }

    @Test func pythonMultipart() throws {
        let cases = try Self.jsonLines("multipart/python-multipart/expected.jsonl")
        #expect(cases.count == 30)
        for item in cases {
            let name = try #require(item["name"] as? String)
            let body = try Corpora.bytes(
                "multipart/python-multipart/http/\(try #require(item["body_file"] as? String))")
            // The delimiter lines of single_field_blocks are `--boundary`, its boundary `boundary`, not the YAML's
            // `--boundary` (the body is fed as it is to a parser of boundary `boundary` upstream).
            let type =
                name == "single_field_blocks"
                ? "multipart/form-data; boundary=boundary" : try #require(item["content_type"] as? String)
            let outcome = try decodeMultipart(body, contentType: type)
            if item["outcome"] as? String == "error" {
                #expect(outcome.error?.code == .invalidMultipart, "\(name) must be rejected: \(outcome.parts)")
                continue
            }
            #expect(outcome.error == nil, "\(name): \(String(describing: outcome.error))")
            let expected = try #require(item["parts"] as? [[String: Any]])
            let parts = outcome.parts
            #expect(parts.count == expected.count, "\(name): \(parts.count) parts")
            let bytes = outcome.partBytes
            for (i, (part, want)) in zip(parts, expected).enumerated() {
                #expect(part["name"] as? String == want["name"] as? String, "\(name) part \(i)")
                #expect(part["filename"] as? String == want["file_name"] as? String, "\(name) part \(i)")
                if let type = want["content_type"] as? String {
                    #expect(part["contentType"] as? String == MediaType.mimeType(ofContentType: type), "\(name) \(i)")
                }
                let data = [UInt8](Data(base64Encoded: try #require(want["data_base64"] as? String))!)
                #expect(bytes[i] == data, "\(name) part \(i): \(String(describing: part["value"]))")
            }
        }
    }

    @Test func busboy() throws {
        let cases = try Self.jsonLines("multipart/busboy/cases/cases.jsonl")
        #expect(cases.count == 26)
        for item in cases {
            let file = try #require(item["file"] as? String)
            let body = try Corpora.bytes("multipart/busboy/cases/\(file)")
            let outcome = try decodeMultipart(body, contentType: try #require(item["content_type"] as? String))
            let events = try #require(item["expected"] as? [Any]).compactMap { $0 as? [String: Any] }
            let errors = events.compactMap { $0["error"] as? String }
            let parts = outcome.parts
            switch file {
            case "003.body":
                // An empty body is "no content" (docs/decoding.md#empty-bodies): no value and no error.
                #expect(outcome.value == nil && outcome.error == nil)
                continue
            case "011.body":
                // Stopped mid-header: rejected, as busboy does.
                #expect(outcome.error?.code == .invalidMultipart, "\(file)")
                continue
            case "014.body", "015.body":
                // Stopped mid-file: the part, to the end of the body, with a warning (busboy: the file and an error).
                #expect(outcome.value?["closed"] as? Bool == false, "\(file)")
                #expect(parts.count == 1 && parts.first?["filename"] as? String == "1k_a.dat", "\(file)")
                #expect(outcome.warnings.contains { $0.contains("no closing delimiter") }, "\(file)")
                continue
            case "023.body":
                // A part header of 64 KiB: past --max-header-bytes the part is skipped with limitExceeded and the
                // next one read, as busboy reports "Malformed part header" and reads the next part.
                #expect(parts.count == 2, "\(file)")
                #expect((parts.first?["error"] as? [String: Any])?["code"] as? String == "limitExceeded")
                #expect(parts.last?["filename"] as? String == "notes2.txt")
                continue
            default: break
            }
            #expect(errors.isEmpty && outcome.error == nil, "\(file): \(errors) \(String(describing: outcome.error))")
            // busboy skips parts without a Content-Disposition (018), and with limits reports fewer: every part is
            // listed here; compare those busboy names.
            // busboy's 006 has no file listener: its files are not reported.
            let named = parts.filter { $0["name"] != nil && (file != "006.body" || $0["filename"] == nil) }
            let reported = events.filter { $0["type"] != nil }
            if item["limits"] == nil {
                #expect(named.count == reported.count, "\(file): \(named.count) named parts")
            }
            let bytes = outcome.partBytes
            for want in reported {
                let wantName = want["name"] as? String
                let info = want["info"] as? [String: Any]
                guard let i = parts.firstIndex(where: { $0["name"] as? String == wantName }) else {
                    Issue.record("\(file): no part \(wantName ?? "?")")
                    continue
                }
                let part = parts[i]
                if let filename = info?["filename"] as? String {
                    // Paths are kept as sent (busboy strips them unless preservePath).
                    let sent = try #require(part["filename"] as? String)
                    #expect(sent == filename || sent.hasSuffix("/" + filename) || sent.hasSuffix("\\" + filename))
                }
                if let type = info?["mimeType"] as? String,
                    part["filename"] == nil
                        || (part["headers"] as? [String: String])?.keys.contains(where: {
                            $0.lowercased() == "content-type"
                        }) == true
                {
                    #expect(part["contentType"] as? String == type, "\(file) \(wantName ?? "")")
                }
                guard item["limits"] == nil else { continue }
                if let value = want["val"] as? String {
                    #expect(bytes[i] == Array(value.utf8), "\(file) \(wantName ?? "")")
                } else if let data = want["data"] as? [String: Any] {
                    let expected =
                        (data["utf8"] as? String).map { Array($0.utf8) }
                        ?? (data["base64"] as? String).flatMap { Data(base64Encoded: $0).map { [UInt8]($0) } }
                    #expect(bytes[i] == expected, "\(file) \(wantName ?? "")")
                }
            }
        }
    }

    @Test func goMimeMultipart() throws {
        let cases = try Self.jsonLines("multipart/go-mime-multipart/cases/cases.jsonl")
        var checked = 0
        for item in cases {
            guard let file = item["file"] as? String, let type = item["content_type"] as? String else { continue }
            let path =
                file.hasPrefix("../")
                ? "multipart/go-mime-multipart/\(file.dropFirst(3))"
                : "multipart/go-mime-multipart/cases/\(file)"
            let outcome = try decodeMultipart(try Corpora.bytes(path), contentType: type)
            #expect(outcome.error == nil, "\(file): \(String(describing: outcome.error))")
            let expected = try #require(item["parts"] as? [[String: Any]], "\(file)")
            #expect(outcome.parts.count == expected.count, "\(file): \(outcome.parts.count) parts")
            let bytes = outcome.partBytes
            for (i, (part, want)) in zip(outcome.parts, expected).enumerated() {
                let headers = part["headers"] as? [String: String] ?? [:]
                for pair in want["headers"] as? [[String]] ?? [] {
                    let value = headers.first { $0.key.lowercased() == pair[0].lowercased() }?.value
                    #expect(value == pair[1], "\(file) part \(i) \(pair[0])")
                }
                if let wantBody = want["body"] as? String { #expect(bytes[i] == Array(wantBody.utf8), "\(file) \(i)") }
            }
            checked += 1
        }
        #expect(checked >= 12)
    }

    @Test func goNestedMimeDecodesBothLevels() throws {
        let body = try Corpora.bytes("multipart/go-mime-multipart/nested-mime")
        let outcome = try decodeMultipart(
            body, contentType: "multipart/mixed; boundary=e89a8ff1c1e83553e304be640612", chain: ["multipart", "text"])
        let parts = outcome.parts
        #expect(parts.count == 2)
        #expect(parts.first?["decoder"] as? String == "multipart")
        let inner = (parts.first?["value"] as? [String: Any])?["parts"] as? [[String: Any]] ?? []
        #expect(inner.map { $0["contentType"] as? String } == ["text/plain", "text/html"])
        #expect((inner.first?["value"] as? [String: Any])?["text"] as? String == "*body*\r\n")
        #expect(parts.last?["filename"] as? String == "x.png")
        #expect(parts.last?["transferEncoding"] as? String == "base64")
        #expect(parts.last?["decoder"] as? String == "raw")
    }

    @Test func mozillaNetwerk() throws {
        let cases = try Self.jsonLines("multipart/mozilla-netwerk/cases/cases.jsonl")
        #expect(cases.count == 3)
        for item in cases {
            let file = try #require(item["file"] as? String)
            let outcome = try decodeMultipart(
                try Corpora.bytes("multipart/mozilla-netwerk/cases/\(file)"),
                contentType: try #require(item["content_type"] as? String))
            var expected = try #require(item["parts"] as? [[String: Any]])
            if file.hasPrefix("02-") {
                // Text before the first delimiter is the preamble (RFC 2046), not a first part as in Firefox.
                expected.removeFirst()
                #expect((outcome.value?["preambleBytes"] as? Int ?? 0) > 0)
            }
            #expect(outcome.parts.count == expected.count, "\(file)")
            let bytes = outcome.partBytes
            for (i, (part, want)) in zip(outcome.parts, expected).enumerated() {
                #expect(bytes[i] == Array((want["body"] as? String ?? "").utf8), "\(file) part \(i)")
                // Header-less parts of multipart/mixed are text/plain (RFC 2046 §5.1.3).
                if (want["headers"] as? [Any])?.isEmpty == true {
                    #expect(part["contentType"] as? String == "text/plain")
                }
                if let range = want["range"] as? [String: Int] {
                    let got = part["range"] as? [String: Int]
                    #expect(
                        got == ["start": range["first"]!, "end": range["last"]!, "length": range["complete_length"]!])
                }
            }
        }
    }
}
