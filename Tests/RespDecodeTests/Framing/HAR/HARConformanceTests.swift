import Foundation
import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// The HAR framer against real exports: mitmproxy's fixtures (Chrome, Firefox, Charles, Insomnia and its own
/// `savehar`) and node-har-validator's. Entries are counted and read with JSONSerialization as the reference.
@Suite("HAR conformance", .enabled(if: Corpora.available, Corpora.skipComment))
struct HARConformanceTests {
    private static let mitmproxy = "har/mitmproxy"

    /// The items of a file, checked to be the same whole and in a few random splits.
    private static func frame(_ bytes: [UInt8]) -> [FramedItem] {
        framedInEverySplit(bytes, byteByByte: false, randomSplits: 3, maxPiece: 4096) { HARFramer() }
    }

    /// The file's entries, as JSONSerialization reads them (after the BOM, which it does not take).
    private static func entries(_ bytes: [UInt8]) throws -> [[String: Any]] {
        let text = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(bytes.dropFirst(3)) : bytes
        let document = try JSONSerialization.jsonObject(with: Data(text)) as? [String: Any]
        let log = document?["log"] as? [String: Any]
        return try #require(log?["entries"] as? [[String: Any]])
    }

    private static func harFiles() throws -> [URL] {
        try Corpora.files(in: "\(mitmproxy)/har_files", suffix: ".har")
            + Corpora.files(in: "\(mitmproxy)/flows", suffix: ".har")
    }

    /// One item per entry, in order: a record with the entry's status, url and method, or for status 0 (nothing
    /// recorded) a failure with the url and method.
    @Test func everyExportGivesOneItemPerEntry() throws {
        let files = try Self.harFiles()
        #expect(files.count == 13)
        for file in files {
            let name = file.lastPathComponent
            let bytes = try Corpora.bytes(file)
            let entries = try Self.entries(bytes)
            let items = Self.frame(bytes)
            #expect(items.count == entries.count, "\(name): \(items.count) items for \(entries.count) entries")
            for (index, (item, entry)) in zip(items, entries).enumerated() {
                let request = entry["request"] as? [String: Any]
                let response = entry["response"] as? [String: Any]
                let status = (response?["status"] as? NSNumber)?.intValue
                let url = request?["url"] as? String
                let method = request?["method"] as? String
                switch item {
                case .record(let record):
                    #expect(record.status == status, "\(name) entry \(index)")
                    #expect(record.url == url && record.method == method, "\(name) entry \(index)")
                    #expect(record.contentDecoded, "\(name) entry \(index)")
                case .failure(let failure):
                    #expect(status == 0, "\(name) entry \(index): \(jsonFramedSummary(item))")
                    #expect(failure.error.code == .malformedRecord, "\(name) entry \(index)")
                    #expect(failure.url == url && failure.method == method, "\(name) entry \(index)")
                }
            }
        }
    }

    /// Offsets are where each entry's `{` is in the file (the BOM counts), and increase.
    @Test func offsetsPointAtTheEntries() throws {
        for file in try Self.harFiles() {
            let bytes = try Corpora.bytes(file)
            let offsets = Self.frame(bytes).map(\.offset)
            #expect(offsets == offsets.sorted(), "\(file.lastPathComponent)")
            for offset in offsets {
                #expect(bytes[Int(offset)] == UInt8(ascii: "{"), "\(file.lastPathComponent) @\(offset)")
            }
        }
        let withBOM = try Corpora.bytes("\(Self.mitmproxy)/har_files/with-bom.har")
        #expect(withBOM.starts(with: [0xEF, 0xBB, 0xBF]))
        #expect(Self.frame(withBOM).count == 1)
    }

    /// mitmproxy's expected flows (`<name>.json` beside `<name>.har`): the same statuses, URLs, methods, body
    /// lengths, and header fields — except Content-Length and Content-Encoding, which mitmproxy rewrites to match
    /// the body it re-encodes, and the Content-Type this framer adds from `mimeType` when the headers have none.
    @Test func mitmproxysExpectedFlows() throws {
        let expectations = try Corpora.files(in: "\(Self.mitmproxy)/har_files", suffix: ".json")
        #expect(expectations.count == 7)
        for expectation in expectations {
            let name = expectation.lastPathComponent
            let har = expectation.deletingPathExtension().appendingPathExtension("har")
            let flows = try #require(
                try JSONSerialization.jsonObject(with: Data(contentsOf: expectation)) as? [[String: Any]])
            let items = Self.frame(try Corpora.bytes(har))
            #expect(items.count == flows.count, "\(name)")
            for (index, (item, flow)) in zip(items, flows).enumerated() {
                let request = try #require(flow["request"] as? [String: Any])
                let response = flow["response"] as? [String: Any]
                let url = Self.url(request)
                let method = request["method"] as? String
                switch item {
                case .record(let record):
                    #expect(record.status == (response?["status_code"] as? NSNumber)?.intValue, "\(name) flow \(index)")
                    #expect(record.url == url, "\(name) flow \(index): \(record.url ?? "-") vs \(url)")
                    #expect(record.method == method, "\(name) flow \(index)")
                    #expect(
                        record.body.count == (response?["contentLength"] as? NSNumber)?.intValue,
                        "\(name) flow \(index)")
                    let expected = ((response?["headers"] as? [[String]]) ?? []).filter { !Self.rewritten($0[0]) }
                    var ours = record.headers.fields.map { [$0.name, $0.value] }.filter { !Self.rewritten($0[0]) }
                    if let last = ours.last, last[0] == "Content-Type",
                        !expected.contains(where: { $0[0].lowercased() == "content-type" })
                    {
                        ours.removeLast()
                    }
                    #expect(ours == expected, "\(name) flow \(index)")
                case .failure(let failure):
                    #expect((response?["status_code"] as? NSNumber)?.intValue == 0, "\(name) flow \(index)")
                    #expect(failure.url == url && failure.method == method, "\(name) flow \(index)")
                }
            }
        }
    }

    private static func rewritten(_ name: String) -> Bool {
        ["content-length", "content-encoding"].contains(name.lowercased())
    }

    /// mitmproxy's request as a URL: scheme://host[:port]path, the port left out when it is the scheme's default.
    private static func url(_ request: [String: Any]) -> String {
        let scheme = request["scheme"] as? String ?? ""
        let host = request["host"] as? String ?? ""
        let port = (request["port"] as? NSNumber)?.intValue ?? 0
        let path = request["path"] as? String ?? ""
        let defaultPort = (scheme == "https" && port == 443) || (scheme == "http" && port == 80)
        return "\(scheme)://\(host)\(defaultPort ? "" : ":\(port)")\(path)"
    }

    @Test func statusZeroCarriesTheExportersError() throws {
        let chrome = Self.frame(try Corpora.bytes("\(Self.mitmproxy)/har_files/chrome.har"))
        guard case .failure(let failure) = chrome[1] else {
            Issue.record("chrome.har entry 1 should be a failure")
            return
        }
        #expect(failure.error.message == "entry 1: no response recorded (status 0): net::ERR_INTERNET_DISCONNECTED")
        #expect(failure.url == "https://www.google.com/" && failure.method == "GET")
        let incomplete = Self.frame(try Corpora.bytes("\(Self.mitmproxy)/flows/incomplete_log.har"))
        #expect(incomplete.count == 4)
        #expect(
            incomplete.allSatisfy { if case .failure(let f) = $0 { f.error.code == .malformedRecord } else { false } })
        let errorLog = Self.frame(try Corpora.bytes("\(Self.mitmproxy)/flows/error_log.har"))
        #expect(errorLog.map { if case .record(let r) = $0 { r.status } else { 0 } } == [0, 405])
    }

    @Test func brokenfileIsOneFailureAndNoRecords() throws {
        let bytes = try Corpora.bytes("\(Self.mitmproxy)/corrupted_har/brokenfile.har")
        let items = Self.frame(bytes)
        #expect(items.count == 1)
        guard case .failure(let failure) = items.first else {
            Issue.record("expected a failure: \(items.map(jsonFramedSummary))")
            return
        }
        #expect(failure.error.code == .malformedRecord)
        #expect(failure.error.message == "'log' is an array, expected an object")
        #expect(failure.offset + failure.bytes == Int64(bytes.count), "the failure covers the rest of the input")
    }

    /// broken_headers.json is not a HAR document but the `headers` of one response (`[["Content-Type"]]`): as a
    /// document it has no `log`; as an entry's headers, between good entries, that entry alone fails.
    @Test func brokenHeadersFailTheirEntryOnly() throws {
        let bytes = try Corpora.bytes("\(Self.mitmproxy)/corrupted_har/broken_headers.json")
        #expect(
            Self.frame(bytes).map { if case .failure(let f) = $0 { "\(f.error.code)" } else { "record" } } == [
                "malformedRecord"
            ])

        let object = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        let headers = String(
            decoding: try JSONSerialization.data(withJSONObject: try #require(object["headers"])), as: UTF8.self)
        let document = HARText.document([HARText.entry(), HARText.entry(headers: headers), HARText.entry()])
        let items = Self.frame(HARText.bytes(document))
        #expect(items.count == 3)
        guard case .record = items[0], case .failure(let failure) = items[1], case .record = items[2] else {
            Issue.record("\(items.map(jsonFramedSummary))")
            return
        }
        #expect(failure.error.code == .malformedRecord)
        #expect(failure.error.message == "entry 1: response.headers[0] is not a [name, value] pair of strings")
        #expect(failure.url == "https://example.com/" && failure.status == 200)
    }

    /// The body is the base64-decoded bytes as they are, never inflated here: its gzip header says how it travelled.
    @Test func corruptedGzipBodyIsKeptAsRecorded() throws {
        let bytes = try Corpora.bytes("\(Self.mitmproxy)/flows/corrupted_gzip_body.har")
        let entry = try #require(try Self.entries(bytes).first)
        let content = try #require((entry["response"] as? [String: Any])?["content"] as? [String: Any])
        let text = try #require(content["text"] as? String)
        let expected = [UInt8](try #require(Data(base64Encoded: text)))
        let items = Self.frame(bytes)
        guard items.count == 1, case .record(let record) = items[0] else {
            Issue.record("\(items.map(jsonFramedSummary))")
            return
        }
        #expect(record.body == expected)
        #expect(record.body.starts(with: [0x1F, 0x8B]))
        #expect(record.contentDecoded)
        #expect(record.headers.last("Content-Encoding") == "gzip")
    }

    /// Schema errors outside the entries (a numeric version, a numeric creator version, a page date without a time
    /// zone) are not this reader's concern: the files frame without failures, and an entry put into them decodes
    /// without a warning.
    @Test func harValidatorFixtures() throws {
        let folder = "har/har-validator"
        let valid = try Corpora.bytes("\(folder)/valid.har")
        let validItems = Self.frame(valid)
        #expect(validItems.count == 1)
        guard case .record(let record) = validItems.first else {
            Issue.record("\(validItems.map(jsonFramedSummary))")
            return
        }
        #expect(record.status == 200 && record.warnings.isEmpty)

        let entry = try #require(try Self.entries(valid).first)
        let entryText = String(decoding: try JSONSerialization.data(withJSONObject: entry), as: UTF8.self)
        for name in ["invalid-version.har", "invalid-creator.har", "invalid-date.har"] {
            let bytes = try Corpora.bytes("\(folder)/\(name)")
            #expect(Self.frame(bytes).isEmpty, "\(name): no entries, nothing wrong in them")
            let text = String(decoding: bytes, as: UTF8.self)
            #expect(text.contains(#""entries": []"#))
            let filled = text.replacingOccurrences(of: #""entries": []"#, with: #""entries": ["# + entryText + "]")
            let items = Self.frame(HARText.bytes(filled))
            guard items.count == 1, case .record(let record) = items[0] else {
                Issue.record("\(name): \(items.map(jsonFramedSummary))")
                continue
            }
            #expect(record.status == 200 && record.warnings.isEmpty, "\(name)")
        }
    }
}
