import Foundation
import RespDecodeTestSupport
import Testing

@testable import RespDecode

/// The framer against the llhttp and http-parser response vectors in `../shared/corpora/http`.
@Suite("HTTP framing conformance", .enabled(if: Corpora.available, Corpora.skipComment))
struct HTTPConformanceTests {
    /// Where our framer departs from llhttp's strict response mode on purpose (docs/framings.md#raw-http), with the
    /// reason.
    static let llhttpDepartures: [String: (Departure, String)] = [
        "invalid--only-lfs-present.http": (.accepts, "docs/framings.md#raw-http bare LF line ends are accepted"),
        "invalid--only-lfs-present-and-no-body.http": (
            .accepts, "docs/framings.md#raw-http bare LF line ends are accepted"
        ),
        "sample--no-carriage-ret.http": (.accepts, "docs/framings.md#raw-http bare LF line ends are accepted"),
        "connection--http-1-1-with-keep-alive-disabled-and-204-status.http":
            (.framesOn, "captures concatenate connections: data after 'Connection: close' is framed like any input"),
        "connection--http-1-1-with-keep-alive-disabled-content-length.http":
            (.framesOn, "captures concatenate connections: data after 'Connection: close' is framed like any input"),
        "connection--http-101-response-with-upgrade-and-content-length-header.http":
            (.upgrade, "after 101 the bytes belong to another protocol: the 101 is a record, the rest one failure"),
        "connection--http-101-response-with-upgrade-and-transfer-encoding-header.http":
            (.upgrade, "after 101 the bytes belong to another protocol: the 101 is a record, the rest one failure"),
        "sample--rtsp-response.http": (.rejects, "only HTTP/1.x is framed; RTSP is not HTTP"),
        "sample--ice-response.http": (.rejects, "only HTTP/1.x is framed; ICE is not HTTP"),
        "sample--http-version-0-9.http": (.rejects, "only HTTP/1.x is framed"),
        "content-length--content-length-reset-when-no-body-is-received.http":
            (.rejects, "llhttp is told the request was HEAD (skipBody); a bare response stream cannot know that"),
    ]

    enum Departure { case accepts, framesOn, rejects, upgrade }

    // The corpus's JSON keys.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    struct Case: Decodable {
        var file: String
        var llhttp_mode: String
        var outcome: String
        var error_code: Int?
    }

    /// One message as llhttp's expected event log describes it.
    struct LoggedMessage {
        var status: Int
        var body: [UInt8]
        var complete = false
    }

    static func loggedMessages(_ log: String, input: [UInt8]) -> [LoggedMessage] {
        var messages: [LoggedMessage] = []
        for line in log.split(separator: "\n") {
            if line.contains("message begin") { messages.append(LoggedMessage(status: 0, body: [])) }
            if line.contains("message complete"), !messages.isEmpty { messages[messages.count - 1].complete = true }
            if let range = line.range(of: "headers complete status=") {
                let digits = line[range.upperBound...].prefix { $0.isNumber }
                messages[messages.count - 1].status = Int(digits) ?? 0
            }
            if line.contains("span[body]"), let off = field(line, "off="), let len = field(line, "len="),
                off + len <= input.count
            {
                messages[messages.count - 1].body += input[off..<off + len]
            }
        }
        return messages
    }

    private static func field(_ line: Substring, _ name: String) -> Int? {
        guard let range = line.range(of: name) else { return nil }
        return Int(line[range.upperBound...].prefix { $0.isNumber })
    }

    static func frameFile(_ bytes: [UInt8]) -> [FramedItem] {
        var framer = HTTPStreamFramer()
        return framer.frameAll(bytes)
    }

    @Test func llhttpResponseVectors() throws {
        let folder = "http/llhttp/cases"
        let index = try String(contentsOf: Corpora.url("\(folder)/index.jsonl"), encoding: .utf8)
        var failures: [String] = []
        var checked = 0
        for line in index.split(separator: "\n") {
            let testCase = try JSONDecoder().decode(Case.self, from: Data(line.utf8))
            let input = try Corpora.bytes(Corpora.url("\(folder)/\(testCase.file)"))
            let items = Self.frameFile(input)
            let records = items.compactMap { if case .record(let r) = $0 { r } else { nil } }
            let framingFailures = items.filter { if case .failure = $0 { true } else { false } }
            checked += 1

            // Implementation-defined: the vectors that need an llhttp leniency flag. Any answer without a crash.
            if testCase.llhttp_mode != "response" && testCase.llhttp_mode != "response-finish" { continue }

            let logText = try String(
                contentsOf: Corpora.url(
                    "\(folder)/\(testCase.file.replacingOccurrences(of: ".http", with: ".llhttp-log.txt"))"),
                encoding: .utf8)
            // Interim 1xx responses are folded into the next record; status 0 is a message whose head never completed.
            let logged = Self.loggedMessages(logText, input: input).filter {
                !(100..<200).contains($0.status) || $0.status == 101
            }
            // llhttp is not told where these inputs end, so a last message it never completed is, for us at a real
            // end of input, either a close-delimited record or a truncatedRecord.
            let expected = logged.filter(\.complete)
            let unfinished = logged.last.map { !$0.complete } ?? false
            let matchesCompleted =
                records.count >= expected.count
                && zip(records, expected).allSatisfy { $0.status == $1.status && $0.body == $1.body }
            let tail = items.dropFirst(expected.count)
            let tailIsEndOfInput: Bool
            switch tail.first {
            case nil: tailIsEndOfInput = true
            case .record(let r)?: tailIsEndOfInput = unfinished && tail.count == 1 && r.body == logged.last?.body
            case .failure(let f)?: tailIsEndOfInput = unfinished && tail.count == 1 && f.error.code == .truncatedRecord
            }

            switch Self.llhttpDepartures[testCase.file]?.0 {
            case .rejects:
                if framingFailures.isEmpty {
                    failures.append("\(testCase.file): expected a failure, got \(items.map(describe))")
                }
            case .upgrade:
                if records.first?.status != 101 || framingFailures.count != 1 {
                    failures.append(
                        "\(testCase.file): expected a 101 record then one failure, got \(items.map(describe))")
                }
            case .accepts:
                // llhttp stopped early, so its log cannot say more: one record per message it began, no failure.
                if !framingFailures.isEmpty || records.count != logged.count {
                    failures.append("\(testCase.file): expected to accept, got \(items.map(describe))")
                }
            case .framesOn:
                if !matchesCompleted {
                    failures.append("\(testCase.file): first message differs: \(items.map(describe))")
                }
            case nil:
                if testCase.outcome == "error" {
                    if framingFailures.isEmpty {
                        failures.append("\(testCase.file): llhttp rejects, we gave \(items.map(describe))")
                    }
                } else if !matchesCompleted || !tailIsEndOfInput {
                    failures.append(
                        "\(testCase.file): expected \(logged.map { "\($0.status) \($0.body.count)B" }), "
                            + "got \(items.map(describe))")
                }
            }
        }
        #expect(checked == 74)
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    // The corpus's JSON keys.
    // swift-format-ignore: AlwaysUseLowerCamelCase
    struct ParserCase: Decodable {
        var file: String
        var status_code: Int
        var headers: [[String]]
        var expected_body_file: String
    }

    /// Where our framer departs from http-parser's (older, more lenient) verdicts, with the reason.
    static let httpParserDepartures: [String: String] = [
        "04-200-trailing-space-on-chunked-body.http": "white space after a chunk size is rejected, as llhttp does now",
        "11-http-version-0-9.http": "only HTTP/1.x is framed",
        "19-field-space.http": "white space inside a field name is rejected (RFC 9112 §5.1), as llhttp does",
    ]

    /// http-parser reads a Content-Length or chunked body after a 101; RFC 9112 §6.3 says no 1xx response has one:
    /// we give the 101 with no body, and the bytes after it (another protocol's) as one failure.
    static let switchingProtocolsWithBody: Set<String> = [
        "24-http-101-response-with-upgrade-and-content-length-header.http",
        "25-http-101-response-with-upgrade-and-transfer-encoding-header.http",
    ]

    @Test func httpParserResponses() throws {
        let folder = "http/http-parser/responses"
        let index = try String(contentsOf: Corpora.url("\(folder)/index.jsonl"), encoding: .utf8)
        var failures: [String] = []
        for line in index.split(separator: "\n") {
            let testCase = try JSONDecoder().decode(ParserCase.self, from: Data(line.utf8))
            let items = Self.frameFile(try Corpora.bytes(Corpora.url("\(folder)/\(testCase.file)")))
            if Self.httpParserDepartures[testCase.file] != nil {
                if !items.contains(where: { if case .failure = $0 { true } else { false } }) {
                    failures.append("\(testCase.file): expected a failure, got \(items.map(describe))")
                }
                continue
            }
            guard case .record(let record) = items.first else {
                failures.append("\(testCase.file): no record: \(items.map(describe))")
                continue
            }
            let body =
                Self.switchingProtocolsWithBody.contains(testCase.file)
                ? [] : try Corpora.bytes(Corpora.url("\(folder)/\(testCase.expected_body_file)"))
            let headers = record.headers.fields.map { [$0.name, $0.value] }
            let expectedHeaders = testCase.headers.map { [$0[0], String($0[1].trimmingOWS())] }
            if record.status != testCase.status_code || record.body != body || headers != expectedHeaders {
                failures.append("\(testCase.file): got \(describe(.record(record))) headers \(headers)")
            }
            // A 101 ends HTTP on the connection: bytes after it are reported as one failure, nothing else.
            let rest = items.dropFirst()
            if testCase.status_code == 101 ? rest.count > 1 : !rest.isEmpty {
                failures.append("\(testCase.file): unexpected items after the response: \(rest.map(describe))")
            }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }

    @Test func httpParserInvalidResponsesAreRejected() throws {
        let files = try Corpora.files(in: "http/http-parser/invalid", suffix: ".http")
        #expect(files.count == 13)
        for file in files where file.lastPathComponent.hasPrefix("n_") {
            let items = Self.frameFile(try Corpora.bytes(file))
            let rejected = items.contains { if case .failure = $0 { true } else { false } }
            #expect(rejected, "\(file.lastPathComponent): \(items.map(describe))")
        }
    }
}
