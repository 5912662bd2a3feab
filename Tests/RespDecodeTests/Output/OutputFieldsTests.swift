import Foundation
import Testing

@testable import RespDecode

/// `--fields` (docs/output.md#choosing-the-keys): a line keeps exactly the keys asked for, with the values the whole
/// line has, in the same order, and stays one JSON object.
@Suite("Output fields")
struct OutputFieldsTests {
    /// A record whose line has every key but `body` (it has a value) and `sniffed`.
    static var fullRecord: ResponseRecord {
        var headers = HeaderFields()
        headers.append(name: "Content-Type", value: "application/json")
        headers.append(name: "Content-Encoding", value: "gzip")
        var record = ResponseRecord(
            offset: 120, length: 77, status: 404, headers: headers,
            body: WARCFixtures.gzipMember(Array(#"{"a":[1,null]}"#.utf8)))
        record.url = "https://example.com/a"
        record.method = "GET"
        record.id = "r-1"
        record.arc = ARCRecordInfo(ip: "192.0.2.1", date: "20260101000000")
        var warc = WARCRecordInfo(
            type: "revisit", recordId: "<urn:uuid:1>", date: "2026-01-01T00:00:00Z", truncated: "length",
            digest: .ok)
        warc.payloadDigest = "sha1:AAAA"
        warc.refersTo = WARCRefersTo(recordId: "<urn:uuid:0>", targetURI: "https://example.com/a", date: "2025")
        warc.revisitOf = RecordOrigin(seq: 1, input: "x.warc", offset: 9)
        record.warc = warc
        record.trailers = HeaderFields([("X-T", "1")])
        record.warnings = ["a warning"]
        return record
    }

    /// A record that fails to decode, sniffed: `sniffed`, `error` and `body`.
    static var failingRecord: ResponseRecord {
        ResponseRecord(offset: 5, status: 200, body: Array(#"{"a":1,}"#.utf8), url: "https://example.com/b")
    }

    static func line(_ item: FramedItem, fields: OutputFields = .all, pretty: Bool = false) -> String {
        var settings = CompoundDecoder.Settings()
        settings.sniff = true
        settings.fields = fields
        let out = OutputBuffer()
        CompoundDecoder(settings: settings).writeLine(
            for: item, source: .init(seq: 3, offset: 120, length: 77, input: "in.warc"), into: out)
        return String(decoding: out.array, as: UTF8.self)
    }

    /// The keys of a line in the order written, and its object.
    static func parse(_ line: String) throws -> (keys: [String], object: NSDictionary) {
        #expect(line.hasSuffix("}\n"))
        #expect(line.filter { $0 == "\n" }.count == 1)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? NSDictionary)
        // Top-level keys in order: each `"key":` at depth 1.
        var keys: [String] = []
        var depth = 0
        var inString = false
        var escaped = false
        var current = ""
        var afterString = ""
        for character in line {
            if inString {
                if escaped {
                    escaped = false
                    current.append(character)
                } else if character == "\\" {
                    escaped = true
                } else if character == "\"" {
                    inString = false
                    afterString = current
                } else {
                    current.append(character)
                }
                continue
            }
            switch character {
            case "\"":
                inString = true
                current = ""
            case "{", "[": depth += 1
            case "}", "]": depth -= 1
            case ":": if depth == 1 { keys.append(afterString) }
            default: break
            }
        }
        return (keys, object)
    }

    @Test func theTwoRecordsBetweenThemHaveEveryKey() throws {
        let full = try Self.parse(Self.line(.record(Self.fullRecord)))
        let failing = try Self.parse(Self.line(.record(Self.failingRecord)))
        #expect(Set(full.keys).union(failing.keys) == Set(OutputFields.names))
        // The documented order (docs/output.md#the-result-line) is OutputFields.names' order.
        #expect(full.keys == OutputFields.names.filter(full.keys.contains))
        #expect(failing.keys == OutputFields.names.filter(failing.keys.contains))
    }

    /// Every key alone, then every key left out: exactly those keys, with the whole line's values.
    @Test(arguments: OutputFields.names)
    func everyKeyAloneAndEveryKeyLeftOut(_ name: String) throws {
        for record in [Self.fullRecord, Self.failingRecord] {
            let full = try Self.parse(Self.line(.record(record)))
            let alone = try Self.parse(Self.line(.record(record), fields: try OutputFields.parsing(name).get()))
            #expect(alone.keys == full.keys.filter { $0 == name })
            #expect(alone.object[name] as? NSObject == full.object[name] as? NSObject)
            let others = OutputFields.names.filter { $0 != name }.joined(separator: ",")
            let without = try Self.parse(Self.line(.record(record), fields: try OutputFields.parsing(others).get()))
            #expect(without.keys == full.keys.filter { $0 != name })
            let expected = full.object.mutableCopy() as! NSMutableDictionary
            expected.removeObject(forKey: name)
            #expect(without.object == expected)
        }
    }

    @Test func allNamedIsTheWholeLine() throws {
        let all = try OutputFields.parsing(OutputFields.names.joined(separator: ",")).get()
        #expect(all == .all)
        #expect(Self.line(.record(Self.fullRecord), fields: all) == Self.line(.record(Self.fullRecord)))
    }

    @Test func aFramingFailureKeepsItsErrorWhenAsked() throws {
        let failure = FramingFailure(
            offset: 7, error: RecordError(.truncatedRecord, "input ended"), status: 200,
            headers: HeaderFields([("Content-Type", "text/plain")]), excerpt: Array("ab".utf8), bytes: 30)
        #expect(
            Self.line(.failure(failure), fields: try OutputFields.parsing("seq,ok,error").get())
                == #"{"seq":3,"ok":false,"error":{"code":"truncatedRecord","message":"input ended"}}"# + "\n")
        #expect(
            Self.line(.failure(failure), fields: try OutputFields.parsing("status,body").get())
                == #"{"status":200,"body":{"bytes":30,"base64":"YWI=","truncated":true}}"# + "\n")
        // Nothing asked for that the line has: still one JSON object.
        #expect(Self.line(.failure(failure), fields: try OutputFields.parsing("url").get()) == "{}\n")
    }

    /// Without `value`, the decoder still runs: `ok` and `error` say what it found.
    @Test func okAndErrorWithoutTheValue() throws {
        let fields = try OutputFields.parsing("ok,error").get()
        #expect(
            Self.line(.record(Self.failingRecord), fields: fields).hasPrefix(
                #"{"ok":false,"error":{"code":"invalidJSON""#))
        #expect(
            Self.line(.record(Self.fullRecord), fields: fields).hasPrefix(
                #"{"ok":false,"error":{"code":"unacceptableStatusCode""#))
    }

    /// No key that needs decoding: the line is written from the record as framed; a broken gzip body is not even
    /// inflated, and the outcome says the record was not decoded.
    @Test func keysThatNeedNoDecodingDecodeNothing() throws {
        var settings = CompoundDecoder.Settings()
        settings.fields = try OutputFields.parsing("url,status,contentType,contentEncoding,bodyBytes,trailers").get()
        var record = Self.failingRecord
        record.headers = HeaderFields([("Content-Type", "application/json"), ("Content-Encoding", "gzip")])
        record.trailers = HeaderFields([("X-T", "1")])
        let out = OutputBuffer()
        let outcome = CompoundDecoder(settings: settings).writeLine(
            for: .record(record), source: .init(seq: 0, offset: 5, input: nil), into: out)
        #expect(
            String(decoding: out.array, as: UTF8.self)
                == #"{"url":"https://example.com/b","status":200,"contentType":"application/json","#
                + #""contentEncoding":["gzip"],"bodyBytes":8,"trailers":{"X-T":"1"}}"# + "\n")
        #expect(!outcome.decoded)
        #expect(outcome.errorCode == nil)
        // With --sniff, contentType needs the decoded body: the record is decoded.
        settings.sniff = true
        let sniffed = CompoundDecoder(settings: settings).writeLine(
            for: .record(record), source: .init(seq: 0, offset: 5, input: nil), into: OutputBuffer())
        #expect(sniffed.decoded)
        #expect(sniffed.errorCode != nil)
    }

    @Test func unknownKeysAreRefusedListingTheKnownOnes() {
        for bad in ["", ",", "seq,Status", "value.x", "skipped"] {
            switch OutputFields.parsing(bad) {
            case .success: Issue.record("\(bad) was taken")
            case .failure(let error):
                if !bad.isEmpty && bad != "," {
                    #expect(error.description.contains(OutputFields.names.joined(separator: ",")))
                }
            }
        }
        #expect((try? OutputFields.parsing(" url , status ").get()) == [.url, .status])
    }
}
